"""Archive and restore (seed 002's ``archive_state``): lifecycle, not deletion.

An archived memory has status ``archived``: every read that filters on status ``active`` (search,
explain, traceability, design context, export unless include_deleted, dedupe, conflicts, and the
votes and supersedes that would name it) passes it by, as it passes a deleted one; memory_get still
returns it (status "archived") so that it can be found and restored. Unlike a delete it keeps
everything: content, vectors (the record is rewritten payload-only, never re-embedded), votes, and
its graph node and edges, so a restore is exact. The graph node is marked ``archived: true`` while
it is archived; graph tools (get_related, find_path, graph_query) still show it and its links.

Both directions validate the same way in a dry run (writes nothing), and a call that asks for the
state the memory is in answers ``unchanged`` and writes nothing. A real change is one write
through the RecordWriter (record, node mark, ``archive`` / ``restore`` audit event with the
rationale) under the memory's write lock, so it orders with updates, deletes and votes on it.
"""

from __future__ import annotations

from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.memory.archive_schemas import ArchiveOutput, ArchiveStatus
from memory_service.core.memory.service import MemoryService, memory_node
from memory_service.core.models import MemoryRecord, MemoryStatus, utcnow
from memory_service.core.ports import AuditEvent, GraphNode
from memory_service.core.records import Stores
from memory_service.core.write.graph_sync import op_upsert_nodes
from memory_service.core.write.rules import check_version
from memory_service.core.write.writer import RecordWriter, answered

ARCHIVE = "archive"
RESTORE = "restore"


class ArchiveService:
    def __init__(self, stores: Stores, writer: RecordWriter, memory: MemoryService, actor: str) -> None:
        self._stores = stores
        self._writer = writer
        self._memory = memory
        self._actor = actor

    def set_archived(
        self,
        memory_id: str,
        archived: bool,
        *,
        rationale: str | None = None,
        dry_run: bool = False,
        expected_version: int | None = None,
    ) -> ArchiveOutput:
        """Archive (``archived=True``) or restore (False) an active or archived memory.

        Raises:
            ValidationError: memory_id is not a UUID (VAL_INVALID_UUID).
            NotFoundError: unknown, deleted or expired memory (NF_MEMORY).
            ConflictError: ``expected_version`` is not the memory's version (CON_VERSION_MISMATCH).
        """
        with self._memory.writing((memory_id, "memory_id")):
            return self._set(memory_id, archived, rationale, dry_run, expected_version)

    def _set(
        self, memory_id: str, archived: bool, rationale: str | None, dry_run: bool, expected: int | None
    ) -> ArchiveOutput:
        if not dry_run and (done := self._writer.answered_before(ArchiveOutput)) is not None:
            return done  # a re-send: the first attempt changed the status (and bumped the version)
        record = self._memory.load(memory_id, archived_ok=True)
        check_version(record, expected)
        was = record.status == MemoryStatus.ARCHIVED
        if was == archived:
            return _output(record, archived, "unchanged", was)
        if dry_run:
            return _output(record, archived, "dry_run", was)
        operation = ARCHIVE if archived else RESTORE
        record.status = MemoryStatus.ARCHIVED if archived else MemoryStatus.ACTIVE
        record.updated_at = utcnow()
        record.version += 1
        out = _output(record, archived, "archived" if archived else "restored", was)
        earlier = self._writer.write(
            [record],
            graph_ops=[op_upsert_nodes([_node(record)])],
            audit=[self._audit(operation, record, rationale)],
            reembed=False,  # same text: the vectors stay, so a restored memory is found at once
            answer=out,
        )
        return answered(out, earlier)

    def _audit(self, operation: str, record: MemoryRecord, rationale: str | None) -> AuditEvent:
        details: dict[str, Any] = {
            "type": record.type,
            "content_hash": record.content_hash,
            "version": record.version,
            "scope": record.scope.model_dump(exclude_none=True),
            "rationale": rationale,
        }
        return audit_event(operation, "memory", record.id, self._actor, details)


def _node(record: MemoryRecord) -> GraphNode:
    """The memory's graph node, marked while archived (graph tools show the mark)."""
    node = memory_node(record)
    if record.status == MemoryStatus.ARCHIVED:
        node.properties["archived"] = True
    return node


def _output(record: MemoryRecord, archived: bool, status: ArchiveStatus, was: bool) -> ArchiveOutput:
    return ArchiveOutput(memory_id=record.id, archived=archived, status=status, previous_archived=was)
