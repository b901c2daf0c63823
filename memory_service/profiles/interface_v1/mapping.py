"""Seed 002 ("memory-interface-v1"): read / write / update mapped onto the shared services.

Nothing here stores, ranks or checks a kind rule of its own: a read is SearchService.search, a
write is MemoryService.add, an update is the archive service, FeedbackService.vote or
SupersedeService.supersede. This layer does what sits "directly under the interface" in the
seed: it maps the seed's fields onto the services' and adds the semantic rules the services do
not know about (repositories and evidence).

Mapping
    ``repo_id``          scope.project (seed 002 has no branches: writes are project-wide,
                         reads cover every branch); ``scope: global`` is stored under
                         scopes.GLOBAL_PROJECT and ``include_global`` adds that project to a read.
    ``memory.kind``      the memory type (the six seed-002 kinds are types of their own).
    ``confidence``, ``rationale``, ``evidence_refs``, ``links``  metadata of the record (with
                         ``repo_id``, the repository that wrote it); ``links.problem_id`` is the
                         shared problem link (metadata.problem_id: a SOLVES / FAILED_FOR edge),
                         ``links.related_memory_ids`` become RELATED_TO edges.
    ``update``           archive_state: archive service; utility_vote: FeedbackService (a vote
                         per (memory, problem)); fact_update_link: SupersedeService with
                         memory_id as the change. ``mode`` is passed on: a dry run validates
                         everything a commit would, and writes nothing.

Semantic rules (checked before anything is written, in dry runs too)
    1. A solution or failed_tactic needs ``links.problem_id`` naming a ``problem`` memory
       (the shared rule, core/write/kinds.py); on any other kind a given problem_id must
       name a problem too.
    2. Every memory a request names (links, memory_id, problem_id, old/new fact) must belong to
       the request's repository or be global; another repository's memory is "not found", so
       repositories stay isolated.
    3. Evidence: a ``change`` is written with at least one evidence_ref (what changed: a
       commit, a PR, a file). A fact_update_link needs evidence too, and the change it links
       usually carries it: the link's own evidence_refs are required only when the change has
       none. Other writes and utility votes take evidence optionally (the seed: "recommended,
       not always required").
    4. fact_update_link: memory_id is a ``change``, old_fact_id and new_fact_id are distinct
       ``fact`` memories, the old one still current (SupersedeService's checks).

Errors raised by the services name their own fields and tools (``metadata.problem_id``,
memory_add); :func:`rules.in_seed_terms` renames them to the request's fields and seed-002
operations. The shared rules are in rules.py, the three update operations in updates.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_service.core.errors import MemoryServiceError
from memory_service.core.memory.schemas import MemoryAddInput, RelationshipInput
from memory_service.core.models import PROBLEM_LINKED_KINDS, MemoryType
from memory_service.core.records import MEMORIES
from memory_service.core.scopes import GLOBAL_PROJECT, WILDCARD, ScopeInput
from memory_service.core.search.schemas import MemorySearchInput, SearchResult
from memory_service.core.search.signals import FACT_UPDATE_KINDS
from memory_service.core.write.kinds import PROBLEM_KIND
from memory_service.profiles.interface_v1 import updates
from memory_service.profiles.interface_v1.rules import (
    check_evidence,
    check_write_links,
    in_seed_terms,
    retool,
    strings,
)
from memory_service.profiles.interface_v1.schemas import (
    KINDS,
    AppliedRead,
    ArchiveState,
    Expand,
    ReadOutput,
    ReadRequest,
    ReadResult,
    ResultLinks,
    UpdateOutput,
    UpdateRequest,
    UtilityVote,
    WriteLinks,
    WriteMemory,
    WriteOutput,
    WriteRequest,
    parse_update,
)
from memory_service.profiles.services import ProfileServices

RELATED = "RELATED_TO"
PROBLEM_LINK_KINDS = frozenset({PROBLEM_KIND, *PROBLEM_LINKED_KINDS})


# --------------------------------------------------------------------------- read


def read(services: ProfileServices, req: ReadRequest) -> ReadOutput:
    """A search in the repository (and the global memories), answered in seed-002 terms."""
    expand = req.expand or Expand()
    kinds = list(req.kinds) if req.kinds else None
    search = MemorySearchInput(
        query=req.query,
        memory_types=kinds,
        scope=ScopeInput(project=req.repo_id, branch=WILDCARD),
        limit=req.limit,
        read=req.mode,
        semantic_hops=expand.semantic_hops,
        include_problem_links=expand.include_problem_links,
        include_fact_update_links=expand.include_fact_update_links,
    )
    extra = [GLOBAL_PROJECT] if req.include_global else []
    found = services.search.search(search, extra_projects=extra)
    # Without `kinds` a read sees every memory of the repository, whichever profile stored it. With
    # them, a linked record (which passes the read's scope only, search.py) must be of the six:
    # a design another profile linked to a problem is not what `kinds` asked for.
    hits = [r for r in found.results if r.type in KINDS] if kinds else found.results
    projects = _projects(services, [r.memory_id for r in hits])
    results = [_read_result(r, projects.get(r.memory_id), expand) for r in hits]
    return ReadOutput(
        repo_id=req.repo_id,
        mode=req.mode,
        results=results,
        total=len(results),
        applied=AppliedRead(
            include_global=req.include_global,
            kinds=kinds,
            limit=req.limit,
            semantic_hops=expand.semantic_hops,
            include_problem_links=expand.include_problem_links,
            include_fact_update_links=expand.include_fact_update_links,
        ),
        search_mode=found.search_mode,
        model_status=found.model_status,
        warnings=[retool(w) for w in found.warnings],
        query_time_ms=found.query_time_ms,
    )


def _projects(services: ProfileServices, ids: list[str]) -> dict[str, str]:
    """Each result's project (search results do not carry their scope): one read by id."""
    if not ids:
        return {}
    return {
        p.id: str(p.payload.get("project") or "") for p in services.stores.vectors.retrieve(MEMORIES, ids)
    }


