"""Reading one memory by id: the load every read-modify-write starts from, and memory_get's view."""

from __future__ import annotations

from typing import Any

from memory_service.core import ttl
from memory_service.core.errors import NotFoundError, ServiceUnavailableError, memory_not_found
from memory_service.core.guards import parse_uuid
from memory_service.core.memory.schemas import MemoryGetOutput
from memory_service.core.models import MemoryRecord, MemoryStatus, utcnow
from memory_service.core.ports import GraphEdge
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores, from_payload


def load_record(stores: Stores, memory_id: str, *, field: str, archived_ok: bool) -> MemoryRecord:
    """An active record by id; NotFound for unknown, deleted or expired ids. An archived one
    is hidden like a deleted one (its NotFound says how to restore it) unless ``archived_ok``."""
    mid = parse_uuid(memory_id, field=field)
    found = stores.vectors.retrieve(MEMORIES, [mid])
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


def memory_view(stores: Stores, record: MemoryRecord, *, include_relationships: bool) -> MemoryGetOutput:
    """memory_get's answer for a loaded record: the record with its stale mark, and its edges
    when asked (a warning instead when the graph is unavailable)."""
    memory = record.model_dump(mode="json", exclude={"removed_relationships"})
    mark = ttl.stale_mark(record)
    memory["stale"] = mark.model_dump(mode="json") if mark is not None else None
    out = MemoryGetOutput(memory=memory)
    if include_relationships:
        try:
            edges = stores.graph.edges_of(MEMORY_LABEL, record.id)
        except ServiceUnavailableError as exc:
            out.warnings = [f"relationships unavailable: {exc.message}"]
            return out
        out.relationships = [_edge_view(edge, record.id) for edge in edges]
    return out


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
