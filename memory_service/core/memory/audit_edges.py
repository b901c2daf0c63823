"""The edges a memory was created with, as its audit ``create`` event keeps them.

Why: an explicit relationship given at ``memory_add`` (and a problem link, and a code citation)
is written only to the graph; no record field describes it. The audit log (SQLite) keeps a copy
in the create event, so ``memory-cli repair`` can rebuild the graph's edges from the surviving
store when the graph lost them (a damaged or emptied graph WAL, a fresh graph). Lists are clipped
with the rest of an event's details (``limits.AUDIT_ITEMS``).
"""

from __future__ import annotations

from typing import Any

from memory_service.core.ports import GraphEdge
from memory_service.core.records import MEMORY_LABEL


def edge_ref(edge: GraphEdge) -> dict[str, Any]:
    """One outgoing edge of the created memory, in the event's details."""
    ref: dict[str, Any] = {"type": edge.type, "to": edge.target_id}
    if edge.target_label != MEMORY_LABEL:
        ref["to_label"] = edge.target_label
    if edge.properties:
        ref["properties"] = edge.properties
    return ref


def created_edges(memory_id: str, details: dict[str, Any]) -> list[GraphEdge]:
    """The edges a create event's details list (malformed entries are skipped)."""
    edges = []
    for ref in details.get("edges") or []:
        if not isinstance(ref, dict) or not isinstance(ref.get("type"), str) or not ref.get("to"):
            continue
        props = ref.get("properties")
        props = props if isinstance(props, dict) else {}
        label = str(ref.get("to_label") or MEMORY_LABEL)
        edges.append(GraphEdge(ref["type"], MEMORY_LABEL, memory_id, label, str(ref["to"]), props))
    return edges
