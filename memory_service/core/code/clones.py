"""find_duplicates: copies of a snippet's functions and classes in the code index (seed 001 §4.2.2).

Three kinds of match, strongest first, as clone detectors classify them:

* ``exact``: the same source text (body hash);
* ``renamed``: the same tokens once identifiers and literals are abstracted and layout (comments,
  grouping parentheses, trailing commas) is dropped: a copy with renamed variables or constants;
* ``similar``: a near-miss copy, with statements added, removed or changed. Units are compared as
  SourcererCC compares token bags, on their multisets of token 5-grams (``indexer.shingles``):
  ``|A ∩ B| / max(|A|, |B|)``, reported on a per-token scale (``overlap ** (1/5)``) and kept at or
  above the threshold. Candidates are the units the lexical (BM25) and dense searches of the
  unit's collection rank first; each is checked against the shingles stored with it.

A query unit too small to shingle (a signature, a stub: fewer than `MIN_SHINGLES` grams) is
compared by the cosine of its summary's embedding instead, as are indexed units written before
shingles existed (with a warning: ``reindex`` with scope ``full`` adds them).

The snippet's outermost units are analysed first (nested functions only fill the remaining
`MAX_UNITS`), and a match inside another reported match (a method of a matching class, a nested
function of a matching function) is folded into it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from indexer import CodeUnit
from indexer.shingles import Shingles, similarity
from memory_service.core.code import records as cr
from memory_service.core.code.schemas import Duplicate, FindDuplicatesInput, FindDuplicatesOutput
from memory_service.core.ports import PayloadFilter, ScoredPoint
from memory_service.core.records import Stores
from memory_service.core.redaction.sanitize import mask_secrets

MAX_UNITS = 5  # units of one snippet analysed
MIN_SHINGLES = 20  # grams (~25 tokens, 2-3 statements) below which a unit is compared by summary
CANDIDATES = 64  # per search and unit: the lexical and the dense nearest, checked by shingles
_RANK = {"exact": 0, "renamed": 1, "similar": 2}
NO_MODEL = "embedding model unavailable: signatures and stubs were only checked for exact and renamed clones"
LEGACY = (
    "{count} candidate units have no clone shingles (indexed by an older version): near-miss clones "
    "among them were judged by their summaries only; run reindex with scope 'full' to add them"
)


@dataclass
class _Match:
    data: dict[str, Any]  # the indexed unit's payload
    similarity: float
    match: str


class DuplicateFinder:
    """Exact, renamed and near-miss clones of a snippet's units among the indexed ones."""

    def __init__(self, stores: Stores) -> None:
        self._stores = stores

    def find(
        self, req: FindDuplicatesInput, language: str | None, units: list[CodeUnit], warnings: list[str]
    ) -> FindDuplicatesOutput:
        """Duplicates of ``units`` (the snippet parsed in ``language``; none when it did not parse)."""
        analysed = outermost_first(units)[:MAX_UNITS]
        found: dict[str, _Match] = {}
        legacy: set[str] = set()
        for unit in analysed:
            self._hashed(unit, req.limit, found)
        for unit in analysed:
            shingles = Shingles.decode(unit.shingles)
            flt = PayloadFilter(equals={"language": unit.language})
            if shingles.total >= MIN_SHINGLES:
                self._near(unit, shingles, flt, req.threshold, found, legacy)
            else:
                self._by_summary(cr.dense_text(unit), flt, req.threshold, found, warnings)
        if not analysed:  # not code in any grammar: a description or a bare signature
            any_language = PayloadFilter(equals={"language": language}) if language else None
            self._by_summary(req.code, any_language, req.threshold, found, warnings)
        if legacy:
            warnings.append(LEGACY.format(count=len(legacy)))
        kept = fold_nested(sorted(found.values(), key=_order))[: req.limit]
        duplicates = [_duplicate(m) for m in kept]
        return FindDuplicatesOutput(
            duplicates=duplicates,
            has_duplicates=bool(duplicates),
            analysed_units=[u.qualified_name for u in analysed],
            warnings=list(dict.fromkeys(warnings)),
        )

    # ------------------------------------------------------------------ the three tiers

    def _hashed(self, unit: CodeUnit, limit: int, found: dict[str, _Match]) -> None:
        for match, field in (("exact", "body_hash"), ("renamed", "normalized_hash")):
            flt = PayloadFilter(equals={field: getattr(unit, field), "language": unit.language})
            for name in cr.CODE_COLLECTIONS:
                points, _ = self._stores.vectors.scroll(name, flt, limit=limit * 2)
                for point in points:
                    _keep(found, _Match(point.payload, 1.0, match))

    def _near(
        self,
        unit: CodeUnit,
        shingles: Shingles,
        flt: PayloadFilter,
        threshold: float,
        found: dict[str, _Match],
        legacy: set[str],
    ) -> None:
        """Near-miss clones among the lexical and dense neighbours of ``unit``."""
        collection = cr.collection_of(unit)
        sparse = self._stores.sparse.encode_query(cr.sparse_text(unit))
        lexical = self._stores.vectors.search_sparse(collection, sparse, CANDIDATES, flt)
        dense = self._dense(cr.dense_text(unit), [collection], flt) or []
        cosine = {hit.id: hit.score for hit in dense}
        for point in {p.id: p for p in [*lexical, *dense]}.values():
            theirs = cr.shingles_of(point.payload)
            if theirs is not None:
                score = similarity(shingles, theirs)
            elif point.id in cosine:  # indexed before shingles: the summaries' cosine, as it was
                legacy.add(point.id)
                score = cosine[point.id]
            else:
                legacy.add(point.id)
                continue
            if score >= threshold:
                _keep(found, _Match(point.payload, round(min(score, 1.0), 4), "similar"))

    def _by_summary(
        self,
        text: str,
        flt: PayloadFilter | None,
        threshold: float,
        found: dict[str, _Match],
        warnings: list[str],
    ) -> None:
        """Units whose summaries embed close to ``text`` (a signature or a stub says no more)."""
        hits = self._dense(text, cr.CODE_COLLECTIONS, flt)
        if hits is None:
            warnings.append(NO_MODEL)
        for hit in hits or []:
            if hit.score >= threshold:
                _keep(found, _Match(hit.payload, round(min(hit.score, 1.0), 4), "similar"))

    def _dense(
        self, text: str, collections: Iterable[str], flt: PayloadFilter | None
    ) -> list[ScoredPoint] | None:
        """The nearest summaries by cosine; None when the embedding model is unavailable."""
        embedder = self._stores.embedder
        if not embedder.wait_ready(30):
            return None
        vector = embedder.embed_query(text)
        return [
            hit
            for name in collections
            for hit in self._stores.vectors.search_dense(name, vector, CANDIDATES, flt)
        ]


