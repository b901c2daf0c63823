"""Secret detection and masking: recall and precision on the corpus, then each behaviour alone."""

from __future__ import annotations

import copy
import io
import itertools
import logging
import time
from collections import namedtuple

import pytest

from memory_service.core.redaction.secrets import (
    MASK,
    Finding,
    contains_secret,
    find_secrets,
    redact_text,
    redact_value,
)
from memory_service.logs import OneLineFormatter, RedactingFilter, configure_logging
from tests.data import secrets_corpus
from tests.data.secrets_corpus import LOOKALIKES, SECRETS, keeps_context

GH_TOKEN = "ghp_" + "Zq8xW2vL0pK4rT6yB1nM3cD5fG7hJ9sA2eU4"  # the right shape, not a real token


# ---------------------------------------------------------------- the corpus


def test_corpus_is_large_varied_and_deterministic() -> None:
    assert len(SECRETS) >= 60
    assert len({p.kind for p in SECRETS}) >= 10
    assert len(LOOKALIKES) >= 60
    assert all(p.secret in p.text for p in SECRETS)
    assert secrets_corpus._build_secrets() == SECRETS
    assert secrets_corpus._build_lookalikes() == LOOKALIKES


def test_recall_on_planted_secrets() -> None:
    missed = [p for p in SECRETS if p.secret in redact_text(p.text)[0]]
    recall = 1 - len(missed) / len(SECRETS)
    assert recall >= 0.95, [(p.kind, p.text) for p in missed]


def test_precision_on_look_alikes_and_context() -> None:
    changed = [text for text in LOOKALIKES if redact_text(text)[0] != text]
    damaged = [p for p in SECRETS if not keeps_context(p, redact_text(p.text)[0])]
    precision = 1 - (len(changed) + len(damaged)) / (len(LOOKALIKES) + len(SECRETS))
    assert precision >= 0.95, (changed, [p.text for p in damaged])


def test_masking_twice_changes_nothing() -> None:
    for text in [p.text for p in SECRETS] + LOOKALIKES:
        once = redact_text(text)[0]
        assert redact_text(once) == (once, []), text


# ---------------------------------------------------------------- each kind

KINDS = [  # (kind, secret, its context): hand-written, apart from the corpus
    ("aws_access_key", "AKIA2E4G6J8L2N4P6R7T", "id {} in use"),
    ("aws_secret_key", "Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7jKl0n", "aws_secret_access_key={}"),
    ("github_token", GH_TOKEN, "push with {} now"),
    ("github_token", "github_pat_11ABCDEFG0123456789abc_x9Y8z7W6v5U4", "pat {} ok"),
    ("gitlab_token", "glpat-aB3dE5gH7jK9mN1pQ3sT", "token {} ok"),
    ("slack_token", "xoxb-2222222222-3333333333333-aBcDeF1234567890gHiJkL12", "bot {}"),
    ("slack_webhook", "T0AB1CD2E/B0FG3HI4J5/aB1cD2eF3gH4iJ5kL6mN7oP8", "https://hooks.slack.com/services/{}"),
    ("stripe_key", "rk_live_4eC39HqLyjWDarjtT1zdp7dc", "key {} set"),
    ("google_api_key", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "maps {} end"),
    ("openai_key", "sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0", "k {} x"),
    ("anthropic_key", "sk-ant-api03-a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6-q7R8AA", "k {} x"),
    ("npm_token", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "{} in .npmrc"),
    ("sendgrid_key", "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", "mail {}"),
    ("twilio_key", "SK0123456789abcdef0123456789abcdef", "sid {} ok"),
    ("huggingface_token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "{}"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ", "t={}"),
    ("private_key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA\n-----END EC PRIVATE KEY-----", "a\n{}\nb"),
    ("url_password", "Gu3st-pass", "amqp://guest:{}@rabbit:5672/"),
    ("env_secret", "changeme", "JWT_SECRET={}"),
    ("bearer_token", "a1b2c3d4e5f6g7h8i9j0", "Authorization: Bearer {}"),
    ("basic_auth", "YWRtaW46aHVudGVyMg==", "Authorization: Basic {}"),
]


@pytest.mark.parametrize(
    ("kind", "secret", "context"), KINDS, ids=[f"{k}-{i}" for i, (k, *_) in enumerate(KINDS)]
)
def test_each_kind_is_found_with_its_exact_span(kind: str, secret: str, context: str) -> None:
    text = context.format(secret)
    start = text.index(secret)
    assert find_secrets(text) == [Finding(kind, start, start + len(secret))]
    masked, kinds = redact_text(text)
    assert masked == text.replace(secret, MASK.format(kind=kind))
    assert kinds == [kind]
    assert contains_secret(text)


