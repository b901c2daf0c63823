"""Memory CRUD: add, bulk add, update, soft delete, get (seed 001 §4.2.1).

Every read-modify-write of a record (update, delete, and supersede / feedback in their services)
loads the record while holding its lock from :attr:`MemoryService.locks`, so concurrent calls on
one memory apply one after the other: no acknowledged change is lost and a delete is final.

A re-sent call (the same request key, core/write/request_key.py) makes the same ids and answers as the
first attempt did, without writing again: add and bulk add through the writer's skipped write;
update and delete ask first, since their version check or the deletion itself would refuse them.

The service holds the locks and writes; the rest is in small modules beside it: :mod:`.reads`
(load, memory_get's view), :mod:`.new_records` (a new memory shaped, an add's conflicts),
:mod:`.holders` (who holds a dedupe key) and :mod:`.changes` (an update's next version, a soft
delete's mark); the archive service does memory_update ``archived``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from memory_service.core import ttl
from memory_service.core.audit_event import audit_event
from memory_service.core.errors import NotFoundError, ServiceUnavailableError, ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.memory import changes, holders
from memory_service.core.memory.archive_schemas import ArchiveOutput
from memory_service.core.memory.new_records import (
    NewRecord,
    NewRecords,
    bulk_error,
    check_new_metadata,
    created,
    redacted_note,
    views,
)
from memory_service.core.memory.new_records import memory_node as memory_node  # callers import it here
from memory_service.core.memory.reads import load_record, memory_view
from memory_service.core.memory.schemas import (
    BulkError,
    BulkSkipped,
    MemoryAddInput,
    MemoryAddOutput,
    MemoryBulkAddOutput,
    MemoryBulkAddRequest,
    MemoryDeleteOutput,
    MemoryGetInput,
    MemoryGetOutput,
    MemoryUpdateInput,
    MemoryUpdateOutput,
)
from memory_service.core.models import MemoryRecord, MemoryStatus, Scope, utcnow
from memory_service.core.ports import AuditEvent, GraphEdge
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores, from_payload
from memory_service.core.scopes import CallerScope, Notice, ScopeInput, fixed, resolve_write
from memory_service.core.validation import validate_input
from memory_service.core.write.graph_sync import (
    op_delete_edges_of,
    op_upsert_edges,
    op_upsert_nodes,
)
from memory_service.core.write.linking import ReferenceLinker
from memory_service.core.write.locks import KeyedLocks
from memory_service.core.write.rules import check_kind_delete, check_version
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
        self._new = NewRecords(stores, settings, self._scope, actor)

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
        return load_record(self._stores, memory_id, field=field, archived_ok=archived_ok)

    def get(self, data: MemoryGetInput) -> MemoryGetOutput:
        """A memory by id, archived ones too (status "archived"): they are found here to be restored."""
        record = self.load(data.memory_id, archived_ok=True)
        return memory_view(self._stores, record, include_relationships=data.include_relationships)

    # ------------------------------------------------------------------ writes

    def add(self, data: MemoryAddInput, *, dedupe: bool = True, label: str | None = None) -> MemoryAddOutput:
        """Store one memory; with ``dedupe`` (the tool's way) a repeat of an active one is skipped.
        ``label``: the kind a compatibility profile stores it as, when ``type`` cannot say it."""
        new = self._new.make(data, "", dedupe=dedupe, label=label)
        record = new.record
        with self.locks.hold([record.dedupe_key] if record.dedupe_key else []):
            if (done := self._writer.replayed(MemoryAddOutput)) is not None:
                return done  # a re-send whose first attempt stored it: answered as then
            if (existing := self._existing(record)) is not None:
                return MemoryAddOutput(memory_id=existing, status="skipped_dedupe", **views(new))
            vectors = self._writer.embed([record.embedding_text()])
            conflicts = self._new.conflicts(record, vectors[0] if vectors else None)
            out = MemoryAddOutput(memory_id=record.id, status="created", conflicts=conflicts, **views(new))
            earlier = self._writer.write(
                [record],
                graph_ops=self._graph_ops([record], new.edges),
                audit=[self._audit("create", record, created(new))],
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
                items.append((index, self._new.make(item, prefix)))
            except (ValidationError, NotFoundError) as exc:
                errors.append(bulk_error(index, exc))
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
                audit.append(self._audit("create", new.record, created(new)))
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
        return holders.holders_of(self._stores, keys, besides=besides)

    def holder_of(self, key: str, *, besides: str | None = None) -> MemoryRecord | None:
        """The active, unexpired, current memory holding a dedupe key (core/write/dedupe.py), if any."""
        return holders.holder_of(self._stores, key, besides=besides)

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
        change = changes.updated(self._stores, record, data)
        new, changed = change.record, change.changed
        if not changed:
            return MemoryUpdateOutput(memory_id=record.id, status="updated", updated_fields=[])
        graph_ops = [op_upsert_nodes([memory_node(new)])]
        # Additive: references dropped keep their edges.
        if linked := change.cited + self._linker.edges([new]):
            graph_ops.append(op_upsert_edges(linked))
        out = MemoryUpdateOutput(memory_id=record.id, status="updated", updated_fields=changed)
        earlier = self._writer.write(
            [new],
            graph_ops=graph_ops,
            audit=[self._audit("update", new, {"updated_fields": changed, **redacted_note(change.redacted)})],
            reembed=change.reembed,
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
        changes.mark_deleted(record, removed)
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

    # The checks a new record's metadata passes (memory_supersede and a profile's write use them too).
    check_new_metadata = staticmethod(check_new_metadata)

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
