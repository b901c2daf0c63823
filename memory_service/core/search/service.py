"""memory_search: hybrid search with modes, routing and suggestions (seed 001 §4.2.2, seed 004).

``auto`` (default) runs dense + BM25, fused and re-scored, with the kind preferences of the route
the query's shape picks; ``fast`` runs BM25 only and caches results (no query embedding, so no
model wait); ``deep`` adds a fuzzy-corrected lexical query and one hop of graph expansion. When
the embedding model is not loaded every mode falls back to BM25, and the response says so.

Linked reads (``include_problem_links`` / ``include_fact_update_links`` true) follow each problem
in the results with its solutions and failed tactics (a solution or failed tactic with its
problem), and each fact or change with its fact-update chain neighbours (results.attach_links):
route_used "graph", counted toward ``limit``, listed even below ``min_similarity``, and passing
only the read's scope (not its type, tag, time or superseded filters: a superseded fact is
exactly what a chain shows). False drops those links from the graph expansion of ambient and
deep reads; None keeps the mode's own behaviour.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memory_service.core.errors import ValidationError, memory_not_found
from memory_service.core.guards import parse_uuid
from memory_service.core.models import MemoryStatus, utcnow
from memory_service.core.records import MEMORIES, WRITE_GENERATION
from memory_service.core.redaction.sanitize import mask_value
from memory_service.core.scopes import read_conditions
from memory_service.core.search.candidates import Plan
from memory_service.core.search.filter import search_filter
from memory_service.core.search.ranker import Ranker
from memory_service.core.search.results import pack_results
from memory_service.core.search.routing import AMBIENT, route_for
from memory_service.core.search.schemas import MemorySearchInput, MemorySearchOutput
from memory_service.core.search.signals import FACT_UPDATE_LINKS, PROBLEM_KIND, PROBLEM_LINKS
from memory_service.core.search.suggest import suggestions_for
from memory_service.settings import RankingWeights

CACHE_NAMESPACE = "search_fast"
CACHE_TTL_SECONDS = 300.0


class SearchService:
    def __init__(self, ranker: Ranker) -> None:
        self._ranker = ranker
        self._stores = ranker.stores

    @property
    def ranker(self) -> Ranker:
        return self._ranker

    def search(
        self,
        req: MemorySearchInput,
        *,
        labels: Sequence[str] | None = None,
        extra_projects: Sequence[str] = (),
        weights: RankingWeights | None = None,
    ) -> MemorySearchOutput:
        """``labels``: only records a compatibility profile stored under one of these kinds.
        ``extra_projects``: projects read besides the scope's (scopes.GLOBAL_PROJECT: seed 002's
        include_global); a read of every project already has them. ``weights``: the re-score's
        weights when a profile ranks by its own formula (seed 004's FR-024), else the settings'."""
        started = time.perf_counter()
        query = check_query(req.query)
        scope = with_projects(read_conditions(req.scope, self._ranker.scope), extra_projects)
        problem = self._problem(req.problem_id)
        flt = search_filter(
            req.memory_types,
            req.time_range,
            include_superseded=req.include_superseded,
            scope=scope,
            hide_expired=False,  # the ranker drops expired hits: cheaper than a range on every query
            tags=req.tags,
            labels=labels,
        )
        cache_key = self._cache_key(req, scope, labels, weights) if req.mode == "fast" else None
        if cache_key is not None:
            hit = self._stores.cache.get(CACHE_NAMESPACE, cache_key)
            if hit is not None:
                out = MemorySearchOutput.model_validate_json(hit)
                out.cached = True
                out.query_time_ms = round((time.perf_counter() - started) * 1000)
                return out
        plan, warnings, model_status = self.plan(query, req.mode, req.limit, req.semantic_hops, req.read)
        plan = replace(plan, problem=problem, weights=weights, **link_options(req, scope))
        packed = pack_results(query, self._ranker.rank(query, flt, plan), req, plan)
        warnings += packed.warnings
        results = packed.results
        good = sum(1 for r in results if (r.confidence or 0) >= self._ranker.settings.good_confidence)
        out = MemorySearchOutput(
            results=results,
            total=len(results),
            query_time_ms=0,
            search_mode="semantic" if plan.dense else "lexical",
            model_status=model_status,
            warnings=warnings,
            mode=req.mode,
            route=plan.route.name,
            pack_tokens=packed.pack_tokens,
            suggestions=suggestions_for(req, packed.ranked, good, self._stores)
            if good < 3 and req.read == "targeted"
            else [],
        )
        # Kept no longer than the first of its memories lives: an expiry bumps no write generation.
        soonest = min((c.record.expires_at for c in packed.kept if c.record.expires_at), default=None)
        ttl = (
            CACHE_TTL_SECONDS
            if soonest is None
            else min(CACHE_TTL_SECONDS, (soonest - utcnow()).total_seconds())
        )
        if cache_key is not None and ttl > 0:
            # The cache is a store: masked like one (suggestions quote the query). The answer is
            # masked once, on its way out, as every tool's is (the tool layer's last guard).
            cached = json.dumps(mask_value(out.model_dump(mode="json")))
            self._stores.cache.set(CACHE_NAMESPACE, cache_key, cached.encode(), ttl)
        out.query_time_ms = round((time.perf_counter() - started) * 1000)
        return out

    def _problem(self, problem_id: str | None) -> str | None:
        """The read's problem context (canonical id): a problem memory, active or archived (its
        votes stand); NF_MEMORY when there is none, VAL_PROBLEM_LINK_INVALID for another kind."""
        if problem_id is None:
            return None
        pid = parse_uuid(problem_id, field="problem_id")
        found = self._stores.vectors.retrieve(MEMORIES, [pid])
        readable = (MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value)
        if not found or found[0].payload.get("status") not in readable:
            raise memory_not_found(problem_id, field="problem_id")
        kind = found[0].payload.get("type")
        if kind != PROBLEM_KIND:
            raise ValidationError(
                f"Memory '{pid}' is a '{kind}' memory, not a problem",
                code="VAL_PROBLEM_LINK_INVALID",
                details={"field": "problem_id", "provided": problem_id, "found_type": kind},
                suggestion="Pass the id of a memory of type 'problem' (find it with memory_search "
                "memory_types=['problem']), or leave problem_id out.",
            )
        return pid

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

    def _cache_key(
        self,
        req: MemorySearchInput,
        scope: dict[str, list[str]],
        labels: Sequence[str] | None,
        weights: RankingWeights | None,
    ) -> str:
        """The request, the scope read (the caller's branch moves with a checkout), the labels, the
        weights and the write generation (records.WRITE_GENERATION): writes invalidate."""
        generation = int(self._stores.cache.get(*WRITE_GENERATION) or b"0")
        ranked_by = weights.model_dump() if weights is not None else None
        parts = [req.model_dump(mode="json"), scope, list(labels or []), ranked_by, generation]
        raw = json.dumps(parts, sort_keys=True)
        return hashlib.sha256(raw.encode()).hexdigest()


def with_projects(scope: dict[str, list[str]], extra: Sequence[str]) -> dict[str, list[str]]:
    """The read's conditions with ``extra`` projects OR-ed into its project condition; a read
    without one (every project) is left as it is."""
    more = [p for p in extra if p]
    if not more or "project" not in scope:
        return scope
    return {**scope, "project": list(dict.fromkeys([*scope["project"], *more]))}


def link_options(req: MemorySearchInput, scope: dict[str, list[str]]) -> dict[str, Any]:
    """The plan fields of a linked read: families to attach (true), families graph expansion must
    not follow (false), and what a linked memory must pass: the read's scope, active, any kind."""
    asked = {PROBLEM_LINKS: req.include_problem_links, FACT_UPDATE_LINKS: req.include_fact_update_links}
    links = frozenset(family for family, wanted in asked.items() if wanted is True)
    return {
        "links": links,
        "skip_links": frozenset(family for family, wanted in asked.items() if wanted is False),
        "link_filter": search_filter(None, include_superseded=True, scope=scope, hide_expired=False)
        if links
        else None,
    }


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