# ---------------------------------------------------------------- only the secret part is masked


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://user:s3cr3t-pw@db:5432/x", "postgres://user:[REDACTED:url_password]@db:5432/x"),
        ("redis://:p4ss@w0rd@cache:6379/0", "redis://:[REDACTED:url_password]@cache:6379/0"),
        ("DB_PASSWORD=hunter22", "DB_PASSWORD=[REDACTED:env_secret]"),
        ('password: "Tr0ub4dor&3"', 'password: "[REDACTED:env_secret]"'),
        ('{"api_key": "a1b2c3d4e5f6a7b8"}', '{"api_key": "[REDACTED:env_secret]"}'),
        ("export TOKEN=t0k3n-a1b2c3d4", "export TOKEN=[REDACTED:env_secret]"),
        ("api_key: str = 'a1b2c3d4e5f6a7b8'", "api_key: str = '[REDACTED:env_secret]'"),
        ("Server=db;Password=Str0ng!;Encrypt=true", "Server=db;Password=[REDACTED:env_secret];Encrypt=true"),
        ("GET /cb?access_token=a1b2c3d4e5f6&page=2", "GET /cb?access_token=[REDACTED:env_secret]&page=2"),
        ("<password>hunter22</password>", "<password>[REDACTED:env_secret]</password>"),
        ("tool --password 'hunter 22' --verbose", "tool --password '[REDACTED:env_secret]' --verbose"),
        ("Authorization: Bearer a1b2c3d4e5f6g7h8i9j0", "Authorization: Bearer [REDACTED:bearer_token]"),
        ("curl -u admin:S3cret! https://x", "curl -u admin:[REDACTED:basic_auth] https://x"),
    ],
)
def test_only_the_secret_part_is_masked(text: str, expected: str) -> None:
    assert redact_text(text)[0] == expected


# ---------------------------------------------------------------- not secrets


@pytest.mark.parametrize(
    "text",
    [
        "550e8400-e29b-41d4-a716-446655440000",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "d41d8cd98f00b204e9800998ecf8427e",
        'DATA = "aGVsbG8gd29ybGQsIHRoaXMgaXMgdGVzdCBkYXRh"',
        "AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "password=<your-password>",
        "DB_PASSWORD=${DB_PASSWORD}",
        "TOKEN=$TOKEN",
        'password: "***"',
        "api_key: xxx",
        "token: '{{ token }}'",
        'password = "%s"',
        "password=",
        "password: None",
        "token: null",
        'password = ""',
        "password = get_password()",
        'token = request.headers["x"]',
        "def verify_token(token: str) -> bool:",
        "password_hash = hash(pw)",
        "TOKEN_EXPIRY_SECONDS = 3600",
        "https://user@host/repo.git",
        "tokens start with ghp_ and 36 characters",
        "PWD=/home/dana",
        "max_tokens: 4096",
        "password: SecretStr = Field(...)",
        "connect(user=user, password=password)",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []
    assert redact_text(text) == (text, [])
    assert not contains_secret(text)


def test_find_secrets_is_sorted_and_non_overlapping() -> None:
    text = "\n".join(p.text for p in SECRETS)
    findings = find_secrets(text)
    assert len(findings) >= len(SECRETS)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))


# ---------------------------------------------------------------- redact_value


def test_redact_value_masks_keys_values_and_lists_without_mutating() -> None:
    Pair = namedtuple("Pair", "name value")
    value = {
        "note": f"use {GH_TOKEN}",
        GH_TOKEN: 1,
        "nested": {"items": ["plain", "DB_PASSWORD=hunter22", 3, None], "tuple": ("AKIA2E4G6J8L2N4P6R7T",)},
        "pair": Pair("x", f"t {GH_TOKEN}"),
        "tags": {"plain"},
        "n": 1.5,
    }
    before = copy.deepcopy(value)
    masked, kinds = redact_value(value)
    assert value == before
    assert masked == {
        "note": "use [REDACTED:github_token]",
        "[REDACTED:github_token]": 1,
        "nested": {
            "items": ["plain", "DB_PASSWORD=[REDACTED:env_secret]", 3, None],
            "tuple": ("[REDACTED:aws_access_key]",),
        },
        "pair": Pair("x", "t [REDACTED:github_token]"),
        "tags": {"plain"},
        "n": 1.5,
    }
    assert kinds == ["github_token", "github_token", "env_secret", "aws_access_key", "github_token"]
    assert masked is not value and masked["nested"] is not value["nested"]


def test_redact_value_keeps_two_keys_that_mask_alike() -> None:
    other = "ghp_" + "Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0Kk1Ll2"
    masked, kinds = redact_value({GH_TOKEN: 1, other: 2})
    assert masked == {"[REDACTED:github_token]": 1, "[REDACTED:github_token] (2)": 2}
    assert kinds == ["github_token", "github_token"]


def test_empty_and_none_are_safe() -> None:
    assert find_secrets("") == []
    assert redact_text("") == ("", [])
    assert not contains_secret("")
    assert redact_value(None) == (None, [])
    assert redact_value({}) == ({}, [])
    assert redact_value(b"DB_PASSWORD=hunter22") == (b"DB_PASSWORD=hunter22", [])


