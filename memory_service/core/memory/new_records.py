"""New memories before they are written (memory_add, memory_bulk_add): validated, sanitised and
shaped into a record with the edges it brings; the near-duplicates an add reports as conflicts;
and the views of a new record an answer and its audit event show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_service.core import actor, ttl
from memory_service.core.code.citations import code_ref_edges
from memory_service.core.errors import MemoryServiceError, NotFoundError
from memory_service.core.guards import check_metadata, normalise_relationship_type, parse_uuid
from memory_service.core.memory.audit_edges import edge_ref
from memory_service.core.memory.schemas import BulkError, ConflictItem, MemoryAddInput, RelationshipInput
from memory_service.core.models import MemoryRecord, MemoryStatus, content_hash, derive_title, utcnow
from memory_service.core.ports import GraphEdge, GraphNode, PayloadFilter
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores
from memory_service.core.redaction.sanitize import kinds_note, preview, scrub_text, scrub_value
from memory_service.core.scopes import CallerScope, resolve_write
from memory_service.core.write.dedupe import dedupe_key
from memory_service.core.write.kinds import PROBLEM_EDGE, check_problem_link
from memory_service.core.write.request_key import new_id
from memory_service.core.write.rules import refuse_chain_keys
from memory_service.settings import MemorySettings


@dataclass
class NewRecord:
    """A memory about to be stored, the edges it brings, and the kinds of secret masked in it."""

    record: MemoryRecord
    edges: list[GraphEdge]
    redacted: list[str]


class NewRecords:
    """Makes new records (nothing is written here) and finds an add's conflicts."""

    def __init__(self, stores: Stores, settings: MemorySettings, scope: CallerScope, actor: str) -> None:
        self._stores = stores
        self._settings = settings
        self._scope = scope
        self._actor = actor

    def make(
        self, item: MemoryAddInput, prefix: str, *, dedupe: bool = True, label: str | None = None
    ) -> NewRecord:
        """Validate, sanitise and shape one new memory (nothing is written yet)."""
        memory_type = str(item.type)
        scope = resolve_write(item.scope, self._scope.current(), memory_type, field=f"{prefix}scope")
        content, redacted = scrub_text(item.content)
        metadata, meta_redacted = scrub_value(item.metadata or {})
        redacted += meta_redacted
        meta = check_new_metadata(memory_type, metadata, field=f"{prefix}metadata")
        relationships = item.relationships or []
        problem = check_problem_link(self._stores, memory_type, meta, relationships, prefix)
        policy = ttl.parse_policy(item.ttl_policy, memory_type)
        now = utcnow()
        record = MemoryRecord(
            id=new_id(),  # the same on a re-sent call (core/write/request_key.py)
            type=memory_type,
            content=content,
            metadata=meta,
            title=derive_title(content, meta),
            tags=tags_of(meta),
            label=label,
            scope=scope,
            content_hash=content_hash(content),
            created_at=now,
            updated_at=now,
            actor=actor.effective(self._actor),
            ttl_policy=policy.value,
            expires_at=ttl.expires_at(policy, now, meta),
            dedupe_key=dedupe_key(
                f"{memory_type}:{label}" if label else memory_type, scope, meta, content, item.idempotency_key
            )
            if dedupe and (self._settings.dedupe or item.idempotency_key is not None)
            else None,
        )
        edges = self._edges(record.id, relationships, prefix)
        edges += code_ref_edges(self._stores.graph, record.id, meta, field=f"{prefix}metadata")
        if problem is not None:  # seed 002: a solution / failed tactic links to its problem
            edges.append(GraphEdge(PROBLEM_EDGE[record.type], MEMORY_LABEL, record.id, MEMORY_LABEL, problem))
        return NewRecord(record, edges, redacted)

    def _edges(self, source_id: str, rels: list[RelationshipInput], prefix: str) -> list[GraphEdge]:
        edges = []
        targets: dict[str, str] = {}
        for i, rel in enumerate(rels):
            field = f"{prefix}relationships[{i}]"
            rel_type = normalise_relationship_type(rel.type, field=f"{field}.type")
            target = parse_uuid(rel.target_id, field=f"{field}.target_id")
            targets[target] = f"{field}.target_id"
            edges.append(GraphEdge(rel_type, MEMORY_LABEL, source_id, MEMORY_LABEL, target))
        if targets:
            found = self._stores.vectors.retrieve(MEMORIES, list(targets))
            active = {p.id for p in found if p.payload.get("status") == MemoryStatus.ACTIVE}
            for target, field in targets.items():
                if target not in active:
                    raise NotFoundError(
                        f"Relationship target '{target}' not found",
                        code="NF_RELATIONSHIP_TARGET",
                        details={"field": field, "provided": target},
                        suggestion="Link only to existing memories: create the target first "
                        "(memory_add) or look its ID up with memory_search.",
                    )
        return edges

    def conflicts(self, record: MemoryRecord, vector: list[float] | None) -> list[ConflictItem]:
        limit = self._settings.conflict_limit
        if limit == 0:
            return []
        flt = PayloadFilter(equals={"status": MemoryStatus.ACTIVE.value})
        if vector is None:  # no model: exact duplicates only
            same = PayloadFilter(equals={"status": "active", "content_hash": record.content_hash})
            points, _ = self._stores.vectors.scroll(MEMORIES, same, limit=limit)
            return [ConflictItem(memory_id=p.id, similarity=1.0) for p in points]
        hits = self._stores.vectors.search_dense(MEMORIES, vector, limit, flt)
        threshold = self._settings.conflict_threshold
        return [
            ConflictItem(memory_id=h.id, similarity=round(min(h.score, 1.0), 4))
            for h in hits
            if h.score >= threshold
        ]


