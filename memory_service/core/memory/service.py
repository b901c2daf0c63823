"""Memory CRUD: add, bulk add, update, soft delete, get (seed 001 §4.2.1).

Every read-modify-write of a record (update, delete, and supersede / feedback in their services)
loads the record while holding its lock from :attr:`MemoryService.locks`, so concurrent calls on
one memory apply one after the other: no acknowledged change is lost and a delete is final.

A re-sent call (the same request key, core/write/request_key.py) makes the same ids and answers as the
first attempt did, without writing again: add and bulk add through the writer's skipped write;
update and delete ask first, since their version check or the deletion itself would refuse them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from memory_service.core import actor, ttl
from memory_service.core.audit_event import audit_event
from memory_service.core.code.citations import CODE_REFS, code_ref_edges
from memory_service.core.errors import (
    MemoryServiceError,
    NotFoundError,
    ServiceUnavailableError,
    ValidationError,
    memory_not_found,
)
from memory_service.core.guards import check_metadata, normalise_relationship_type, parse_uuid
from memory_service.core.memory.archive_schemas import ArchiveOutput
from memory_service.core.memory.audit_edges import edge_ref
from memory_service.core.memory.schemas import (
    BulkError,
    BulkSkipped,
    ConflictItem,
    MemoryAddInput,
    MemoryAddOutput,
    MemoryBulkAddOutput,
    MemoryBulkAddRequest,
    MemoryDeleteOutput,
    MemoryGetInput,
    MemoryGetOutput,
    MemoryUpdateInput,
    MemoryUpdateOutput,
    RelationshipInput,
)
from memory_service.core.models import (
    MemoryRecord,
    MemoryStatus,
    Relationship,
    Scope,
    content_hash,
    derive_title,
    utcnow,
)
from memory_service.core.ports import AuditEvent, GraphEdge, GraphNode, PayloadFilter
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores, from_payload, thread_of
from memory_service.core.redaction.sanitize import kinds_note, preview, scrub_text, scrub_value
from memory_service.core.scopes import FACETS, CallerScope, Notice, ScopeInput, facet, fixed, resolve_write
from memory_service.core.ttl import EXPIRES_FIELD
from memory_service.core.validation import validate_input
from memory_service.core.write.dedupe import dedupe_key
from memory_service.core.write.graph_sync import (
    op_delete_edges_of,
    op_upsert_edges,
    op_upsert_nodes,
)
from memory_service.core.write.kinds import PROBLEM_EDGE, check_problem_link
from memory_service.core.write.linking import ReferenceLinker
from memory_service.core.write.locks import KeyedLocks
from memory_service.core.write.request_key import new_id
from memory_service.core.write.rules import (
    check_chain_keys_kept,
    check_governed_update,
    check_kind_delete,
    check_kind_update,
    check_version,
    refuse_chain_keys,
)
from memory_service.core.write.writer import RecordWriter, answered
from memory_service.settings import MemorySettings

WriteAnswer = TypeVar("WriteAnswer", MemoryAddOutput, MemoryBulkAddOutput)


class Archiver(Protocol):
    """Archives and restores (core/memory/archive.py, which builds on this service and is
    attached to it once both exist: :meth:`MemoryService.attach_archiver`)."""

    def set_archived(
        self, memory_id: str, archived: bool, *, expected_version: int | None = None
    ) -> ArchiveOutput: ...


class MemoryService:
    def __init__(
        self,
        stores: Stores,
        writer: RecordWriter,
        settings: MemorySettings,
        scope: Scope | CallerScope,
        actor: str,
        *,
        locks: KeyedLocks | None = None,
        notice: Notice | None = None,
    ) -> None:
        self._stores = stores
        # Said by the first write's answer: which project memories go to, when only inferred.
        self._notice = notice or Notice(None)
        self._writer = writer
        self._settings = settings
        self._scope = fixed(scope)
        self._actor = actor
        self.locks = locks or KeyedLocks()  # shared with every service that writes a record back
        self._linker = ReferenceLinker(stores.vectors, stores.graph)  # REQ ids, components, code
        self._archiver: Archiver | None = None

    def attach_archiver(self, archiver: Archiver) -> None:
        """memory_update ``archived`` is the archive service's work (one implementation, also
        behind seed 002's ``archive_state``); it is handed over once built (app.py)."""
        self._archiver = archiver

    @contextmanager
    def writing(self, *ids: tuple[str, str]) -> Iterator[list[str]]:
        """Hold the write locks of the given ``(memory_id, field)`` pairs; yields the canonical ids.

        Load the records inside the block: what was read before it may be stale by then.
        """
        canonical = [parse_uuid(memory_id, field=field) for memory_id, field in ids]
        with self.locks.hold(canonical):
            yield canonical

    # ------------------------------------------------------------------ reads

    def load(self, memory_id: str, *, field: str = "memory_id", archived_ok: bool = False) -> MemoryRecord:
        """An active record by id; NotFound for unknown, deleted or expired ids. An archived one
        is hidden like a deleted one (its NotFound says how to restore it) unless ``archived_ok``:
        memory_get shows it, and the archive service loads it to restore it."""
        mid = parse_uuid(memory_id, field=field)
        found = self._stores.vectors.retrieve(MEMORIES, [mid])
        status = found[0].payload.get("status") if found else None
        if status == MemoryStatus.ARCHIVED and not archived_ok:
            raise NotFoundError(
                f"Memory with ID '{memory_id}' is archived",
                code="NF_MEMORY",
                details={"field": field, "provided": memory_id, "status": MemoryStatus.ARCHIVED.value},
                suggestion="Archived memories are hidden until restored: call memory_update with "
                "archived=false first, then retry.",
            )
        if status not in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED):
            raise memory_not_found(memory_id, field=field)
        record = from_payload(found[0].payload)
        if ttl.is_expired(record.expires_at, utcnow()):  # gone on time, before the sweep deletes it
            raise memory_not_found(memory_id, field=field)
        return record

    def get(self, data: MemoryGetInput) -> MemoryGetOutput:
        """A memory by id, archived ones too (status "archived"): they are found here to be restored."""
        record = self.load(data.memory_id, archived_ok=True)
        memory = record.model_dump(mode="json", exclude={"removed_relationships"})
        mark = ttl.stale_mark(record)
        memory["stale"] = mark.model_dump(mode="json") if mark is not None else None
        out = MemoryGetOutput(memory=memory)
        if data.include_relationships:
            try:
                edges = self._stores.graph.edges_of(MEMORY_LABEL, record.id)
            except ServiceUnavailableError as exc:
                out.warnings = [f"relationships unavailable: {exc.message}"]
                return out
            out.relationships = [_edge_view(edge, record.id) for edge in edges]
        return out

    # ------------------------------------------------------------------ writes

    def add(self, data: MemoryAddInput, *, dedupe: bool = True, label: str | None = None) -> MemoryAddOutput:
        """Store one memory; with ``dedupe`` (the tool's way) a repeat of an active one is skipped.
        ``label``: the kind a compatibility profile stores it as, when ``type`` cannot say it."""
        new = self._new_record(data, "", dedupe=dedupe, label=label)
        record = new.record
        with self.locks.hold([record.dedupe_key] if record.dedupe_key else []):
            if (done := self._writer.replayed(MemoryAddOutput)) is not None:
                return done  # a re-send whose first attempt stored it: answered as then
            if (existing := self._existing(record)) is not None:
                return MemoryAddOutput(memory_id=existing, status="skipped_dedupe", **_views(new))
            vectors = self._writer.embed([record.embedding_text()])
            conflicts = self._conflicts(record, vectors[0] if vectors else None)
            out = MemoryAddOutput(memory_id=record.id, status="created", conflicts=conflicts, **_views(new))
            earlier = self._writer.write(
                [record],
                graph_ops=self._graph_ops([record], new.edges),
                audit=[self._audit("create", record, _created(new))],
                vectors=vectors,
                answer=out,
            )
            return answered(out, earlier)

    def bulk_add(self, request: MemoryBulkAddRequest) -> MemoryBulkAddOutput:
        items: list[tuple[int, NewRecord]] = []
        errors: list[BulkError] = []
        for index, raw in enumerate(request.memories):
            prefix = f"memories[{index}]."
            try:
                item = validate_input(MemoryAddInput, raw, field_prefix=prefix)
                items.append((index, self._new_record(item, prefix)))
            except (ValidationError, NotFoundError) as exc:
                errors.append(_bulk_error(index, exc))
        keys = [n.record.dedupe_key for _, n in items if n.record.dedupe_key]
        with self.locks.hold(keys):
            if (done := self._writer.replayed(MemoryBulkAddOutput)) is not None:
                return done
            records: list[MemoryRecord] = []
            edges: list[GraphEdge] = []
            audit: list[AuditEvent] = []
            skipped: list[BulkSkipped] = []
            # dedupe key -> id: the memories holding them (not the items' own ids: a re-send
            # finding what its first attempt left half-written redoes it), then earlier items
            own = {n.record.id for _, n in items}
            taken = self.holders_of(keys, besides=own)
            for index, new in items:
                key = new.record.dedupe_key
                existing = taken.get(key) if key else None
                if existing is not None:
                    skipped.append(BulkSkipped(index=index, memory_id=existing))
                    continue
                if key:
                    taken[key] = new.record.id
                records.append(new.record)
                edges.extend(new.edges)
                audit.append(self._audit("create", new.record, _created(new)))
            out = MemoryBulkAddOutput(
                created=len(records), memory_ids=[r.id for r in records], errors=errors, skipped=skipped
            )
            if not records:
                return out
            earlier = self._writer.write(
                records, graph_ops=self._graph_ops(records, edges), audit=audit, answer=out
            )
            return answered(out, earlier)

    def noticed(self, out: WriteAnswer) -> WriteAnswer:
        """``out`` (memory_add's, memory_bulk_add's answer) with the once-only notice of which
        project memories go to, when only a folder named it; not given to an add stored in a
        project the call named."""
        if isinstance(out, MemoryBulkAddOutput) and not out.created:
            return out
        project = out.scope.get("project") if isinstance(out, MemoryAddOutput) and out.scope else None
        out.warnings += self._notice.take(project)
        return out

    def _existing(self, record: MemoryRecord) -> str | None:
        """The id of another active, unexpired memory holding the record's dedupe key, if any."""
        if not record.dedupe_key:
            return None
        # Its own id: a re-send finding what its first attempt left half-written, which it redoes.
        holder = self.holder_of(record.dedupe_key, besides=record.id)
        return holder.id if holder is not None else None

    def holders_of(self, keys: Sequence[str], *, besides: Collection[str] = ()) -> dict[str, str]:
        """:meth:`holder_of` for many keys in one read: key -> id of the memory holding it."""
        facets = {facet("dedupe", k): k for k in keys}
        if not facets:
            return {}
        # At most one holder per key (writes of a key are serialised), plus an own half-written one.
        points, _ = self._stores.vectors.scroll(MEMORIES, _holding(list(facets)), limit=2 * len(facets) + 8)
        found: dict[str, str] = {}
        for point in points:
            if point.id in besides:
                continue
            for value in point.payload.get(FACETS, []):
                if value in facets:
                    found.setdefault(facets[value], point.id)
        return found

    def holder_of(self, key: str, *, besides: str | None = None) -> MemoryRecord | None:
        """The active, unexpired, current memory holding a dedupe key (core/write/dedupe.py), if any."""
        points, _ = self._stores.vectors.scroll(MEMORIES, _holding([facet("dedupe", key)]), limit=2)
        return next((from_payload(p.payload) for p in points if p.id != besides), None)

    def update(self, data: MemoryUpdateInput) -> MemoryUpdateOutput:
        if data.archived is not None:  # a lifecycle step, given alone (MemoryUpdateInput checks)
            return self._set_archived(data)
        with self.writing((data.memory_id, "memory_id")):
            return self._update(data)

    def _set_archived(self, data: MemoryUpdateInput) -> MemoryUpdateOutput:
        """memory_update ``archived``: the archive service's work (one implementation, also behind
        seed 002's ``archive_state``), answered in memory_update's shape."""
        archiver, archived = self._archiver, data.archived
        assert archived is not None and archiver is not None, "attach_archiver first"
        out = archiver.set_archived(data.memory_id, archived, expected_version=data.expected_version)
        changed = ["status"] if out.status in ("archived", "restored") else []
        return MemoryUpdateOutput(memory_id=out.memory_id, status="updated", updated_fields=changed)

    def _update(self, data: MemoryUpdateInput) -> MemoryUpdateOutput:
        if (done := self._writer.answered_before(MemoryUpdateOutput)) is not None:
            return done  # a re-send: the version was bumped once, by the first attempt
        record = self.load(data.memory_id)
        check_version(record, data.expected_version)
        content, redacted = scrub_text(data.content) if data.content is not None else (None, [])
        updates, meta_redacted = scrub_value(data.metadata) if data.metadata is not None else (None, [])
        redacted += meta_redacted
        check_kind_update(record, content, updates)
        updates = check_governed_update(record, content, updates)
        changed: list[str] = []
        new = record.model_copy(deep=True)
        if content is not None and content != record.content:
            new.content = content
            new.content_hash = content_hash(content)
            changed.append("content")
        if updates is not None:
            merged = dict(record.metadata)
            check_chain_keys_kept(record, updates)
            for key, value in updates.items():
                if value is None:
                    if key in merged:
                        del merged[key]
                        changed.append(f"metadata.{key}")
                elif merged.get(key) != value:
                    merged[key] = value
                    changed.append(f"metadata.{key}")
            new.metadata = check_metadata(record.type, merged, field="metadata")
        cited: list[GraphEdge] = []
        if f"metadata.{CODE_REFS}" in changed:  # newly cited code is linked; dropped refs stay linked
            cited = code_ref_edges(self._stores.graph, new.id, new.metadata, field="metadata")
        if record.stale is not None:  # an update is the agent's word that the memory holds again
            new.stale = None
            changed.append("stale")
        if not changed:
            return MemoryUpdateOutput(memory_id=record.id, status="updated", updated_fields=[])
        new.title = derive_title(new.content, new.metadata)
        new.tags = _tags(new.metadata)
        new.version += 1
        new.updated_at = utcnow()
        new.expires_at = ttl.expires_at(new.ttl_policy, new.created_at, new.metadata)  # e.g. PR merged
        reembed = (
            new.embedding_text() != record.embedding_text()
            or record.embedding_pending
            or thread_of(new) != thread_of(record)  # moved to another session: new context
        )
        graph_ops = [op_upsert_nodes([memory_node(new)])]
        if linked := cited + self._linker.edges([new]):  # additive: references dropped keep their edges
            graph_ops.append(op_upsert_edges(linked))
        out = MemoryUpdateOutput(memory_id=record.id, status="updated", updated_fields=changed)
        earlier = self._writer.write(
            [new],
            graph_ops=graph_ops,
            audit=[self._audit("update", new, {"updated_fields": changed, **_redacted(redacted)})],
            reembed=reembed,
            answer=out,
        )
        return answered(out, earlier)

    def delete(self, memory_id: str, *, expected_version: int | None = None) -> MemoryDeleteOutput:
        """Soft-delete; final: a write racing after it finds no memory (it waits for the lock)."""
        with self.writing((memory_id, "memory_id")):
            return self._delete(memory_id, expected_version)

    def _delete(self, memory_id: str, expected_version: int | None) -> MemoryDeleteOutput:
        if (done := self._writer.answered_before(MemoryDeleteOutput)) is not None:
            return done  # a re-send: the first attempt deleted it
        record = self.load(memory_id)
        check_version(record, expected_version)
        check_kind_delete(record)
        return self._soft_delete(record, "delete", {})

    def expire(self, memory_id: str) -> bool:
        """Soft-delete a memory whose TTL has run out (audited as ``expire``); False when it is
        gone already or no longer expired (its metadata changed since the sweep listed it)."""
        with self.writing((memory_id, "memory_id")) as (mid,):
            found = self._stores.vectors.retrieve(MEMORIES, [mid])
            if not found or found[0].payload.get("status") != MemoryStatus.ACTIVE:
                return False
            record = from_payload(found[0].payload)
            if not ttl.is_expired(record.expires_at, utcnow()):
                return False
            assert record.expires_at is not None
            extra = {"ttl_policy": record.ttl_policy, "expired_at": record.expires_at.isoformat()}
            self._soft_delete(record, "expire", extra)
            return True

    def _soft_delete(self, record: MemoryRecord, operation: str, extra: dict[str, Any]) -> MemoryDeleteOutput:
        warnings: list[str] = []
        try:
            removed = self._stores.graph.edges_of(MEMORY_LABEL, record.id)
        except ServiceUnavailableError as exc:
            removed = []
            warnings.append(f"graph unavailable ({exc.message}); its edges are removed when it is back")
        now = utcnow()
        record.status = MemoryStatus.DELETED
        record.deleted_at = now
        record.updated_at = now
        record.version += 1
        record.removed_relationships = [
            Relationship(type=e.type, source_id=e.source_id, target_id=e.target_id, properties=e.properties)
            for e in removed
        ]
        out = MemoryDeleteOutput(status="deleted", relationships_removed=len(removed), warnings=warnings)
        earlier = self._writer.write(
            [record],
            graph_ops=[op_delete_edges_of(MEMORY_LABEL, record.id)],
            audit=[self._audit(operation, record, {"relationships_removed": len(removed), **extra})],
            reembed=False,
            answer=out,
        )
        return answered(out, earlier)

    # ------------------------------------------------------------------ helpers

    def write_scope(self, given: ScopeInput | None, memory_type: str, *, field: str) -> Scope:
        """The scope a new memory of ``memory_type`` given ``given`` is stored with (VAL_INVALID_SCOPE
        when malformed), as :meth:`add` resolves it."""
        return resolve_write(given, self._scope.current(), memory_type, field=field)

    def _new_record(
        self, item: MemoryAddInput, prefix: str, *, dedupe: bool = True, label: str | None = None
    ) -> NewRecord:
        """Validate, sanitise and shape one new memory (nothing is written yet)."""
        memory_type = str(item.type)
        scope = resolve_write(item.scope, self._scope.current(), memory_type, field=f"{prefix}scope")
        content, redacted = scrub_text(item.content)
        metadata, meta_redacted = scrub_value(item.metadata or {})
        redacted += meta_redacted
        meta = self.check_new_metadata(memory_type, metadata, field=f"{prefix}metadata")
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
            tags=_tags(meta),
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

    @staticmethod
    def check_new_metadata(
        memory_type: str, metadata: dict[str, Any] | None, *, field: str
    ) -> dict[str, Any]:
        """The checks a new record's metadata passes: the type's schema, and no fact-chain keys."""
        refuse_chain_keys(metadata or {}, field=field)
        return check_metadata(memory_type, metadata or {}, field=field)

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

    def _conflicts(self, record: MemoryRecord, vector: list[float] | None) -> list[ConflictItem]:
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

    def _graph_ops(self, records: list[MemoryRecord], edges: list[GraphEdge]) -> list[dict[str, Any]]:
        """Upsert the records' nodes, then their explicit edges and those their references make."""
        ops = [op_upsert_nodes([memory_node(r) for r in records])]
        edges = edges + self._linker.edges(records)
        if edges:
            ops.append(op_upsert_edges(edges))
        return ops

    def _audit(self, operation: str, record: MemoryRecord, extra: dict[str, Any] | None = None) -> AuditEvent:
        details = {"type": record.type, "content_hash": record.content_hash, "version": record.version}
        details["scope"] = record.scope.model_dump(exclude_none=True)
        return audit_event(operation, "memory", record.id, self._actor, {**details, **(extra or {})})


