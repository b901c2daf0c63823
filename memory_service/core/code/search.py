"""code_search and find_duplicates over the indexed code units (seed 001 §4.2.2).

code_search fuses dense similarity (the unit's summary) and BM25 over identifiers with
reciprocal-rank fusion, the dense ranking weighted ``DENSE_WEIGHT``; a code snippet as query is
parsed first, so it is compared the way units were indexed. Units sharing a file and qualified
name (overloads) take one place in the results. find_duplicates reports exact copies (same body
hash), renamed clones (same AST-normalised hash) and near clones (similarity at or above the
threshold).
"""

from __future__ import annotations

import time

from indexer import CodeUnit, parse_source, supported_languages
from memory_service.core.code import records as cr
from memory_service.core.code.clones import DuplicateFinder
from memory_service.core.code.index import unsupported_language
from memory_service.core.code.schemas import (
    CodeHit,
    CodeSearchInput,
    CodeSearchOutput,
    FindDuplicatesInput,
    FindDuplicatesOutput,
)
from memory_service.core.ports import PayloadFilter, ScoredPoint
from memory_service.core.records import Stores
from memory_service.core.redaction.sanitize import mask_secrets

RRF_K = 60
# Questions are words: the summary (name words, signature, docstring) ranks them better than BM25
# over identifiers does (bench/code_search_quality.py), so its ranking counts 1.5 times.
DENSE_WEIGHT = 1.5
_GUESS_ORDER = ("python", "typescript", "javascript", "go", "rust", "java", "cpp", "c")
_CODE_HINTS = ("def ", "function ", "func ", "fn ", "class ", "=>", "{", "};", "):", "return ", "public ")


class CodeSearch:
    def __init__(self, stores: Stores) -> None:
        self._stores = stores

    # ------------------------------------------------------------------ code_search

    def search(self, req: CodeSearchInput) -> CodeSearchOutput:
        started = time.perf_counter()
        language = self._language(req.language)
        flt = PayloadFilter(equals={"language": language}) if language else None
        warnings = self._empty_index_warning()
        units = _parse_snippet(req.query, language) if _looks_like_code(req.query) else []
        dense_query = cr.dense_text(units[0]) if units else req.query
        sparse_query = cr.sparse_text(units[0]) if units else req.query
        pool = max(req.limit * 3, 30)
        dense_hits, dense_ok = self._dense(dense_query, pool, flt)
        sparse_hits = self._sparse(sparse_query, pool, flt)
        if not dense_ok:
            warnings.append("embedding model unavailable: results come from lexical (BM25) search only")
        fused = _distinct(_rrf([dense_hits, sparse_hits], [DENSE_WEIGHT, 1.0]))[: req.limit]
        cosine = {h.id: h.score for h in dense_hits}
        top = max((score for _, score in fused), default=1.0) or 1.0
        results = []
        for point, score in fused:
            unit = cr.unit_from_payload(point.payload)
            similarity = cosine.get(point.id)
            if similarity is None:
                similarity = self._similarity(dense_query, unit) if dense_ok else 0.0
            results.append(_hit(unit, similarity, score / top))
        return CodeSearchOutput(
            results=results,
            total=len(results),
            query_time_ms=round((time.perf_counter() - started) * 1000),
            search_mode="hybrid" if dense_ok else "lexical",
            warnings=warnings,
        )

    # ------------------------------------------------------------------ find_duplicates

    def find_duplicates(self, req: FindDuplicatesInput) -> FindDuplicatesOutput:
        """Exact, renamed and near-miss clones of the snippet's units (services.clones)."""
        language = self._language(req.language)
        units = _parse_snippet(req.code, language)
        return DuplicateFinder(self._stores).find(req, language, units, self._empty_index_warning())

    # ------------------------------------------------------------------ helpers

    def _language(self, language: str | None) -> str | None:
        if language is None:
            return None
        supported = supported_languages()
        normal = language.strip().lower()
        aliases = {"js": "javascript", "ts": "typescript", "py": "python", "c++": "cpp", "golang": "go"}
        normal = aliases.get(normal, normal)
        if normal not in supported:
            raise unsupported_language(language, supported)
        return normal

    def _dense(self, text: str, limit: int, flt: PayloadFilter | None) -> tuple[list[ScoredPoint], bool]:
        embedder = self._stores.embedder
        if not embedder.wait_ready(30):
            return [], False
        vector = embedder.embed_query(text)
        hits = [
            h
            for name in cr.CODE_COLLECTIONS
            for h in self._stores.vectors.search_dense(name, vector, limit, flt)
        ]
        return sorted(hits, key=lambda h: -h.score)[:limit], True

    def _sparse(self, text: str, limit: int, flt: PayloadFilter | None) -> list[ScoredPoint]:
        vector = self._stores.sparse.encode_query(text)
        hits = [
            h
            for name in cr.CODE_COLLECTIONS
            for h in self._stores.vectors.search_sparse(name, vector, limit, flt)
        ]
        return sorted(hits, key=lambda h: -h.score)[:limit]

    def _similarity(self, query: str, unit: CodeUnit) -> float:
        """Cosine of query and unit summary; the unit's vector comes from the embedding cache."""
        q = self._stores.embedder.embed_query(query)
        u = self._stores.embedder.embed_documents([cr.dense_text(unit)])[0]
        return round(max(0.0, min(1.0, sum(a * b for a, b in zip(q, u, strict=True)))), 4)

    def _empty_index_warning(self) -> list[str]:
        if any(self._stores.vectors.count(name) for name in cr.CODE_COLLECTIONS):
            return []
        return ["The code index is empty: run index_directory (or index_file) first."]