def check_new_metadata(memory_type: str, metadata: dict[str, Any] | None, *, field: str) -> dict[str, Any]:
    """The checks a new record's metadata passes: the type's schema, and no fact-chain keys."""
    refuse_chain_keys(metadata or {}, field=field)
    return check_metadata(memory_type, metadata or {}, field=field)


def created(new: NewRecord) -> dict[str, Any]:
    """A create event's details: what was masked, and the edges the memory was stored with (the
    graph's only other copy of the explicit ones: ``memory-cli repair`` rebuilds them from here)."""
    details = redacted_note(new.redacted)
    if new.edges:
        details["edges"] = [edge_ref(e) for e in new.edges]
    return details


def views(new: NewRecord) -> dict[str, Any]:
    """What a memory_add answer shows of the stored record besides its id."""
    record = new.record
    return {
        "redacted_preview": preview(record.content),
        "secrets_redacted": kinds_note(new.redacted),
        "scope": record.scope.model_dump(exclude_none=True),
        "expires_at": record.expires_at.isoformat() if record.expires_at else None,
    }


def redacted_note(kinds: list[str]) -> dict[str, Any]:
    """The audit's note of a redaction: how many secrets of each kind, never the secrets."""
    return {"secrets_redacted": kinds_note(kinds)} if kinds else {}


def memory_node(record: MemoryRecord) -> GraphNode:
    """The record's graph node; a stale one says why (get_related shows node properties)."""
    props: dict[str, Any] = {"name": record.title or "", "type": record.type}
    if record.stale is not None:
        props["stale"] = record.stale.reason
    return GraphNode(MEMORY_LABEL, record.id, props)


def tags_of(metadata: dict[str, Any]) -> list[str]:
    tags = metadata.get("tags")
    if isinstance(tags, list):
        return [str(t) for t in tags][:32]
    return []


def bulk_error(index: int, exc: MemoryServiceError) -> BulkError:
    text = f"{exc.message}. {exc.suggestion}" if exc.suggestion else exc.message
    return BulkError(index=index, error=text, code=exc.code, details=exc.details)