# ---------------------------------------------------------------------- pure helpers


def outermost_first(units: list[CodeUnit]) -> list[CodeUnit]:
    """The snippet's units, those not nested in another one first (in source order)."""
    names = {u.qualified_name for u in units}

    def nested(unit: CodeUnit) -> bool:
        parts = unit.qualified_name.split(".")
        return any(".".join(parts[:i]) in names for i in range(1, len(parts)))

    return sorted(units, key=nested)  # stable: source order within each group


def fold_nested(matches: list[_Match]) -> list[_Match]:
    """Drop a match lying inside a better-ranked one of the same file (a method of a matching
    class, a nested function of a matching function): the outer match already covers it."""
    kept: list[tuple[_Match, tuple[str, str]]] = []  # with its (file path, qualified name)
    for m in matches:
        path, name = where = cr.location(m.data)
        if not any(p == path and name.startswith(outer + ".") for _, (p, outer) in kept):
            kept.append((m, where))
    return [m for m, _ in kept]


def _order(m: _Match) -> tuple[int, float, str, int]:
    """Strongest match first; equal ones by location, so that the order is stable."""
    return _RANK[m.match], -m.similarity, str(m.data.get("file_path", "")), int(m.data.get("start_line", 0))


def _keep(found: dict[str, _Match], candidate: _Match) -> None:
    """Remember the strongest match per indexed unit."""
    key = str(candidate.data.get("unit_id"))
    current = found.get(key)
    if current is None or _order(candidate)[:2] < _order(current)[:2]:
        found[key] = candidate


def _duplicate(m: _Match) -> Duplicate:
    unit = cr.unit_from_payload(m.data)
    return Duplicate(
        function_id=unit.id,
        name=unit.qualified_name,
        signature=mask_secrets(unit.signature),
        file_path=unit.file_path,
        start_line=unit.start_line,
        end_line=unit.end_line,
        similarity=m.similarity,
        match_type=m.match,
        recommendation=_recommend(m.match, unit, m.similarity),
    )


def _recommend(match: str, unit: CodeUnit, similarity: float) -> str:
    where = f"{unit.qualified_name} ({unit.file_path}:{unit.start_line})"
    if match == "exact":
        return f"Identical code already exists as {where}: reuse or import it instead of adding a copy."
    if match == "renamed":
        return (
            f"{where} has the same structure with different names or constants: extract one shared "
            "helper and call it from both places."
        )
    return (
        f"{where} is similar ({similarity:.2f}): check whether it already does what you need before "
        "writing a new one; if it almost does, extend it."
    )
