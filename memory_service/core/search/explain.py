"""memory_explain (seed 000): why each memory ranks where it does, for a query and/or ids.

Query items come from the very ranking memory_search runs (``mode="auto"``, same filters, same
:class:`Ranker`), so an item's ``score.total`` equals that memory's ``relevance_score`` in
memory_search. Ids outside the query's candidates are scored by the same function with the base
relevance they have there (0 when a query was given and they were not retrieved; null without a
query). Problems with single ids are reported in ``errors`` and ``missing_ids``, never raised.
"""

from __future__ import annotations

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError
from memory_service.core.guards import parse_uuid
from memory_service.core.models import MemoryStatus, Scope, utcnow
from memory_service.core.records import MEMORIES, MEMORY_LABEL, from_payload
from memory_service.core.scopes import CallerScope, fixed, read_conditions
from memory_service.core.search.candidates import Candidate
from memory_service.core.search.explain_schemas import (
    ExplainError,
    ExplainItem,
    ExplainMetadata,
    Matches,
    MemoryExplainInput,
    MemoryExplainOutput,
    PackContext,
    Retrieval,
    ScoreView,
)
from memory_service.core.search.filter import search_filter
from memory_service.core.search.results import annotate
from memory_service.core.search.routing import route_for
from memory_service.core.search.service import SearchService
from memory_service.core.ttl import EXPIRES_FIELD, NEVER

SNIPPET_CHARS = 200
CHARS_PER_TOKEN = 4
MAX_PACK_RELATIONSHIPS = 10