def _read_result(hit: SearchResult, project: str | None, expand: Expand) -> ReadResult:
    meta = hit.metadata
    return ReadResult(
        memory_id=hit.memory_id,
        kind=hit.type,
        text=hit.content,
        scope="global" if project == GLOBAL_PROJECT else "repo",
        score=hit.relevance_score,
        match_confidence=hit.confidence,
        confidence=_number(meta.get("confidence")),
        rationale=meta.get("rationale") if isinstance(meta.get("rationale"), str) else None,
        evidence_refs=strings(meta.get("evidence_refs")),
        links=_links(meta),
        linked_via=_linked_via(hit, expand),
        superseded=bool(meta.get("superseded")),
        created_at=hit.created_at,
    )


def _links(meta: Mapping[str, Any]) -> ResultLinks:
    def text(key: str) -> str | None:
        value = meta.get(key)
        return value if isinstance(value, str) else None

    return ResultLinks(
        problem_id=text("problem_id"),
        related_memory_ids=strings(meta.get("related_memory_ids")),
        superseded_by=text("superseded_by"),
        superseded_by_change=text("superseded_by_change"),
    )


def _linked_via(hit: SearchResult, expand: Expand) -> str | None:
    """How a record the query itself did not find was reached: the search lists linked records
    (and an ambient read's graph neighbours) with route_used 'graph'; the link family follows
    from the kind (signals.edge_family: problem links join problems, solutions and failed
    tactics; fact-update links join facts and changes)."""
    if hit.route_used != "graph":
        return None
    if expand.include_problem_links and hit.type in PROBLEM_LINK_KINDS:
        return "problem_link"
    if expand.include_fact_update_links and hit.type in FACT_UPDATE_KINDS:
        return "fact_update_link"
    return "graph"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# --------------------------------------------------------------------------- write