@pytest.mark.parametrize(
    "text",
    [
        "\ud800 DB_PASSWORD=hunter22 \udfff",
        "\x00\x1b[31mDB_PASSWORD=hunter22\x1b[0m\x07",
        "İİİ DB_PASSWORD=hunter22",  # lower-cases to a longer string: the case-insensitive fallback
        "ﬃ" * 50 + f" {GH_TOKEN}",
    ],
)
def test_odd_characters_do_not_crash(text: str) -> None:
    masked, kinds = redact_text(text)
    assert "hunter22" not in masked and GH_TOKEN not in masked
    assert len(kinds) == 1


@pytest.mark.parametrize(
    "unit",
    [
        "-",
        "eyJ",
        "token_",
        "password=",
        'pw="',
        "curl ",
        "sk-",
        "xoxb-1-",
        "-----BEGIN PRIVATE KEY-----",
        "a://b:",
    ],
)
def test_adversarial_repetition_stays_linear(unit: str) -> None:
    """A hang guard, not a speed test (bench/redaction.py measures speed): with a quadratic pattern
    each of these took from seconds to minutes; linear ones take milliseconds."""
    text = unit * (50_000 // len(unit))
    started = time.perf_counter()
    find_secrets(text)
    assert time.perf_counter() - started < 10.0


# ---------------------------------------------------------------- logging


def _logger_with_filter() -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter())
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("tests.redaction")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, stream


def test_logging_filter_masks_message_and_traceback() -> None:
    logger, stream = _logger_with_filter()
    logger.info("pushing with %s to %s", GH_TOKEN, "origin")
    try:
        raise RuntimeError("connect failed: postgres://app:s3cr3t-pw@db/x")
    except RuntimeError:
        logger.exception("sync failed")
    out = stream.getvalue()
    assert GH_TOKEN not in out and "s3cr3t-pw" not in out
    assert "pushing with [REDACTED:github_token] to origin" in out
    assert "postgres://app:[REDACTED:url_password]@db/x" in out


def test_logging_filter_leaves_clean_records_lazy_and_survives_bad_formats() -> None:
    logger, _ = _logger_with_filter()
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 1, "%d items", (3,), None)
    assert RedactingFilter().filter(record)
    assert record.args == (3,)
    bad = logger.makeRecord(logger.name, logging.INFO, __file__, 1, "%d items", ("x",), None)
    assert RedactingFilter().filter(bad)


def test_configure_logging_installs_the_filter() -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        configure_logging("INFO")
        assert any(isinstance(f, RedactingFilter) for h in root.handlers for f in h.filters)
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)


def test_ids_and_hashes_the_service_makes_are_skipped_as_a_scan_would_find_nothing_in_them() -> None:
    """find_secrets skips whole strings shaped like record ids and content hashes: a full scan
    finds nothing in random ones either (a detector that would is caught here), and the same
    shapes inside a longer text, or next to a secret, are scanned as any text."""
    import hashlib
    import os
    import random
    import uuid

    from memory_service.core.redaction.secrets import _scan

    rng = random.Random(16)
    shapes = []
    for _ in range(3000):
        shapes.append(str(uuid.UUID(int=rng.getrandbits(128), version=4)))
        digest = hashlib.sha256(rng.randbytes(16)).hexdigest()
        shapes += [digest, f"sha256:{digest}"]
    shapes.append(str(uuid.uuid4()))
    shapes.append(hashlib.sha256(os.urandom(8)).hexdigest())
    assert [s for s in shapes if _scan(s)] == []
    assert all(find_secrets(s) == [] for s in shapes)
    token = "ghp_" + "a1B2" * 9
    assert find_secrets(f"{shapes[0]} {token}") and find_secrets(f"token={shapes[1]}") == _scan(
        f"token={shapes[1]}"
    )


def test_the_needle_pre_check_changes_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector runs only on texts holding one of its needles (redaction._active). Every match
    any detector makes on the corpora holds one of its needles, and a scan without the pre-check
    finds exactly what the scan with it finds, in every casing of the texts."""
    from memory_service.core.redaction import secrets as redaction

    texts = [p.text for p in SECRETS] + LOOKALIKES + [context.format(secret) for _, secret, context in KINDS]
    texts += [
        "tool --password 'hunter 22' --verbose",
        "curl -u admin:S3cret! https://x",
        '<add key="ApiKey" value="a1b2c3d4e5f6a7b8"/>',
        "machine api.example.org login dana password hunter22",
        "Server=db;Password=Str0ng!;Encrypt=true",
    ]
    texts += [t.upper() for t in texts] + [t.lower() for t in texts] + [t.title() for t in texts]
    assert all(detector.needles for detector in redaction._ALL), "a detector without needles"
    for detector in redaction._ALL:
        for text in texts:
            haystack = text.lower() if detector.folded is not None else text
            for match in detector.regex.finditer(haystack):
                assert any(needle in match.group() for needle in detector.needles), (detector, text)
    with_check = [redaction._scan(text) for text in texts]
    monkeypatch.setattr(redaction, "_active", lambda lowered: None)
    assert [redaction._scan(text) for text in texts] == with_check
    assert sum(map(len, with_check)) > len(SECRETS)  # the texts hold secrets for the scan to find
