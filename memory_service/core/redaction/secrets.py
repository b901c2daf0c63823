"""Secret detection and masking: find credentials in text and replace only the secret part.

Memories, audit entries and log lines quote whatever an agent pastes (a ``.env`` excerpt, a curl
command, a stack trace with a DSN); a stored credential makes every backup and export a leak.
Pure functions, no I/O.

Where a secret has a key/value shape only the value is masked, so the text stays readable:
``postgres://app:[REDACTED:url_password]@db/x``, ``DB_PASSWORD=[REDACTED:env_secret]``,
``Authorization: Bearer [REDACTED:bearer_token]``. A mask is never a candidate itself, so masking
twice changes nothing. In an assignment the key name must say secret and the value must be a
literal: ``password = get_password()``, ``token: str`` and ``${DB_PASSWORD}`` are not secrets.

Speed: every pattern is compiled once and starts with a literal (``ghp_``, ``://``, ``token``...),
which the regex engine finds with a fast substring search; word boundaries are checked after a
match, and case-insensitive patterns run on the lower-cased text. Each detector also names its
needles, the literals one of which every match holds: a text is searched only by the detectors
whose needle it holds. A 100-character text with none costs one ``lower()`` and ~50 substring
tests (~5 µs, where starting every search took ~14). Three detectors have no literal: a bare AWS
secret key, a card number and a US social security number (:mod:`.shapes` checks what
their patterns match); their needles are the digits, so they run on most texts (~5 µs more).

The detectors are in :mod:`.detectors`; the values of key/value matches are judged in
:mod:`.assignments`; this module runs them and masks what they find.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_service.core.redaction.assignments import accept, assignment, is_placeholder, secret_key
from memory_service.core.redaction.detectors import (
    ASSIGN,
    DETECTORS,
    FLAG,
    MASK,
    MASK_HEAD,
    XML,
    Candidate,
    Detector,
)


@dataclass(frozen=True)
class Finding:
    """One secret: its kind and the span of the secret itself (not its key, user or scheme)."""

    kind: str
    start: int
    end: int


_NONE: Iterator[re.Match[str]] = iter(())


def _matches(detector: Detector, text: str, lowered: str | None) -> Iterator[re.Match[str]]:
    """The detector's matches in ``text``, on the lower-cased copy when it is case-insensitive.

    A text without any of the detector's needles is not searched: a substring test costs a
    tenth of starting a search, and most texts hold the literal of no detector at all."""
    if detector.folded is None:
        regex, haystack = detector.regex, text
    elif lowered is not None:
        regex, haystack = detector.regex, lowered
    else:  # the needles are lower-case: the case-insensitive regex decides alone
        return detector.folded.finditer(text)
    if detector.needles and not any(needle in haystack for needle in detector.needles):
        return _NONE
    return regex.finditer(haystack)


_ALL = (*DETECTORS, *ASSIGN, FLAG, *XML)
_NEEDLES = tuple(sorted({n.lower() for d in _ALL for n in d.needles}))
_BY_NEEDLE = {n: frozenset(d for d in _ALL if n in (x.lower() for x in d.needles)) for n in _NEEDLES}
_ALWAYS = frozenset(d for d in _ALL if not d.needles)  # a detector without needles runs on every text


def _active(lowered: str | None) -> frozenset[Detector] | None:
    """The detectors that may match: those with a needle in the lower-cased text (None: all).

    One substring test per needle (~50) costs a few microseconds; starting ~30 searches and the
    Python around them cost ~14 µs a text, and most texts hold no needle at all."""
    if lowered is None:
        return None
    found = [needle for needle in _NEEDLES if needle in lowered]
    return _ALWAYS.union(*(_BY_NEEDLE[needle] for needle in found)) if found else _ALWAYS


def _candidates(text: str) -> Iterator[Candidate]:
    lowered: str | None = text.lower()
    if lowered is not None and len(lowered) != len(text):  # a few characters lower to two
        lowered = None
    active = _active(lowered)
    if active is not None and not active:
        return

    def run(group: Sequence[Detector]) -> list[Detector]:
        return list(group) if active is None else [d for d in group if d in active]

    for detector in run(DETECTORS):
        for match in _matches(detector, text, lowered):
            start, end = match.span(detector.group)
            value = text[start:end]
            if not value or is_placeholder(value) or MASK_HEAD in text[match.start() : match.end()]:
                continue
            if detector.check is None or detector.check(value):
                yield detector.kind, start, end
    seen: set[int] = set()
    for detector in run(ASSIGN):
        for match in _matches(detector, text, lowered):
            if match.start(2) in seen:
                continue  # `client_secret_key`: one separator, found from several keywords
            seen.add(match.start(2))
            if found := assignment(text, match):
                yield found
    for match in _matches(FLAG, text, lowered) if run((FLAG,)) else ():
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        keyed = secret_key(match.group(1))
        if keyed and (kind := accept(*keyed, text[match.start(group) : match.end(group)])):
            yield kind, match.start(group), match.end(group)
    for detector in run(XML):
        for match in _matches(detector, text, lowered):
            keyed = secret_key(match.group(1))
            if keyed and (kind := accept(*keyed, match.group(2))):
                yield kind, match.start(2), match.end(2)


MEMO_CHARS = 2048  # texts up to this long are remembered (a write scans its strings 2-3 times)
# Whole strings of the shapes the service makes by the hundred in a write (record ids, content
# hashes): no detector matches in them (tests/unit/core/redaction/test_secrets.py checks on random ones),
# and a scan takes ~13 µs each, fresh every time (a new id is never remembered).
_OWN_SHAPES = re.compile(
    r"(?:sha256:)?[0-9a-f]{64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``: non-overlapping, sorted by start; the longest span wins a clash."""
    if not text or _OWN_SHAPES.fullmatch(text):
        return []
    if len(text) <= MEMO_CHARS:
        return list(_remembered(text))
    return _scan(text)


