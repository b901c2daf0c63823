"""The sanitise step: control characters and lone surrogates cleaned, secrets masked, one walk."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest

from memory_service.core.redaction import sanitize
from memory_service.core.redaction.sanitize import clean_text, scrub_text, scrub_value

TOKEN = "ghp_" + "a1B2" * 9  # the shape of a GitHub token, not a real one


@pytest.fixture
def masking_off() -> Iterator[None]:
    sanitize.configure(redact=False)
    try:
        yield
    finally:
        sanitize.configure(redact=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text, tabs\tand\nnewlines\r kept", "plain text, tabs\tand\nnewlines\r kept"),
        ("bell\x07 and escape\x1b[0m gone", "bell and escape[0m gone"),
        ("nul\x00 and del\x7f", "nul and del"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("both \udfff and \x0b", "both \ufffd and "),
        ("", ""),
    ],
)
def test_clean_text_drops_controls_and_replaces_lone_surrogates(text: str, expected: str) -> None:
    assert clean_text(text) == expected
    assert clean_text(expected) == expected


def test_scrub_value_cleans_and_masks_every_string_and_key_in_one_copy() -> None:
    value = {
        "title\x07": f"token {TOKEN}",
        "nested": [{"note": "a\ud800b", "secret_key": "DB_PASSWORD=hunter22\x00"}, ("x\x1b", 3)],
        "n": 1,
        "flag": None,
    }
    before = copy.deepcopy(value)
    scrubbed, kinds = scrub_value(value)
    assert value == before  # never mutated
    assert scrubbed == {
        "title": "token [REDACTED:github_token]",
        "nested": [
            {"note": "a\ufffdb", "secret_key": "DB_PASSWORD=[REDACTED:env_secret]"},
            ("x", 3),
        ],
        "n": 1,
        "flag": None,
    }
    assert sorted(kinds) == ["env_secret", "github_token"]
    assert scrub_value(scrubbed) == (scrubbed, [])  # scrubbing twice changes nothing


def test_scrub_value_keeps_two_keys_that_clean_alike() -> None:
    scrubbed, _ = scrub_value({"a\x07b": 1, "ab": 2})
    assert scrubbed == {"ab": 1, "ab (2)": 2}


def test_scrub_text_and_value_only_clean_when_masking_is_off(masking_off: None) -> None:
    assert scrub_text(f"t\x07 {TOKEN}") == (f"t {TOKEN}", [])
    assert scrub_value({"k\x00": [f"{TOKEN}\ud800"]}) == ({"k": [f"{TOKEN}\ufffd"]}, [])
