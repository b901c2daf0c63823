"""memory_search: hybrid search with modes, routing and suggestions (seed 001 §4.2.2, seed 004).

``auto`` (default) runs dense + BM25, fused and re-scored, with the kind preferences of the route
the query's shape picks; ``fast`` runs BM25 only and caches results (no query embedding, so no
model wait); ``deep`` adds a fuzzy-corrected lexical query and one hop of graph expansion. When
the embedding model is not loaded every mode falls back to BM25, and the response says so.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

from memory_service.core.errors import ValidationError
from memory_service.core.models import MemoryStatus, MemoryType, utcnow
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import WRITE_GENERATION
from memory_service.core.routing import AMBIENT, route_for
from memory_service.core.sanitize import mask_value
from memory_service.core.schemas import MemorySearchInput, MemorySearchOutput, SearchResult
from memory_service.core.scopes import filter_parts, read_conditions
from memory_service.core.services.ranker import Candidate, Plan, Ranker
from memory_service.core.services.suggest import suggestions_for
from memory_service.core.ttl import EXPIRES_FIELD, stale_mark

CACHE_NAMESPACE = "search_fast"
CACHE_TTL_SECONDS = 300.0


class SearchService:
    def __init__(self, ranker: Ranker) -> None:
        self._ranker = ranker
        self._stores = ranker.stores

    @property
    def ranker(self) -> Ranker:
        return self._ranker

    def search(self, req: MemorySearchInput) -> MemorySearchOutput:
        started = time.perf_counter()
        query = check_query(req.query)
        flt = search_filter(
            req.memory_types,
            req.time_range,
            include_superseded=req.include_superseded,
            scope=read_conditions(req.scope, self._ranker.scope),
            hide_expired=False,  # the ranker drops expired hits: cheaper than a range on every query
        )
        cache_key = self._cache_key(req) if req.mode == "fast" else None
        if cache_key is not None:
            hit = self._stores.cache.get(CACHE_NAMESPACE, cache_key)
            if hit is not None:
                out = MemorySearchOutput.model_validate_json(hit)
                out.cached = True
                out.query_time_ms = round((time.perf_counter() - started) * 1000)
                return out
        plan, warnings, model_status = self.plan(query, req.mode, req.limit, req.semantic_hops, req.read)
        ranked = self._ranker.rank(query, flt, plan)
        if req.read == "ambient":
            ranked = diversify(ranked, req.limit)
        lexical = not plan.dense
        kept = [c for c in ranked if _similarity(c, lexical) >= req.min_similarity][: req.limit]
        budget = req.token_budget or (AMBIENT_TOKEN_BUDGET if req.read == "ambient" else None)
        pack_tokens = None
        if budget is not None:
            kept, pack_tokens, dropped = pack(kept, budget)
            if dropped:
                warnings.append(f"{dropped} results left out to stay within a {budget}-token budget")
        self._ranker.annotate(query, kept)
        results = [_result(c, lexical) for c in kept]
        good = sum(1 for r in results if (r.confidence or 0) >= self._ranker.settings.good_confidence)
        out = MemorySearchOutput(
            results=results,
            total=len(results),
            query_time_ms=0,
            search_mode="lexical" if lexical else "semantic",
            model_status=model_status,
            warnings=warnings,
            mode=req.mode,
            route=plan.route.name,
            pack_tokens=pack_tokens,
            suggestions=suggestions_for(req, ranked, good, self._stores)
            if good < 3 and req.read == "targeted"
            else [],
        )
        # Kept no longer than the first of its memories lives: an expiry bumps no write generation.
        soonest = min((c.record.expires_at for c in kept if c.record.expires_at), default=None)
        ttl = (
            CACHE_TTL_SECONDS
            if soonest is None
            else min(CACHE_TTL_SECONDS, (soonest - utcnow()).total_seconds())
        )
        if cache_key is not None and ttl > 0:
            cached = json.dumps(mask_value(out.model_dump(mode="json")))  # suggestions quote the query
            self._stores.cache.set(CACHE_NAMESPACE, cache_key, cached.encode(), ttl)
        out.query_time_ms = round((time.perf_counter() - started) * 1000)
        return out

    def plan(
        self, query: str, mode: str, limit: int, hops: int | None = None, read: str = "targeted"
    ) -> tuple[Plan, list[str], str]:
        """Sources for a mode, and the lexical-fallback warning when the model is not loaded."""
        settings = self._ranker.settings
        pool = max(limit * settings.candidate_factor, settings.min_candidates)
        route = AMBIENT if read == "ambient" else route_for(query)
        expand = read == "ambient"
        if mode == "fast":
            fast = Plan(dense=False, pool=pool, route=route, hops=hops or 0, expand=expand)
            return fast, [], "not used (fast mode)"
        warnings: list[str] = []
        dense, model_status = True, "ready"
        if not self._ranker.model_ready():
            dense = False
            model_status = self._stores.embedder.health().detail or "unavailable"
            warnings.append(
                f"embedding model unavailable ({model_status}); results come from lexical (BM25) search only"
            )
        if mode == "deep":
            deep_hops = settings.deep_hops if hops is None else hops
            return (
                Plan(dense=dense, fuzzy=True, expand=True, hops=deep_hops, pool=pool * 2, route=route),
                warnings,
                model_status,
            )
        auto_hops = settings.auto_hops if hops is None else hops
        return (
            Plan(dense=dense, hops=auto_hops, pool=pool, route=route, expand=expand),
            warnings,
            model_status,
        )

    def _cache_key(self, req: MemorySearchInput) -> str:
        """The request plus the write generation (records.WRITE_GENERATION): writes invalidate."""
        generation = int(self._stores.cache.get(*WRITE_GENERATION) or b"0")
        raw = json.dumps([req.model_dump(mode="json"), generation], sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()


AMBIENT_TOKEN_BUDGET = 2000


def check_query(text: str) -> str:
    query = text.strip()
    if not query:
        raise ValidationError(
            "Field 'query' must contain text, not only whitespace",
            code="VAL_EMPTY_QUERY",
            details={"field": "query", "provided": text},
            suggestion="Describe what you are looking for, e.g. 'how do we retry failed payments'.",
        )
    return query


def search_filter(
    memory_types: Sequence[str] | None,
    time_range: Any = None,
    *,
    include_superseded: bool = False,
    scope: dict[str, list[str]] | None = None,
    hide_expired: bool = True,
) -> PayloadFilter:
    """Active, unexpired records, of the given types, created in the time range, not superseded
    (by default), in the scope given (field → accepted values, core/scopes.py; None: any)."""
    scoped, also_any = filter_parts(scope or {})
    any_of: dict[str, Sequence[Any]] = dict(scoped)
    if memory_types:
        allowed = [t.value for t in MemoryType]
        bad = [t for t in memory_types if t not in allowed]
        if bad:
            raise ValidationError(
                f"Invalid memory type '{bad[0]}'. Must be one of: {', '.join(allowed)}",
                code="VAL_INVALID_TYPE",
                details={"field": "memory_types", "provided": bad, "allowed": allowed},
                suggestion="Use one of the valid memory types listed in the allowed values.",
            )
        any_of["type"] = list(dict.fromkeys(memory_types))
    # Expired records are never returned, even before the sweep soft-deletes them (core/ttl.py).
    ranges: dict[str, tuple[float | None, float | None]] = {}
    if hide_expired:
        ranges[EXPIRES_FIELD] = (utcnow().timestamp(), None)
    if time_range is not None and (time_range.start or time_range.end):
        start = time_range.start.timestamp() if time_range.start else None
        end = time_range.end.timestamp() if time_range.end else None
        ranges["created_at_ts"] = (start, end)
    # A flat, indexed copy of metadata.superseded (records.to_payload): a condition on an
    # unindexed nested field made every filtered vector search load payloads (~20x slower).
    not_equals = {} if include_superseded else {"superseded": "true"}
    return PayloadFilter(
        equals={"status": MemoryStatus.ACTIVE.value},
        any_of=any_of,
        ranges=ranges,
        not_equals=not_equals,
        also_any=also_any,
    )


def estimate_tokens(cand: Candidate) -> int:
    """About 4 characters a token for the text an agent reads, plus a fixed cost for the fields."""
    record = cand.record
    return -(-(len(record.content) + len(record.title or "")) // 4) + 40


def pack(ranked: list[Candidate], budget: int) -> tuple[list[Candidate], int, int]:
    """Take results in rank order while they fit the budget (seed 002's ambient pack).

    A result too large for what is left is skipped and smaller later ones may still fit.
    Returns (kept, tokens used, how many were left out).
    """
    kept: list[Candidate] = []
    used = 0
    for cand in ranked:
        cost = estimate_tokens(cand)
        if used + cost <= budget:
            kept.append(cand)
            used += cost
    return kept, used, len(ranked) - len(kept)


def diversify(ranked: list[Candidate], limit: int) -> list[Candidate]:
    """Ambient packs mix kinds: at most a third of the pack (2 at least) from one kind, order kept;
    the rest follow, so nothing is lost when one kind is all there is."""
    cap = max(2, -(-limit // 3))
    taken: dict[str, int] = {}
    first, rest = [], []
    for cand in ranked:
        kind = cand.record.type
        if taken.get(kind, 0) < cap:
            taken[kind] = taken.get(kind, 0) + 1
            first.append(cand)
        else:
            rest.append(cand)
    return first + rest


def _similarity(cand: Candidate, lexical: bool) -> float:
    if lexical:
        return cand.lexical
    return cand.similarity if cand.similarity is not None else 0.0


def _result(cand: Candidate, lexical: bool) -> SearchResult:
    record = cand.record
    assert cand.score is not None
    return SearchResult(
        memory_id=record.id,
        type=record.type,
        content=record.content,
        similarity=round(_similarity(cand, lexical), 4),
        relevance_score=round(cand.score.total, 4),
        metadata=record.metadata,
        title=record.title,
        created_at=record.created_at.isoformat(),
        route_used=cand.route_used,
        confidence=cand.confidence,
        stale=stale_mark(record),
    )
