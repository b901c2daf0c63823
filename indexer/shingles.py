"""Token shingles of code units, for near-miss (type-3) clone detection.

A unit is summarised by the multiset of its token 5-grams, the tokens abstracted as for the
renamed-clone hash (identifiers → ``ID``, literals → ``LIT``, comments and layout gone), except
that member names (``x.name``, ``p->name``) stay as written: a copy renames its locals, rarely the
attributes and methods it reaches, while two unrelated functions of the same shape differ there.
Two units are compared as SourcererCC compares token bags: the overlap of their multisets,
``|A ∩ B| / max(|A|, |B|)`` (a gram seen twice counts twice).

Each gram is hashed to 32 bits (the n-th repeat of a gram gets its own hash, so that a set holds
the multiset). The set is packed as little-endian ``uint32`` after a header with its full size;
past `MAX_SHINGLES` only the smallest hashes are kept (a bottom-k sketch), and the overlap of such a
unit is estimated from the sketches.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from indexer.tokens import TokenStream

K = 5  # gram length: long enough that shared grams mean shared code, short enough for small units
MAX_SHINGLES = 1024  # a unit of ~1,000 tokens (a 100-line function); larger ones keep a sketch
VERSION = 1  # stored with the shingles: bump when the tokens, K or the hashing change
_MEMBER = frozenset({b".", b"->", b"?."})
_SEPARATOR = b"\x1f"
_REPEAT = 0x9E3779B1  # odd multiplier spreading the repeat count over the hash bits
_HEADER = struct.Struct("<I")


@dataclass(frozen=True)
class Shingles:
    """A unit's gram hashes: ``total`` in the multiset, ``kept`` the smallest of them (all of
    them when ``total <= MAX_SHINGLES``)."""

    total: int
    kept: frozenset[int]

    @property
    def complete(self) -> bool:
        return len(self.kept) == self.total

    def encode(self) -> bytes:
        ordered = sorted(self.kept)
        return _HEADER.pack(self.total) + struct.pack(f"<{len(ordered)}I", *ordered)

    @classmethod
    def decode(cls, data: bytes) -> Shingles:
        """The inverse of `encode`; empty or malformed bytes give the empty set."""
        if len(data) < _HEADER.size or (len(data) - _HEADER.size) % 4:
            return EMPTY
        (total,) = _HEADER.unpack_from(data)
        kept = frozenset(struct.unpack_from(f"<{(len(data) - _HEADER.size) // 4}I", data, _HEADER.size))
        return cls(max(total, len(kept)), kept)


EMPTY = Shingles(0, frozenset())


class Shingler:
    """The grams of one file's token stream, hashed once; `unit` slices them per unit."""

    def __init__(self, stream: TokenStream) -> None:
        self._stream = stream
        self._tokens = _member_names_kept(stream)
        tokens = self._tokens
        self._hashes = [zlib.crc32(_SEPARATOR.join(tokens[i : i + K])) for i in range(len(tokens) - K + 1)]

    def unit(self, start: int, end: int) -> Shingles:
        """The shingles of the unit spanning bytes ``[start, end)``."""
        lo, hi = self._stream.span(start, end)
        if hi - lo >= K:
            grams = self._hashes[lo : hi - K + 1]
        elif hi > lo:
            grams = [zlib.crc32(_SEPARATOR.join(self._tokens[lo:hi]))]
        else:
            return EMPTY
        seen: dict[int, int] = {}
        hashes = set()
        for gram in grams:  # the n-th repeat of a gram gets its own hash: a set holding the multiset
            repeat = seen.get(gram, 0)
            seen[gram] = repeat + 1
            hashes.add((gram ^ (repeat * _REPEAT)) & 0xFFFFFFFF if repeat else gram)
        total = len(hashes)
        if total > MAX_SHINGLES:
            return Shingles(total, frozenset(sorted(hashes)[:MAX_SHINGLES]))
        return Shingles(total, frozenset(hashes))


def _member_names_kept(stream: TokenStream) -> list[bytes]:
    """The stream's tokens with the identifier after a member operator written out."""
    tokens = list(stream.tokens)
    idents = stream.idents
    ident = 0  # every ID token has its text in `idents`, in the same order
    previous = b""
    for i, token in enumerate(stream.tokens):
        if token == b"ID":
            if previous in _MEMBER and ident < len(idents):
                tokens[i] = idents[ident]
            ident += 1
        previous = token
    return tokens


def overlap(a: Shingles, b: Shingles) -> float:
    """``|A ∩ B| / max(|A|, |B|)`` of the two multisets; estimated when either is a sketch."""
    if not a.total or not b.total:
        return 0.0
    if a.complete and b.complete:
        common = float(len(a.kept & b.kept))
    else:  # bottom-k: the k smallest hashes of the union are a sample of it
        k = min(len(a.kept), len(b.kept))
        sample = sorted(a.kept | b.kept)[:k]
        jaccard = sum(1 for h in sample if h in a.kept and h in b.kept) / k
        common = jaccard * (a.total + b.total) / (1 + jaccard)
    return min(1.0, common / max(a.total, b.total))


def similarity(a: Shingles, b: Shingles) -> float:
    """The overlap as a share of tokens: a change to one token in ``n`` breaks ``K`` of the ``n``
    grams around it, so an overlap ``o`` of grams means about ``o ** (1 / K)`` of tokens shared.

    That is the scale `find_duplicates` thresholds are on (0.85: about one token in seven
    differs; the gram overlap is then ~0.44).
    """
    return overlap(a, b) ** (1 / K)