def _created(new: NewRecord) -> dict[str, Any]:
    """A create event's details: what was masked, and the edges the memory was stored with (the
    graph's only other copy of the explicit ones: ``memory-cli repair`` rebuilds them from here)."""
    details = _redacted(new.redacted)
    if new.edges:
        details["edges"] = [edge_ref(e) for e in new.edges]
    return details


@dataclass
class NewRecord:
    """A memory about to be stored, the edges it brings, and the kinds of secret masked in it."""

    record: MemoryRecord
    edges: list[GraphEdge]
    redacted: list[str]


def _views(new: NewRecord) -> dict[str, Any]:
    """What a memory_add answer shows of the stored record besides its id."""
    record = new.record
    return {
        "redacted_preview": preview(record.content),
        "secrets_redacted": kinds_note(new.redacted),
        "scope": record.scope.model_dump(exclude_none=True),
        "expires_at": record.expires_at.isoformat() if record.expires_at else None,
    }


def _redacted(kinds: list[str]) -> dict[str, Any]:
    """The audit's note of a redaction: how many secrets of each kind, never the secrets."""
    return {"secrets_redacted": kinds_note(kinds)} if kinds else {}


def memory_node(record: MemoryRecord) -> GraphNode:
    """The record's graph node; a stale one says why (get_related shows node properties)."""
    props: dict[str, Any] = {"name": record.title or "", "type": record.type}
    if record.stale is not None:
        props["stale"] = record.stale.reason
    return GraphNode(MEMORY_LABEL, record.id, props)