def _looks_like_code(text: str) -> bool:
    return "\n" in text.strip() or any(hint in text for hint in _CODE_HINTS)


def _parse_snippet(code: str, language: str | None) -> list[CodeUnit]:
    """Units of a snippet: in the given language, or the language whose grammar parses it best."""
    candidates = [language] if language else list(_GUESS_ORDER)
    best: tuple[int, int, list[CodeUnit]] | None = None
    for lang in candidates:
        fi = parse_source(code.encode(), lang, "<query>")
        if fi.units:
            rank = (fi.parse_errors, -len(fi.units), fi.units)
            if best is None or rank[:2] < best[:2]:
                best = rank
            if fi.parse_errors == 0:
                break
    return best[2] if best else []


def _rrf(
    rankings: list[list[ScoredPoint]], weights: list[float] | None = None
) -> list[tuple[ScoredPoint, float]]:
    """Weighted reciprocal-rank fusion: the point at 0-based ``rank`` adds ``weight / (RRF_K + rank + 1)``."""
    scores: dict[str, float] = {}
    points: dict[str, ScoredPoint] = {}
    for i, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[i]
        for rank, point in enumerate(ranking):
            scores[point.id] = scores.get(point.id, 0.0) + weight / (RRF_K + rank + 1)
            points.setdefault(point.id, point)
    return sorted(((points[i], s) for i, s in scores.items()), key=lambda item: -item[1])


def _distinct(fused: list[tuple[ScoredPoint, float]]) -> list[tuple[ScoredPoint, float]]:
    """The best-ranked of the units sharing a file and qualified name (overloads, redefinitions)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for point, score in fused:
        where = cr.location(point.payload)
        if where not in seen:
            seen.add(where)
            out.append((point, score))
    return out


def _hit(unit: CodeUnit, similarity: float, relevance: float) -> CodeHit:
    return CodeHit(
        function_id=unit.id,
        name=unit.name,
        signature=mask_secrets(unit.signature),  # source is indexed as is; what is shown is masked
        file_path=unit.file_path,
        similarity=round(similarity, 4),
        docstring=mask_secrets(unit.docstring) if unit.docstring else unit.docstring,
        qualified_name=unit.qualified_name,
        kind=unit.subkind or unit.kind.value,
        language=unit.language,
        start_line=unit.start_line,
        end_line=unit.end_line,
        relevance_score=round(relevance, 4),
    )
