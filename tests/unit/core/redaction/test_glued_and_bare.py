"""Secrets without a telling key name (issue #30): an AWS access key glued to a name, a bare AWS
secret key, payment card numbers and US social security numbers; and the shapes that must stay."""

from __future__ import annotations

import base64
import hashlib
import random
import string
import uuid

import pytest

from memory_service.core.redaction.secrets import find_secrets, redact_text
from tests.data.secrets_corpus import RANDOM_LOOKALIKES, SECRETS

KEY_ID = "AKIAZ7Q2W4E6R8T0Y2U4"
BARE = "wJ8k2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4Ij"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"open /srv/credentials-{KEY_ID}.json: no such file",
            "/srv/credentials-[REDACTED:aws_access_key].json",
        ),
        (f"key_{KEY_ID}_old.csv", "key_[REDACTED:aws_access_key]_old.csv"),
        (f"dump-{KEY_ID}", "dump-[REDACTED:aws_access_key]"),
        (f"creds{KEY_ID}", "creds[REDACTED:aws_access_key]"),
        (f"the new key is {BARE}, the old one is gone", "the new key is [REDACTED:aws_secret_key], the"),
        (BARE, "[REDACTED:aws_secret_key]"),
        ("Paid with 4111 1111 1111 1111 in the sandbox", "Paid with [REDACTED:card_number] in"),
        ("card 5500-0000-0000-0004.", "card [REDACTED:card_number]."),
        ("amex 3782 822463 10005 declined", "amex [REDACTED:card_number] declined"),
        ("pan=4012888888881881", "pan=[REDACTED:card_number]"),
        ("Employee SSN 078-05-1120 on the old form", "Employee SSN [REDACTED:us_ssn] on"),
        ("SSN: 219099999", "SSN: [REDACTED:us_ssn]"),
        ("social security number 219 09 9999", "social security number [REDACTED:us_ssn]"),
    ],
)
def test_secrets_without_a_key_name_are_masked(text: str, expected: str) -> None:
    assert expected in redact_text(text)[0]


@pytest.mark.parametrize(
    "text",
    [
        "AKIAZ7Q2W4E6R8T0Y2U4X is longer than a key id",  # 17 characters after AKIA
        "XAKIAZ7Q2W4E6R8T0Y2U4 inside an upper-case word",
        "commit 3f2a9c1e8b7d6f5a4e3c2b1a0f9e8d7c6b5a4e3c",
        "SHA1 3F2A9C1E8B7D6F5A4E3C2B1A0F9E8D7C6B5A4E3C",
        "/Users/DanaReyes/Projects/Api2/src/main/Java1",  # a path of 40 characters
        "ThisIsAVeryLongJavaClassNameWithWords12x",  # a camelCase name of 40
        "payload aGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Qgb2Yg",  # base64 of text, 40 characters
        "4111 1111 1111 1112 fails the Luhn check",
        "order 4111-1111 1111-1111 mixes separators",
        "id 411111111111111111 has 18 digits",
        "ts 1736951112345 and snowflake 1181934563254296576",
        "000-12-3456 666-12-3456 912-12-3456 123-00-4567 123-45-0000",  # no such SSN
        "ISBN 978-0-306-40615-7, ZIP 94105-1234, 2026-11-23",
        "v1.078-05-1120 and 078-05-1120-7",  # inside a longer dotted or dashed number
    ],
)
def test_look_alikes_of_the_new_kinds_are_left_alone(text: str) -> None:
    assert redact_text(text) == (text, [])


def test_the_last_line_of_a_base64_block_is_not_a_bare_key() -> None:
    rng = random.Random(5)
    body = base64.b64encode(rng.randbytes(78)).decode()  # 104 characters: 64 + 40
    pem = "\n".join(["-----BEGIN CERTIFICATE-----", body[:64], body[64:], "-----END CERTIFICATE-----"])
    assert len(body[64:]) == 40
    assert redact_text(pem) == (pem, [])
    escaped = pem.replace("\n", "\\n")  # as a JSON string carries it
    assert redact_text(escaped) == (escaped, [])


def test_random_aws_secret_keys_are_found_bare() -> None:
    """Seeded random keys, none seen while writing the rule: at most 1 in 100 slips through."""
    rng = random.Random(30)
    alphabet = string.ascii_letters + string.digits + "/+"
    keys = ["".join(rng.choice(alphabet) for _ in range(40)) for _ in range(2000)]
    missed = [k for k in keys if k in redact_text(f"rotated: {k} (ci user)")[0]]
    assert len(missed) / len(keys) <= 0.01, missed[:5]


def test_random_look_alikes_find_nothing() -> None:
    """Hashes, base64 of text and of digests, UUIDs, paths, names, timestamps, ids and versions
    drawn at random (tests/data/secrets_corpus.py) and a fresh set drawn here."""
    rng = random.Random(31)
    fresh = []
    for _ in range(500):
        raw = rng.randbytes(30)
        fresh += [
            hashlib.sha1(raw).hexdigest(),
            hashlib.sha1(raw).hexdigest().upper(),
            str(uuid.UUID(int=rng.getrandbits(128))),
            base64.b64encode(raw.hex().encode()[:30]).decode(),  # base64 of 30 characters of text
            str(rng.randint(10**12, 10**13)),
        ]
    assert [t for t in RANDOM_LOOKALIKES + fresh if find_secrets(t)] == []


def test_the_planted_corpus_holds_the_new_kinds() -> None:
    kinds = {p.kind for p in SECRETS}
    assert {"card_number", "us_ssn", "aws_secret_key"} <= kinds
    assert any("credentials-AKIA" in p.text or "-AKIA" in p.text for p in SECRETS)
    assert len(RANDOM_LOOKALIKES) >= 500
