"""memory_search: semantic search across memory types (seed 001 §4.2.2).

Dense (MiniLM) similarity when the model is loaded; lexical BM25 over the sparse vectors when it
is not, and every response says which (``search_mode``, ``model_status``, ``warnings``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from memory_service.core.errors import ValidationError
from memory_service.core.models import MemoryStatus, MemoryType
from memory_service.core.ports import PayloadFilter, ScoredPoint
from memory_service.core.ranking import lexical_similarity
from memory_service.core.records import MEMORIES, Stores, from_payload
from memory_service.core.schemas import MemorySearchInput, MemorySearchOutput, SearchResult

# How many candidates to fetch per requested result before thresholds are applied.
CANDIDATE_FACTOR = 3
MIN_CANDIDATES = 30
MODEL_WAIT_SECONDS = 30.0


class SearchService:
    def __init__(self, stores: Stores) -> None:
        self._stores = stores

    def search(self, req: MemorySearchInput) -> MemorySearchOutput:
        started = time.perf_counter()
        query = req.query.strip()
        if not query:
            raise ValidationError(
                "Field 'query' must contain text, not only whitespace",
                code="VAL_EMPTY_QUERY",
                details={"field": "query", "provided": req.query},
                suggestion="Describe what you are looking for, e.g. 'how do we retry failed payments'.",
            )
        flt = self._filter(req)
        pool = max(req.limit * CANDIDATE_FACTOR, MIN_CANDIDATES)
        embedder = self._stores.embedder
        warnings: list[str] = []
        if embedder.wait_ready(MODEL_WAIT_SECONDS):
            vector = embedder.embed_query(query)
            hits = self._stores.vectors.search_dense(MEMORIES, vector, pool, flt)
            scored = [(h, min(max(h.score, 0.0), 1.0)) for h in hits]
            mode, model_status = "semantic", "ready"
        else:
            hits = self._stores.vectors.search_sparse(
                MEMORIES, self._stores.sparse.encode_query(query), pool, flt
            )
            scored = list(zip(hits, lexical_similarity([h.score for h in hits]), strict=True))
            mode = "lexical"
            model_status = embedder.health().detail or "unavailable"
            warnings.append(
                f"embedding model unavailable ({model_status}); results come from lexical (BM25) search only"
            )
        results = [
            _result(hit, similarity) for hit, similarity in scored if similarity >= req.min_similarity
        ][: req.limit]
        return MemorySearchOutput(
            results=results,
            total=len(results),
            query_time_ms=round((time.perf_counter() - started) * 1000),
            search_mode=mode,
            model_status=model_status,
            warnings=warnings,
        )

    def _filter(self, req: MemorySearchInput) -> PayloadFilter:
        any_of: dict[str, Sequence[Any]] = {}
        if req.memory_types:
            allowed = [t.value for t in MemoryType]
            bad = [t for t in req.memory_types if t not in allowed]
            if bad:
                raise ValidationError(
                    f"Invalid memory type '{bad[0]}'. Must be one of: {', '.join(allowed)}",
                    code="VAL_INVALID_TYPE",
                    details={"field": "memory_types", "provided": bad, "allowed": allowed},
                    suggestion="Use one of the valid memory types listed in the allowed values.",
                )
            any_of["type"] = list(dict.fromkeys(req.memory_types))
        ranges: dict[str, tuple[float | None, float | None]] = {}
        if req.time_range and (req.time_range.start or req.time_range.end):
            start = req.time_range.start.timestamp() if req.time_range.start else None
            end = req.time_range.end.timestamp() if req.time_range.end else None
            ranges["created_at_ts"] = (start, end)
        return PayloadFilter(equals={"status": MemoryStatus.ACTIVE.value}, any_of=any_of, ranges=ranges)


def _result(hit: ScoredPoint, similarity: float) -> SearchResult:
    record = from_payload(hit.payload)
    return SearchResult(
        memory_id=record.id,
        type=record.type,
        content=record.content,
        similarity=round(similarity, 4),
        relevance_score=round(similarity, 4),
        metadata=record.metadata,
        title=record.title,
        created_at=record.created_at.isoformat(),
    )
