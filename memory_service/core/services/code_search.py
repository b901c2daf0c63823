"""code_search and find_duplicates over the indexed code units (seed 001 §4.2.2).

code_search fuses dense similarity (the unit's summary) and BM25 over identifiers with
reciprocal-rank fusion; a code snippet as query is parsed first, so it is compared the way units
were indexed. find_duplicates reports exact copies (same body hash), renamed clones (same
AST-normalised hash) and near clones (similarity at or above the threshold).
"""

from __future__ import annotations

import time
from typing import Any

from indexer import CodeUnit, parse_source, supported_languages
from memory_service.core import code_records as cr
from memory_service.core.index_schemas import (
    CodeHit,
    CodeSearchInput,
    CodeSearchOutput,
    Duplicate,
    FindDuplicatesInput,
    FindDuplicatesOutput,
)
from memory_service.core.ports import PayloadFilter, ScoredPoint
from memory_service.core.records import Stores
from memory_service.core.sanitize import mask_secrets
from memory_service.core.services.index import unsupported_language

RRF_K = 60
_GUESS_ORDER = ("python", "typescript", "javascript", "go", "rust", "java", "cpp", "c")
_CODE_HINTS = ("def ", "function ", "func ", "fn ", "class ", "=>", "{", "};", "):", "return ", "public ")
_RANK = {"exact": 0, "renamed": 1, "similar": 2}


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
        fused = _rrf([dense_hits, sparse_hits])[: req.limit]
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
        language = self._language(req.language)
        warnings = self._empty_index_warning()
        units = _parse_snippet(req.code, language)[:5]
        found: dict[str, Duplicate] = {}
        flt_lang = {"language": language} if language else {}
        for unit in units:
            for match, field in (("exact", "body_hash"), ("renamed", "normalized_hash")):
                flt = PayloadFilter(equals={field: getattr(unit, field), **flt_lang})
                for name in cr.CODE_COLLECTIONS:
                    points, _ = self._stores.vectors.scroll(name, flt, limit=req.limit * 2)
                    for point in points:
                        _keep(found, point.payload, 1.0, match, unit)
        texts = [cr.dense_text(u) for u in units] or [req.code]
        for i, text in enumerate(texts):
            hits, ok = self._dense(text, req.limit * 2, PayloadFilter(equals=flt_lang) if flt_lang else None)
            if not ok:
                warnings.append("embedding model unavailable: only exact and renamed clones were checked")
                break
            for hit in hits:
                if hit.score >= req.threshold:
                    _keep(
                        found,
                        hit.payload,
                        round(min(hit.score, 1.0), 4),
                        "similar",
                        units[i] if units else None,
                    )
        ordered = sorted(found.values(), key=lambda d: (_RANK[d.match_type], -d.similarity))[: req.limit]
        return FindDuplicatesOutput(
            duplicates=ordered,
            has_duplicates=bool(ordered),
            analysed_units=[u.qualified_name for u in units],
            warnings=warnings,
        )

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


def _rrf(rankings: list[list[ScoredPoint]]) -> list[tuple[ScoredPoint, float]]:
    scores: dict[str, float] = {}
    points: dict[str, ScoredPoint] = {}
    for ranking in rankings:
        for rank, point in enumerate(ranking):
            scores[point.id] = scores.get(point.id, 0.0) + 1.0 / (RRF_K + rank + 1)
            points.setdefault(point.id, point)
    return sorted(((points[i], s) for i, s in scores.items()), key=lambda item: -item[1])


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


def _keep(
    found: dict[str, Duplicate], data: dict[str, Any], similarity: float, match: str, query: CodeUnit | None
) -> None:
    unit = cr.unit_from_payload(data)
    current = found.get(unit.id)
    if current is not None and (_RANK[current.match_type], -current.similarity) <= (
        _RANK[match],
        -similarity,
    ):
        return
    found[unit.id] = Duplicate(
        function_id=unit.id,
        name=unit.qualified_name,
        signature=mask_secrets(unit.signature),
        file_path=unit.file_path,
        start_line=unit.start_line,
        end_line=unit.end_line,
        similarity=similarity,
        match_type=match,
        recommendation=_recommend(match, unit, similarity, query),
    )


def _recommend(match: str, unit: CodeUnit, similarity: float, query: CodeUnit | None) -> str:
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