WRITE_FIELDS = {
    "metadata.problem_id": "memory.links.problem_id",
    "metadata": "memory",
    "content": "memory.text",
    "scope.project": "repo_id",
    "scope": "memory.scope",
    "type": "memory.kind",
}


def write(services: ProfileServices, req: WriteRequest) -> WriteOutput:
    """Check the seed's semantic rules, then store through MemoryService.add."""
    memory = req.memory
    links = memory.links or WriteLinks()
    check_evidence(memory)
    check_write_links(services, req.repo_id, memory.kind, links)
    item = MemoryAddInput(
        type=MemoryType(memory.kind),
        content=memory.text,
        metadata=_write_metadata(req.repo_id, memory, links),
        relationships=_relationships(memory.kind, links) or None,
        scope=ScopeInput(project=GLOBAL_PROJECT if memory.scope == "global" else req.repo_id, branch=None),
    )
    try:
        added = services.memory.add(item)
    except MemoryServiceError as exc:
        raise in_seed_terms(exc, WRITE_FIELDS) from None
    return WriteOutput(
        repo_id=req.repo_id,
        memory_id=added.memory_id,
        kind=memory.kind,
        scope=memory.scope,
        status=added.status,
        confidence=memory.confidence,
        links=ResultLinks(
            problem_id=links.problem_id, related_memory_ids=list(links.related_memory_ids or [])
        ),
        evidence_refs=list(memory.evidence_refs or []),
        redacted_preview=added.redacted_preview,
        secrets_redacted=added.secrets_redacted,
        conflicts=[c.model_dump() for c in added.conflicts],
    )


def _write_metadata(repo_id: str, memory: WriteMemory, links: WriteLinks) -> dict[str, Any]:
    """The seed's audit fields, kept on the record; ``repo_id`` says where a global memory came from."""
    meta: dict[str, Any] = {"confidence": memory.confidence, "repo_id": repo_id}
    if memory.rationale is not None:
        meta["rationale"] = memory.rationale
    if memory.evidence_refs:
        meta["evidence_refs"] = list(memory.evidence_refs)
    if links.problem_id is not None:
        meta["problem_id"] = links.problem_id
    if links.related_memory_ids:
        meta["related_memory_ids"] = list(links.related_memory_ids)
    return meta


def _relationships(kind: str, links: WriteLinks) -> list[RelationshipInput]:
    """RELATED_TO edges for related memories (and for the problem of a kind the shared rule does
    not link by itself: a solution's or failed tactic's edge comes from metadata.problem_id)."""
    rels = [RelationshipInput(type=RELATED, target_id=mid) for mid in links.related_memory_ids or []]
    if links.problem_id is not None and kind not in PROBLEM_LINKED_KINDS:
        rels.append(RelationshipInput(type=RELATED, target_id=links.problem_id))
    return rels


# --------------------------------------------------------------------------- update

UPDATE_FIELDS = {
    "memory_id": "memory_id",
    "change_id": "memory_id",
    "problem_id": "update.problem_id",
    "old_fact_id": "update.old_fact_id",
    "new_fact_id": "update.new_fact_id",
    "evidence_refs": "update.evidence_refs",
    "rationale": "update.rationale",
    "vote": "update.vote",
}


def update(services: ProfileServices, req: UpdateRequest) -> UpdateOutput:
    """Validate the ``update`` branch, check the repository, and run the operation (or preview it)."""
    body = parse_update(req.update)
    try:
        if isinstance(body, ArchiveState):
            return updates.archive_state(services, req, body)
        if isinstance(body, UtilityVote):
            return updates.utility_vote(services, req, body)
        return updates.fact_update_link(services, req, body)
    except MemoryServiceError as exc:
        raise in_seed_terms(exc, UPDATE_FIELDS) from None
