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
memory_add); :func:`in_seed_terms` renames them to the request's fields and seed-002 operations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory_service.core.errors import MemoryServiceError, NotFoundError, ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.memory.feedback_schemas import MemoryFeedbackInput, MemorySupersedeInput
from memory_service.core.memory.schemas import MemoryAddInput, RelationshipInput
from memory_service.core.models import PROBLEM_LINKED_KINDS, MemoryStatus, MemoryType
from memory_service.core.records import MEMORIES
from memory_service.core.scopes import GLOBAL_PROJECT, WILDCARD, ScopeInput
from memory_service.core.search.schemas import MemorySearchInput, SearchResult
from memory_service.core.search.signals import FACT_UPDATE_KINDS
from memory_service.core.write.kinds import PROBLEM_KIND
from memory_service.profiles.interface_v1.schemas import (
    KINDS,
    AppliedRead,
    ArchiveState,
    Expand,
    FactUpdateLink,
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
EVIDENCE_KINDS = frozenset({"change"})  # rule 3: kinds written with at least one evidence_ref


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
        warnings=[_retool(w) for w in found.warnings],
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
        evidence_refs=_strings(meta.get("evidence_refs")),
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
        related_memory_ids=_strings(meta.get("related_memory_ids")),
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


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


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


def check_evidence(memory: WriteMemory) -> None:
    """Rule 3: a ``change`` names what changed."""
    if memory.kind in EVIDENCE_KINDS and not memory.evidence_refs:
        raise ValidationError(
            f"A '{memory.kind}' memory needs at least one evidence reference",
            code="VAL_EVIDENCE_REQUIRED",
            details={"field": "memory.evidence_refs", "kind": memory.kind, "rule": "change_needs_evidence"},
            suggestion="Add memory.evidence_refs with what shows the change, e.g. ['commit:3f2a91c', "
            "'pr:1234', 'src/payments/retry.py'].",
        )


def check_write_links(services: ProfileServices, repo_id: str, kind: str, links: WriteLinks) -> None:
    """Rules 1 and 2 for a write's links. The problem link of a solution or failed tactic is
    checked by MemoryService.add (the shared rule); here: the repository of every linked memory,
    and the problem link of the other kinds."""
    named = {"memory.links.problem_id": links.problem_id} if links.problem_id else {}
    for i, mid in enumerate(links.related_memory_ids or []):
        named[f"memory.links.related_memory_ids[{i}]"] = mid
    found = in_repository(services, repo_id, named)
    if links.problem_id is None or kind in PROBLEM_LINKED_KINDS:
        return
    problem = found.get("memory.links.problem_id")
    if problem is None or problem.get("status") != MemoryStatus.ACTIVE:
        raise _problem_not_found(links.problem_id)
    if problem.get("type") != PROBLEM_KIND:
        raise _not_a_problem(links.problem_id, str(problem.get("type")), kind)


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
            return _archive(services, req, body)
        if isinstance(body, UtilityVote):
            return _vote(services, req, body)
        return _fact_update_link(services, req, body)
    except MemoryServiceError as exc:
        raise in_seed_terms(exc, UPDATE_FIELDS) from None


def _archive(services: ProfileServices, req: UpdateRequest, body: ArchiveState) -> UpdateOutput:
    in_repository(services, req.repo_id, {"memory_id": req.memory_id})
    out = services.archive.set_archived(
        req.memory_id, body.archived, rationale=body.rationale, dry_run=req.mode == "dry_run"
    )
    verb = "archived" if body.archived else "restored"
    if out.status == "unchanged":
        effects = [
            f"memory {out.memory_id} is already {'archived' if out.archived else 'active'}: nothing to do"
        ]
    elif out.status == "dry_run":
        effects = [f"memory {out.memory_id} would be {verb}" + _archive_note(body.archived, "would be")]
    else:
        effects = [f"memory {out.memory_id} was {verb}" + _archive_note(body.archived, "is")]
    return _update_output(req, "archive_state", _status(out.status), effects, out.model_dump(mode="json"))


def _archive_note(archived: bool, verb: str) -> str:
    return (
        f": it {verb} hidden from memory.read until restored (archived: false)"
        if archived
        else f": it {verb} found by memory.read again"
    )


def _vote(services: ProfileServices, req: UpdateRequest, body: UtilityVote) -> UpdateOutput:
    in_repository(services, req.repo_id, {"memory_id": req.memory_id, "update.problem_id": body.problem_id})
    out = services.feedback.vote(
        MemoryFeedbackInput(
            memory_id=req.memory_id,
            problem_id=body.problem_id,
            vote=body.vote,
            rationale=body.rationale,
            evidence_refs=body.evidence_refs,
            mode=req.mode,
        )
    )
    verb = "would be" if req.mode == "dry_run" else "was"
    effects = [
        f"utility vote {body.vote:g} on memory {out.memory_id} for problem {out.problem_id} {verb} "
        "appended (votes are never overwritten)"
    ]
    return _update_output(req, "utility_vote", _status(out.status), effects, out.model_dump(mode="json"))


def _fact_update_link(services: ProfileServices, req: UpdateRequest, body: FactUpdateLink) -> UpdateOutput:
    in_repository(
        services,
        req.repo_id,
        {
            "memory_id": req.memory_id,
            "update.old_fact_id": body.old_fact_id,
            "update.new_fact_id": body.new_fact_id,
        },
    )
    check_link_evidence(services, req.memory_id, body)
    out = services.supersede.supersede(
        MemorySupersedeInput(
            old_fact_id=body.old_fact_id,
            new_fact_id=body.new_fact_id,
            change_id=req.memory_id,
            rationale=body.rationale,
            evidence_refs=body.evidence_refs,
            mode=req.mode,
        )
    )
    verb = "would be" if req.mode == "dry_run" else "is"
    effects = [
        f"fact {out.old_fact_id} {verb} linked to its replacement {out.new_fact_id} through change "
        f"{out.change_id} (fact_updates chain: {' -> '.join(out.chain)})",
        f"fact {out.old_fact_id} {verb} left out of memory.read results, except as a chain neighbour "
        "(expand.include_fact_update_links)",
    ]
    return _update_output(req, "fact_update_link", _status(out.status), effects, out.model_dump(mode="json"))


def check_link_evidence(services: ProfileServices, change_id: str, body: FactUpdateLink) -> None:
    """Rule 3 for a fact_update_link: evidence on the link, or on the change it links. A memory
    that is not a change is left to SupersedeService, which refuses it."""
    if body.evidence_refs:
        return
    change = services.memory.load(change_id, field="memory_id")
    if change.type != MemoryType.CHANGE or _strings(change.metadata.get("evidence_refs")):
        return
    raise ValidationError(
        "A fact_update_link needs evidence: the change it links has none, and the update gives none",
        code="VAL_EVIDENCE_REQUIRED",
        details={
            "field": "update.evidence_refs",
            "change_id": change.id,
            "rule": "fact_update_needs_evidence",
        },
        suggestion="Add update.evidence_refs with what shows the change invalidated the fact, e.g. "
        "['commit:3f2a91c', 'src/config.py'].",
    )


def _status(service_status: str) -> str:
    """The services' statuses (recorded, committed, archived, restored...) in three words."""
    if service_status in ("dry_run", "unchanged"):
        return service_status
    return "committed"


def _update_output(
    req: UpdateRequest, kind: str, status: str, effects: list[str], result: dict[str, Any]
) -> UpdateOutput:
    return UpdateOutput(
        repo_id=req.repo_id,
        memory_id=str(result.get("memory_id") or req.memory_id),
        mode=req.mode,
        type=kind,
        status=status,
        effects=effects,
        result=result,
    )


# --------------------------------------------------------------------------- shared rules


def in_repository(
    services: ProfileServices, repo_id: str, named: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Rule 2: the memories a request names (field -> id) that exist must be the repository's own
    or global; returns their payloads by field. Unknown ids are left to the services, which say
    which kind of memory was not found.

    Raises:
        ValidationError: an id is not a UUID (VAL_INVALID_UUID).
        NotFoundError: an id names another repository's memory (NF_MEMORY, like an unknown id).
    """
    ids = {field: parse_uuid(mid, field=field) for field, mid in named.items()}
    if not ids:
        return {}
    stored = {p.id: p.payload for p in services.stores.vectors.retrieve(MEMORIES, list(set(ids.values())))}
    found: dict[str, dict[str, Any]] = {}
    for field, mid in ids.items():
        payload = stored.get(mid)
        if payload is None or payload.get("status") == MemoryStatus.DELETED:
            continue
        if payload.get("project") not in (repo_id, GLOBAL_PROJECT):
            raise NotFoundError(
                f"Memory '{mid}' not found in repository '{repo_id}'",
                code="NF_MEMORY",
                details={"field": field, "provided": named[field], "repo_id": repo_id},
                suggestion="Use an id memory.read returns for this repo_id (a repository's memories are "
                "its own; memories written with scope 'global' are shared).",
            )
        found[field] = payload
    return found


def _problem_not_found(problem_id: str) -> NotFoundError:
    return NotFoundError(
        f"Problem '{problem_id}' not found",
        code="NF_PROBLEM",
        details={"field": "memory.links.problem_id", "provided": problem_id},
        suggestion=SUGGESTIONS["NF_PROBLEM"],
    )


def _not_a_problem(problem_id: str, found: str, kind: str) -> ValidationError:
    return ValidationError(
        f"Memory '{problem_id}' is a '{found}' memory, not a problem",
        code="VAL_PROBLEM_LINK_INVALID",
        details={
            "field": "memory.links.problem_id",
            "provided": problem_id,
            "found_type": found,
            "expected_type": PROBLEM_KIND,
            "kind": kind,
        },
        suggestion=SUGGESTIONS["VAL_PROBLEM_LINK_INVALID"],
    )


# --------------------------------------------------------------------------- errors in seed terms

SUGGESTIONS = {
    "VAL_PROBLEM_LINK_REQUIRED": "Give memory.links.problem_id: the memory_id of a 'problem' memory (write "
    "one with memory.write kind='problem' first, or find it with memory.read kinds=['problem']).",
    "VAL_PROBLEM_LINK_INVALID": "Point links.problem_id (or update.problem_id) at a memory of kind "
    "'problem' (memory.read kinds=['problem'] finds them).",
    "NF_PROBLEM": "Write the problem first (memory.write kind='problem') and pass its memory_id, or find "
    "it with memory.read kinds=['problem'].",
}
# The services' words for their own tools, as seed-002 operations (longest first).
_TOOLS = (
    ("memory_search memory_types=['problem']", "memory.read kinds=['problem']"),
    ("memory_add type='problem'", "memory.write kind='problem'"),
    ("memory_search", "memory.read"),
    ("memory_add", "memory.write"),
    ("memory_get", "memory.read"),
    ("memory_feedback", "memory.update utility_vote"),
    ("memory_supersede", "memory.update fact_update_link"),
    ("include_superseded=true", "expand.include_fact_update_links"),
)
_RELATIONSHIP_FIELD = re.compile(r"^relationships\[(\d+)\]\.target_id$")


def in_seed_terms(exc: MemoryServiceError, fields: Mapping[str, str]) -> MemoryServiceError:
    """The same error (code, message, category) with the request's field names and seed-002
    operations in its details and suggestion."""
    field = exc.details.get("field")
    if isinstance(field, str):
        exc.details = {**exc.details, "field": _rename(field, fields)}
    exc.suggestion = SUGGESTIONS.get(exc.code) or _retool(exc.suggestion)
    return exc


def _rename(field: str, fields: Mapping[str, str]) -> str:
    if match := _RELATIONSHIP_FIELD.match(field):
        return f"memory.links.related_memory_ids[{match.group(1)}]"
    for ours in sorted(fields, key=len, reverse=True):
        if field == ours or field.startswith((f"{ours}.", f"{ours}[")):
            return fields[ours] + field[len(ours) :]
    return field


def _retool(text: str) -> str:
    for ours, theirs in _TOOLS:
        text = text.replace(ours, theirs)
    return text
