"""Shape checks for secrets that have no prefix or key name to find them by (core/redaction/secrets.py):
a bare AWS secret key, a payment card number, a US social security number. Pure functions.

Each takes a candidate that a detector's pattern matched and says whether it is the real thing:
the patterns find every string of the right length and alphabet, these keep the ones whose
inner structure (randomness, Luhn and issuer prefix, number ranges) says secret.
"""

from __future__ import annotations

import base64
import itertools
import re
import string


def _cased(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


B64 = "[A-Za-z0-9/+]"  # the alphabet of an AWS secret key
_WORDY = re.compile(r"[a-z]{3,}")


def bare_aws_secret(value: str) -> bool:
    """40 base64 characters that look random: all three classes, many class changes, few
    lower-case words (not a camelCase name or a path), not hex, not base64 of printable text.

    A random key fails this about 3 times in 1,000 (tests/unit/core/redaction/test_glued_and_bare.py
    measures it on seeded random keys); git SHAs, hashes, ids, paths and encoded text fail it always."""
    if not (_cased(value) and any(c.isdigit() for c in value)) or all(c in string.hexdigits for c in value):
        return False
    classes = [c.isupper() + 2 * c.isdigit() for c in value if c not in "/+"]
    if sum(a != b for a, b in itertools.pairwise(classes)) < 12 or len(set(value)) < 20:
        return False
    if sum(len(word) for word in _WORDY.findall(value)) > 20:
        return False
    raw = base64.b64decode(value)
    return not all(32 <= b < 127 or b in (9, 10, 13) for b in raw)


_ISSUERS = {  # length: the issuer prefixes that use it (Visa, Mastercard, Amex, Diners, Discover...)
    14: re.compile("3[068]"),
    15: re.compile("3[47]"),
    16: re.compile(r"4|5[1-5]|2[2-7]|3[5689]|6(?:011|5|4[4-9]|2)"),
    19: re.compile(r"4|35|6(?:011|5|4[4-9]|2)"),
}


def card_number(value: str) -> bool:
    """A payment card: grouped 4-4-4-4(-n) or 4-6-4/5 if grouped, a length its issuer's prefix
    uses (14, 15, 16 or 19 digits; 13-digit Visa numbers are retired), Luhn."""
    groups = re.split(r"[ -]", value)
    if len(groups) > 1:
        if len(set(re.findall(r"[ -]", value))) > 1:
            return False
        sizes = [len(g) for g in groups]
        if sizes[:2] != [4, 6] and any(size != 4 for size in sizes[:-1]):
            return False
    digits = "".join(groups)
    issuers = _ISSUERS.get(len(digits))
    if issuers is None or not issuers.match(digits) or len(set(digits)) < 2:
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def us_ssn(value: str) -> bool:
    """A US social security number: area not 000, 666 or 9xx; group not 00; serial not 0000."""
    digits = value.replace("-", "").replace(" ", "")
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