def _tags(metadata: dict[str, Any]) -> list[str]:
    tags = metadata.get("tags")
    if isinstance(tags, list):
        return [str(t) for t in tags][:32]
    return []


def _edge_view(edge: GraphEdge, me: str) -> dict[str, Any]:
    outgoing = edge.source_id == me
    return {
        "type": edge.type,
        "direction": "outgoing" if outgoing else "incoming",
        "source_id": edge.source_id,
        "target_id": edge.target_id,
        "other_id": edge.target_id if outgoing else edge.source_id,
        "other_label": edge.target_label if outgoing else edge.source_label,
        "properties": edge.properties,
    }


def _bulk_error(index: int, exc: MemoryServiceError) -> BulkError:
    text = f"{exc.message}. {exc.suggestion}" if exc.suggestion else exc.message
    return BulkError(index=index, error=text, code=exc.code, details=exc.details)


def _holding(dedupe_facets: list[str]) -> PayloadFilter:
    """Active, unexpired, current memories holding one of these dedupe facets (a superseded fact
    no longer holds its key: stating it again is a new fact)."""
    return PayloadFilter(
        equals={"status": MemoryStatus.ACTIVE.value},
        any_of={FACETS: dedupe_facets},
        ranges={EXPIRES_FIELD: (utcnow().timestamp(), None)},
        not_equals={"superseded": "true"},
    )