@lru_cache(maxsize=4096)
def _remembered(text: str) -> tuple[Finding, ...]:
    """:func:`_scan` of a short text, remembered: the same metadata keys and values, and the
    record's own strings again in its audit event, are scanned once (the scan is pure)."""
    return tuple(_scan(text))


def _scan(text: str) -> list[Finding]:
    starts: list[int] = []
    taken: list[Finding] = []
    for kind, start, end in sorted(_candidates(text), key=lambda c: c[1] - c[2]):  # longest first, stable
        i = bisect.bisect_right(starts, start)
        if start >= end or (i and taken[i - 1].end > start) or (i < len(taken) and taken[i].start < end):
            continue
        starts.insert(i, start)
        taken.insert(i, Finding(kind, start, end))
    return taken


def redact_text(text: str) -> tuple[str, list[str]]:
    """``text`` with each secret replaced by :data:`MASK`, and the kinds found, in order."""
    findings = find_secrets(text)
    if not findings:
        return text, []
    parts: list[str] = []
    last = 0
    for finding in findings:
        parts += [text[last : finding.start], MASK.format(kind=finding.kind)]
        last = finding.end
    parts.append(text[last:])
    return "".join(parts), [f.kind for f in findings]


def contains_secret(text: str) -> bool:
    return bool(find_secrets(text))


def redact_value(value: Any, prepare: Callable[[str], str] | None = None) -> tuple[Any, list[str]]:
    """A copy of ``value`` with secrets masked in every string, dict keys included; with
    ``prepare``, each string is passed through it first (in the same walk).

    Dicts, lists, tuples and sets are rebuilt (the input is never mutated); other types are
    returned as they are. Two keys that mask (or clean) to the same text are both kept, the later
    one with a ``" (2)"`` suffix.
    """
    kinds: list[str] = []
    return _redact(value, kinds, prepare), kinds


def _redact(value: Any, kinds: list[str], prepare: Callable[[str], str] | None) -> Any:
    if isinstance(value, str):
        masked, found = redact_text(value if prepare is None else prepare(value))
        kinds += found
        return masked
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = _redact(key, kinds, prepare)
            if new_key in out:  # a key before or this one was rewritten to the other: keep both
                new_key = next(
                    f"{new_key} ({n})" for n in range(2, len(out) + 3) if f"{new_key} ({n})" not in out
                )
            out[new_key] = _redact(item, kinds, prepare)
        return out
    if isinstance(value, list):
        return [_redact(item, kinds, prepare) for item in value]
    if isinstance(value, tuple):
        items = [_redact(item, kinds, prepare) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, set | frozenset):
        return type(value)(_redact(item, kinds, prepare) for item in value)
    return value
