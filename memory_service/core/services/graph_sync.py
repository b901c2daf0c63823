"""The graph-sync outbox: graph changes are queued durably, then applied in order.

A write to a memory is acknowledged once its record is in the vector store and its graph changes
are in the durable queue. Draining applies them to the graph; when the graph is down they stay
queued (``sync.pending``) and are retried, so the vector side keeps working (seed 001 §6.3).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import asdict
from typing import Any

from memory_service.core.errors import MemoryServiceError
from memory_service.core.ports import GraphEdge, GraphNode, GraphStore, Queue
from memory_service.core.records import GRAPH_SYNC_TOPIC

logger = logging.getLogger(__name__)


def op_upsert_nodes(nodes: list[GraphNode]) -> dict[str, Any]:
    return {"op": "upsert_nodes", "nodes": [asdict(n) for n in nodes]}


def op_upsert_edges(edges: list[GraphEdge]) -> dict[str, Any]:
    return {"op": "upsert_edges", "edges": [asdict(e) for e in edges]}


def op_delete_edges_of(label: str, node_id: str) -> dict[str, Any]:
    return {"op": "delete_edges_of", "label": label, "id": node_id}


def op_delete_node(label: str, node_id: str) -> dict[str, Any]:
    return {"op": "delete_node", "label": label, "id": node_id}


class GraphSync:
    """Applies queued graph operations; safe to call from several threads."""

    def __init__(self, queue: Queue, graph: GraphStore, *, max_attempts: int = 10) -> None:
        self._queue = queue
        self._graph = graph
        self._max_attempts = max_attempts
        self._lock = threading.Lock()

    def enqueue(self, ops: list[dict[str, Any]]) -> None:
        if ops:
            self._queue.enqueue(GRAPH_SYNC_TOPIC, ops)

    def drain(self, limit: int = 500) -> int:
        """Apply pending operations in order; stop at the first failure. Returns how many applied."""
        applied = 0
        with self._lock:
            while True:
                batch = self._queue.claim(GRAPH_SYNC_TOPIC, limit)
                if not batch:
                    return applied
                for message in batch:
                    try:
                        self._apply(message.payload)
                    except MemoryServiceError as exc:
                        logger.warning("graph sync failed (will retry): %s", exc.message)
                        self._queue.fail(message.id, exc.message, max_attempts=self._max_attempts)
                        # Keep order: hand the rest of the batch back untouched.
                        self._queue.release_inflight()
                        return applied
                    self._queue.ack([message.id])
                    applied += 1

    def pending(self) -> dict[str, int]:
        return self._queue.counts(GRAPH_SYNC_TOPIC)

    def _apply(self, op: dict[str, Any]) -> None:
        kind = op["op"]
        if kind == "upsert_nodes":
            self._graph.upsert_nodes([GraphNode(**n) for n in op["nodes"]])
        elif kind == "upsert_edges":
            self._graph.upsert_edges([GraphEdge(**e) for e in op["edges"]])
        elif kind == "delete_edges_of":
            self._graph.delete_edges_of(op["label"], op["id"])
        elif kind == "delete_node":
            self._graph.delete_node(op["label"], op["id"])
        else:  # an op this version does not know: keep it visible rather than drop it
            raise MemoryServiceError(f"unknown graph-sync operation {kind!r}", code="INT_UNKNOWN_SYNC_OP")