class ExplainService:
    def __init__(self, search: SearchService, scope: Scope | CallerScope) -> None:
        self._search = search
        self._ranker = search.ranker
        self._stores = search.ranker.stores
        self._scope = fixed(scope)

    def explain(self, req: MemoryExplainInput) -> MemoryExplainOutput:
        errors: list[ExplainError] = []
        query = (req.query or "").strip() or None
        ids, bad = _dedupe(req.ids or [])
        errors += bad
        if query is None and not req.ids:
            errors.insert(
                0,
                ExplainError(
                    code="INVALID_ARGUMENT", message="at least one of query or ids is required", field="query"
                ),
            )
        ranked: list[Candidate] = []
        if query is not None:
            flt = search_filter(None, scope=self._read_scope(req.project))
            plan, _, _ = self._search.plan(query, "auto", req.limit)
            ranked = self._ranker.rank(query, flt, plan)
        top = ranked[: req.limit]
        rank_of = {c.record.id: i for i, c in enumerate(top, start=1)}
        by_id = {c.record.id: c for c in ranked}
        looked_up, missing = self._lookup(ids, by_id, req.project, errors, query)
        wanted = set(ids)
        extra = [c for c in looked_up if c.record.id not in rank_of]
        annotate(query, [*top, *extra])
        items = [
            self._item(c, "query+id_lookup" if c.record.id in wanted else "query", rank_of, req, query)
            for c in top
        ]
        items += [self._item(c, "id_lookup", rank_of, req, query) for c in extra]
        return MemoryExplainOutput(
            items=items,
            missing_ids=missing,
            errors=errors,
            metadata=ExplainMetadata(
                query=query,
                project=req.project,
                requested_ids_count=len(ids),
                returned_items_count=len(items),
                include_pack_context=req.include_pack_context,
            ),
        )

    def _read_scope(self, project: str | None) -> dict[str, list[str]]:
        """What a query ranks over: the given project (every branch), else what memory_search
        reads by default (the caller's branch and project-wide memories; any, without a project)."""
        if project is not None:
            return {"project": [project]}
        caller = self._scope.current()
        return read_conditions(None, caller) if caller.project else {}

    def _lookup(
        self,
        ids: list[str],
        ranked: dict[str, Candidate],
        project: str | None,
        errors: list[ExplainError],
        query: str | None,
    ) -> tuple[list[Candidate], list[str]]:
        """Candidates for explicit ids (reusing query scores when ranked), and the ids not in scope."""
        if not ids:
            return [], []
        points = {p.id: p for p in self._stores.vectors.retrieve(MEMORIES, ids)}
        found: list[Candidate] = []
        fresh: list[Candidate] = []
        missing: list[str] = []
        for mid in ids:
            point = points.get(mid)
            if (
                point is None
                or point.payload.get("status") != MemoryStatus.ACTIVE
                or float(point.payload.get(EXPIRES_FIELD, NEVER)) <= utcnow().timestamp()  # expired (TTL)
            ):
                missing.append(mid)
                errors.append(
                    ExplainError(code="NOT_FOUND", message=f"memory '{mid}' not found", field="ids")
                )
                continue
            if project is not None and point.payload.get("project") != project:
                missing.append(mid)
                errors.append(
                    ExplainError(
                        code="PROJECT_MISMATCH",
                        message=f"memory '{mid}' belongs to project '{point.payload.get('project')}', "
                        f"not '{project}'",
                        field="project",
                    )
                )
                continue
            cand = ranked.get(mid) or Candidate(record=from_payload(point.payload))
            if mid not in ranked:
                fresh.append(cand)
            found.append(cand)
        if fresh:
            bases: dict[str, float | None] = {c.record.id: (0.0 if query else None) for c in fresh}
            route = route_for(query) if query else route_for("")
            self._ranker.score_candidates(query, fresh, bases, route)
        return found, missing

    def _item(
        self,
        cand: Candidate,
        source: str,
        rank_of: dict[str, int],
        req: MemoryExplainInput,
        query: str | None,
    ) -> ExplainItem:
        rec = cand.record
        assert cand.score is not None
        total = cand.score.total if (query is not None or cand.score.components["base"] is not None) else None
        wanted_project = req.project if req.project is not None else self._scope.current().project
        return ExplainItem(
            id=rec.id,
            kind=rec.type,
            title=rec.title,
            created_at=rec.created_at.isoformat(),
            project=rec.scope.project,
            retrieval=Retrieval(source=source, rank=rank_of.get(rec.id)),
            score=ScoreView(total=total, components=dict(cand.score.components)),
            matches=Matches(query_terms=cand.matches, project_match=rec.scope.project == wanted_project),
            pack_context=self._pack(cand, rank_of) if req.include_pack_context else None,
        )

    def _pack(self, cand: Candidate, rank_of: dict[str, int]) -> PackContext:
        rec = cand.record
        try:
            edges = self._stores.graph.edges_of(MEMORY_LABEL, rec.id)
        except (ServiceUnavailableError, MemoryServiceError):
            edges = []
        rels = sorted(
            (
                {
                    "type": e.type,
                    "direction": "outgoing" if e.source_id == rec.id else "incoming",
                    "other_id": e.target_id if e.source_id == rec.id else e.source_id,
                }
                for e in edges
            ),
            key=lambda r: (r["type"], r["direction"], r["other_id"]),
        )[:MAX_PACK_RELATIONSHIPS]
        return PackContext(
            in_pack=rec.id in rank_of,
            pack_position=rank_of.get(rec.id),
            token_estimate=max(1, len(rec.content) // CHARS_PER_TOKEN),
            snippet=rec.content[:SNIPPET_CHARS],
            relationships=rels,
        )


def _dedupe(raw: list[str | int]) -> tuple[list[str], list[ExplainError]]:
    """Canonical ids in first-seen order; malformed ones (and integers, seed 000's id type, which
    name no memory here) become INVALID_ARGUMENT errors."""
    out: dict[str, None] = {}
    errors = []
    for i, value in enumerate(raw):
        try:
            if isinstance(value, int):
                raise ValueError(value)
            out.setdefault(parse_uuid(value, field=f"ids[{i}]"), None)
        except (MemoryServiceError, ValueError):
            kind = "an integer, not a memory id" if isinstance(value, int) else "not a memory id"
            message = f"'{value}' is {kind} (UUID)"
            errors.append(ExplainError(code="INVALID_ARGUMENT", message=message, field=f"ids[{i}]"))
    return list(out), errors
