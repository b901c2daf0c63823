"""Sparse BM25 vectors with qdrant-edge's built-in ``Bm25`` (Rust, no model, no download).

Why this configuration:

* ``TokenizerType.Code`` splits identifiers on camelCase, snake_case, dots and ``::`` **and** keeps
  the whole token: ``parseHttpRequest`` yields ``parse``, ``http``, ``request`` and
  ``parsehttprequest``, so both "parse http request" and the exact name match. On prose it
  tokenises like the ``Word`` tokenizer (same terms for ordinary sentences).
* English stopwords and the Snowball English stemmer (``language="english"``): "parsing requests"
  matches ``parse_request``; stemming applies to identifier parts too.
* ``ascii_folding``: "résumé" matches "resume" (cheap, harmless for code).
* ``k=1.2, b=0.75`` are the standard BM25 constants. The vectors carry term frequency only: the
  collection's sparse vector must use the IDF modifier for real BM25 ranking.

Indices are the tokenizer's 32-bit term hashes (unsigned, below 2**32), sorted and unique, so they
are valid Qdrant sparse indices as they are. Empty or all-stopword text gives an empty vector.

:func:`split_identifiers` does the identifier split in plain Python. The ``code`` tokenizer does not
need it (pre-splitting would count each part twice); the ``word`` tokenizer uses it, and it is
there for text meant for the dense model, which reads "parse Http Request" better than the name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from qdrant_edge import Bm25, Bm25Config, TokenizerType

from memory_service.core.ports import SparseVector

_WORD = re.compile(r"\w+")
# An acronym before a capitalised word (HTTP|Server), a (capitalised) word, an acronym; digits stay
# with the letters before them (v2, sha256, utf8, S3) since they are part of the name.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")


def identifier_parts(token: str) -> list[str]:
    """Parts of one identifier: ``readHTML_toJSON`` -> ``["read", "HTML", "to", "JSON"]``."""
    if not token.isascii():
        return [token]
    return [p for chunk in token.split("_") if chunk for p in _PART.findall(chunk)]


def split_identifiers(text: str) -> str:
    """Append the parts of each compound identifier right after it, keeping the identifier.

    ``"call parseHttpRequest now"`` -> ``"call parseHttpRequest parse Http Request now"``. Plain
    words, numbers and single-part names (``__init__``) are left alone.
    """

    def expand(match: re.Match[str]) -> str:
        token = match.group(0)
        parts = identifier_parts(token)
        return f"{token} {' '.join(parts)}" if len(parts) > 1 else token

    return _WORD.sub(expand, text)


class Bm25Encoder:
    """:class:`~memory_service.core.ports.SparseEncoder` over ``qdrant_edge.Bm25``.

    The Rust model is stateless after construction and safe to share between threads.
    """

    def __init__(
        self,
        *,
        tokenizer: Literal["code", "word"] = "code",
        k: float = 1.2,
        b: float = 0.75,
        avg_len: float = 256.0,
        language: str = "english",
    ) -> None:
        self.tokenizer = tokenizer
        config = Bm25Config(
            k=k,
            b=b,
            avg_len=avg_len,
            tokenizer=TokenizerType.Code if tokenizer == "code" else TokenizerType.Word,
            language=language,
            lowercase=True,
            ascii_folding=True,
        )
        self._model = Bm25(config)

    def _prepare(self, text: str) -> str:
        return text if self.tokenizer == "code" else split_identifiers(text)

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        """Term-frequency weights saturated by ``k`` and normalised by length (``b``, ``avg_len``)."""
        out = []
        for text in texts:
            vec = self._model.embed_document(self._prepare(text))
            out.append(SparseVector(indices=list(vec.indices), values=list(vec.values)))
        return out

    def encode_query(self, text: str) -> SparseVector:
        """Each distinct query term weighs 1.0; the score is the sum of matching document weights."""
        vec = self._model.embed_query(self._prepare(text))
        return SparseVector(indices=list(vec.indices), values=list(vec.values))
