"""PII-safe previews (seed 003, issue #30): personal data is masked in previews, the stored text
keeps what is only personal in a preview (phone numbers, IP addresses, dates of birth, street
addresses), and the look-alikes come back as they were."""

from __future__ import annotations

import itertools

import pytest

from memory_service.core.redaction import sanitize
from memory_service.core.redaction.pii import find_pii, mask_pii
from memory_service.core.redaction.sanitize import preview, scrub_text
from tests.data.pii_corpus import LOOKALIKES, PLANTED


def test_the_corpus_is_varied_and_deterministic() -> None:
    from tests.data import pii_corpus

    assert pii_corpus._build_planted() == PLANTED and pii_corpus._build_lookalikes() == LOOKALIKES
    assert {p.kind for p in PLANTED} >= {"phone_number", "ip_address", "date_of_birth", "street_address"}
    assert all(p.secret in p.text for p in PLANTED)


@pytest.mark.parametrize("planted", PLANTED, ids=lambda p: p.kind)
def test_previews_mask_planted_personal_data(planted: object) -> None:
    text, secret = planted.text, planted.secret  # type: ignore[attr-defined]
    assert secret not in preview(text, 100_000)


def test_previews_leave_look_alikes_nearly_all_alone() -> None:
    changed = [t for t in LOOKALIKES if preview(t, 100_000) != " ".join(t.split())]
    assert len(changed) <= 1, changed  # "section 4 Main Street Style Guide" reads as an address


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Call (415) 555-0132 today", "Call [REDACTED:phone_number] today"),
        ("on-call +44 20 7946 0958.", "on-call [REDACTED:phone_number]."),
        ("ring +14155550100", "ring [REDACTED:phone_number]"),
        ("415.555.0100 or 415-555-0100", "[REDACTED:phone_number] or [REDACTED:phone_number]"),
        ("phone: 0171 1234567", "phone: [REDACTED:phone_number]"),
        ("db at 10.0.0.5:5432", "db at [REDACTED:ip_address]:5432"),
        ("from 2001:db8::8a2e:370:7334 again", "from [REDACTED:ip_address] again"),
        ("DOB: 14.03.1985", "DOB: [REDACTED:date_of_birth]"),
        ("born on March 14, 1985 in Ohio", "born on [REDACTED:date_of_birth] in Ohio"),
        ("date of birth 3/14/85", "date of birth [REDACTED:date_of_birth]"),
        ("to 221B Baker Street, London", "to [REDACTED:street_address], London"),
        ("at 1600 Pennsylvania Ave NW.", "at [REDACTED:street_address]."),
        ("mail dana.reyes@example.com", "mail d***@example.com"),
    ],
)
def test_each_kind_is_masked_with_its_span(text: str, expected: str) -> None:
    assert mask_pii(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "version 2.31.0.4 and v10.0.0.1",
        "bind 0.0.0.0 or 127.0.0.1, netmask 255.255.255.0, ::1",
        "released 2026-11-23, meeting 03/14/2026",
        "retry at 10:02:11, std::vector, a::b",
        "call 555-0100 (seven digits, no area code)",
        "invoice 2026-000417, $1,234.56, 16 GB",
        "Step 2 Open Settings",
        "port 8080 and 1736951112345 ms",
    ],
)
def test_pii_look_alikes_are_left_alone(text: str) -> None:
    assert find_pii(text) == [] and mask_pii(text) == text


def test_pii_findings_do_not_overlap_and_masks_are_not_masked_again() -> None:
    text = "Dana, +1 (415) 555-0132, 12 Elm Street, 10.1.2.3, DOB 1985-03-14"
    findings = find_pii(text)
    assert [f.kind for f in findings] == ["phone_number", "street_address", "ip_address", "date_of_birth"]
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
    once = mask_pii(text)
    assert mask_pii(once) == once


def test_a_preview_masks_secrets_and_personal_data_then_cuts() -> None:
    text = "Card 4111 1111 1111 1111, SSN 078-05-1120, call (415) 555-0132. " + "x" * 300
    out = preview(text)
    assert len(out) == sanitize.PREVIEW_CHARS and out.endswith("…")
    assert "[REDACTED:card_number]" in out and "[REDACTED:us_ssn]" in out
    assert "[REDACTED:phone_number]" in out and "555-0132" not in out


def test_stored_text_keeps_preview_only_kinds_and_loses_cards_ssns_and_bare_keys() -> None:
    """The decision in docs/governance.md: what the write path stores."""
    text = (
        "server 10.0.0.5, on-call (415) 555-0132, office 1 Market St, DOB 1985-03-14; "
        "card 4111 1111 1111 1111, SSN 078-05-1120, key wJ8k2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4Ij"
    )
    stored, kinds = scrub_text(text)
    for kept in ("10.0.0.5", "(415) 555-0132", "1 Market St", "1985-03-14"):
        assert kept in stored
    assert kinds == ["card_number", "us_ssn", "aws_secret_key"]
    assert "4111" not in stored and "078-05" not in stored and "wJ8k2" not in stored
