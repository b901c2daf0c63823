"""Personal data in previews: find it in text and mask it. Pure functions, no I/O.

A preview (seed 003's ``redactedPreview`` and ``textPreview``, ``redacted_preview`` of a write) is
"PII-safe": it shows the start of a memory with personal data masked. What is masked here is
masked **in previews only**; the stored text keeps it, because the same shapes are ordinary
engineering facts ("the server at 10.0.0.5", "call the on-call phone +1 415 555 0100", "the office
at 1 Market St"). Payment card numbers, US social security numbers and AWS secret keys are masked
in the stored text too, by :mod:`.redaction` (docs/governance.md, "Personal data").

Kinds, each narrow enough that version numbers, dates, ids and hashes stay as they are:

* ``email``: shortened to its first letter and domain (``d***@example.com``).
* ``phone_number``: ``+`` and 7-15 digits (E.164, with spaces, dots, dashes or brackets), a North
  American number written with separators (``(415) 555-0100``, ``415-555-0100``), or any number
  of 7+ digits right after a word that says phone (``tel``, ``phone``, ``mobile``, ``fax``).
* ``ip_address``: IPv4 (four parts of 0-255, not part of a longer dotted number) and IPv6
  (what :mod:`ipaddress` accepts, holding a digit and two colons); not loopback, unspecified
  (``0.0.0.0``), multicast or a netmask (``255.255.255.0``), which name no one, nor a version
  (``version 2.31.0.4``).
* ``date_of_birth``: a date right after ``DOB``, ``date of birth``, ``born (on)``, ``birthday``
  or ``birthdate``; other dates are not personal data.
* ``street_address``: a house number, one to four capitalised words and a street type
  (``221B Baker Street``, ``1600 Pennsylvania Ave NW``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from memory_service.core.redaction.secrets import MASK, Finding

EMAIL = re.compile(r"\b([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9.-]+\.[A-Za-z]{2,})\b")

_SEP = r"[ .\-]?"
_PHONE = re.compile(
    r"(?<![\w+.-])(?:"
    r"\+\d{1,3}(?:[ .\-]?\(?\d{1,4}\)?){2,6}"  # +44 20 7946 0958, +1 (415) 555-0100, +4930123456
    r"|\(\d{3}\)[ ]?\d{3}[ .\-]\d{4}"  # (415) 555-0100
    r"|[2-9]\d\d([.\-])[2-9]\d\d\1\d{4}"  # 415-555-0100, 415.555.0100 (the same separator twice)
    r")(?![\w-]|[.,]\d)"
)
_PHONE_WORD = re.compile(
    r"\b(?:tel|phone|telephone|mobile|cell|fax|whatsapp)\b\.?(?:[ \t]*(?:no\.?|number|#))?[ \t]*[:=]?[ \t]*"
    r"(\+?\(?\d[\d ().\-]{5,18}\d)(?![\w-]|[.,]\d)",
    re.I,
)
_VERSION_WORDS = "".join(f"(?<!{w} )(?<!{w.title()} )" for w in ("version", "build", "release", "ver"))
_IPV4 = re.compile(  # not `version 2.31.0.4`
    rf"(?<![\w.]){_VERSION_WORDS}(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){{3}}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    r"(?![\w-]|\.\d)"
)
_IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%\w+)?(?![\w:])")
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
_DATE = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\.?[ \t]+(?:{_MONTHS})[a-z]*\.?,?[ \t]+\d{{4}}"
    rf"|(?:{_MONTHS})[a-z]*\.?[ \t]+\d{{1,2}}(?:st|nd|rd|th)?,?[ \t]+\d{{4}})"
)
_DOB = re.compile(
    r"\b(?:dob|d\.o\.b\.?|date[ \t]+of[ \t]+birth|birth[ \t]?date|birthday|born(?:[ \t]+on)?)\b"
    rf"[ \t]*[:=\-]?[ \t]*({_DATE})(?!\w)",
    re.I,
)
_STREET_TYPES = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace"
    "|Square|Sq|Highway|Hwy|Parkway|Pkwy|Circle|Cir|Crescent|Close|Alley|Row"
)
_STREET = re.compile(
    r"(?<![\w.,/-])\d{1,6}[A-Za-z]?(?:-\d{1,4})?,?[ \t]+"  # 221B, 12-14
    r"(?:[A-Z][a-z]+\.?[ \t]+|\d{1,3}(?:st|nd|rd|th)[ \t]+){1,4}"  # Baker, Old Mill, 5th
    rf"(?:{_STREET_TYPES})\b\.?(?:[ \t]+(?:NW|NE|SW|SE|N|S|E|W)\b)?"
)


def _host_address(value: str) -> bool:
    """An address a machine or person has: not loopback, unspecified, multicast or a netmask."""
    try:
        address = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return False
    if address.is_loopback or address.is_unspecified or address.is_multicast:
        return False
    bits = int(address)
    width = address.max_prefixlen
    return not (bits and (bits | (bits - 1)) == (1 << width) - 1 and bits >> (width - 1))  # 255.255.0.0


def _valid_ipv6(value: str) -> bool:
    return any(c.isdigit() for c in value) and value.count(":") >= 2 and _host_address(value)


def _phone_digits(value: str) -> bool:
    return 7 <= sum(c.isdigit() for c in value) <= 15


_Rule = tuple[str, re.Pattern[str], int, Callable[[str], bool] | None]
_RULES: tuple[_Rule, ...] = (  # a clash: the longest span wins, then the earlier rule
    ("date_of_birth", _DOB, 1, None),
    ("street_address", _STREET, 0, None),
    ("phone_number", _PHONE_WORD, 1, _phone_digits),
    ("phone_number", _PHONE, 0, _phone_digits),
    ("ip_address", _IPV4, 0, _host_address),
    ("ip_address", _IPV6, 0, _valid_ipv6),
)


def find_pii(text: str) -> list[Finding]:
    """Personal data in ``text`` (e-mail aside): non-overlapping, sorted by start."""
    found = []
    for kind, regex, group, check in _RULES:
        for match in regex.finditer(text):
            value = match.group(group)
            if value and (check is None or check(value)):
                found.append(Finding(kind, match.start(group), match.end(group)))
    taken: list[Finding] = []
    for finding in sorted(found, key=lambda f: f.start - f.end):  # longest first, stable
        if all(finding.end <= t.start or finding.start >= t.end for t in taken):
            taken.append(finding)
    return sorted(taken, key=lambda f: f.start)


def mask_pii(text: str) -> str:
    """``text`` with personal data masked: e-mail addresses shortened, the rest replaced by
    ``[REDACTED:<kind>]``. Masks of :mod:`.redaction` are left as they are."""
    parts: list[str] = []
    last = 0
    for finding in find_pii(text):
        parts += [text[last : finding.start], MASK.format(kind=finding.kind)]
        last = finding.end
    parts.append(text[last:])
    return EMAIL.sub(r"\1***@\2", "".join(parts))
