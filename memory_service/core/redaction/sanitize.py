"""The sanitise step of every write (ROADMAP: validate → sanitise → dedupe → embed → store).

Text is cleaned (lone surrogates become U+FFFD, control characters other than tab, newline and
carriage return are dropped) and secrets are masked (:mod:`.redaction`) before anything is
stored, audited, cached, logged or exported. Masking is on by default; ``MEMORY_MEMORY__REDACT_SECRETS=false``
turns it off for the whole process (:func:`configure`, called once at start).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memory_service.core.redaction import pii
from memory_service.core.redaction import secrets as redaction

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_UNCLEAN = re.compile(f"{_CONTROL.pattern}|{_SURROGATE.pattern}")  # either of the two
PREVIEW_CHARS = 160

_state = {"redact": True}


def configure(*, redact: bool) -> None:
    """Turn secret masking on or off for this process (settings: memory.redact_secrets)."""
    _state["redact"] = redact


def clean_text(text: str) -> str:
    """``text`` without lone surrogates (replaced) or control characters other than \\t \\n \\r."""
    if _UNCLEAN.search(text) is None:  # nearly every text: one search
        return text
    return _CONTROL.sub("", _replace_surrogates(text))


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """A copy of a JSON-like value with ``fn`` applied to every string, dict keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {_map_strings(k, fn): _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_map_strings(v, fn) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _replace_surrogates(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def without_surrogates(value: Any) -> Any:
    """A JSON-like value whose strings (and keys) have lone surrogates replaced by U+FFFD: JSON
    can carry them (``"\\ud800"``) but they are not text, and the schema layer would refuse them."""
    return _map_strings(value, _replace_surrogates)


def scrub_text(text: str) -> tuple[str, list[str]]:
    """Cleaned and (when on) masked text, and the kinds of secret masked."""
    text = clean_text(text)
    if not _state["redact"]:
        return text, []
    return redaction.redact_text(text)


def scrub_value(value: Any) -> tuple[Any, list[str]]:
    """:func:`scrub_text` over every string (and dict key) of a JSON-like value; a new object."""
    if not _state["redact"]:
        return _map_strings(value, clean_text), []
    return redaction.redact_value(value, prepare=clean_text)  # cleaned and masked in one walk


def mask_secrets(text: str) -> str:
    """Text for a response that shows stored source code (code_search snippets): secrets masked."""
    return redaction.redact_text(text)[0] if _state["redact"] else text


def mask_value(value: Any) -> Any:
    """A response with secrets masked (when masking is on); text is otherwise left as it is.

    An answer holds many short strings (ids, names, dates), each costing every detector a call;
    so all of them are first scanned once as one text, a line each, and only when something is
    found there is each string masked on its own (what is stored was masked string by string)."""
    if not _state["redact"]:
        return value
    strings: list[str] = []
    _strings(value, strings)
    if not redaction.contains_secret("\n".join(strings)):
        return value
    return redaction.redact_value(value)[0]


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                out.append(key)
            _strings(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _strings(item, out)


def preview(text: str, chars: int = PREVIEW_CHARS) -> str:
    """A PII-safe preview (seed 003 redactedPreview): secrets masked, and personal data
    (:mod:`.pii`: e-mail addresses, phone numbers, IP addresses, dates of birth, street
    addresses), whitespace folded, at most ``chars`` characters."""
    masked = pii.mask_pii(redaction.redact_text(clean_text(text))[0])
    folded = " ".join(masked.split())
    return folded if len(folded) <= chars else folded[: chars - 1] + "…"


def kinds_note(kinds: list[str]) -> dict[str, int]:
    """How many secrets of each kind were masked: what the audit records (never the secret)."""
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))
