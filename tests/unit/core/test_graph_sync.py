"""The outbox keeps graph changes in order and keeps them when the graph is down (pure logic, fakes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import GraphEdge, GraphNode, QueueMessage
from memory_service.core.services.graph_sync import GraphSync, op_upsert_edges, op_upsert_nodes


class ListQueue:
    def __init__(self) -> None:
        self.pending: list[QueueMessage] = []
        self.inflight: list[QueueMessage] = []
        self.dead: list[QueueMessage] = []
        self._next = 1

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[int]:
        ids = []
        for p in payloads:
            self.pending.append(QueueMessage(self._next, topic, p))
            ids.append(self._next)
            self._next += 1
        return ids

    def claim(self, topic: str, limit: int = 100) -> list[QueueMessage]:
        batch, self.pending = self.pending[:limit], self.pending[limit:]
        self.inflight.extend(batch)
        return batch

    def ack(self, ids: Sequence[int]) -> None:
        self.inflight = [m for m in self.inflight if m.id not in ids]

    def fail(self, message_id: int, error: str, *, max_attempts: int = 5) -> None:
        msg = next(m for m in self.inflight if m.id == message_id)
        self.inflight.remove(msg)
        msg.attempts += 1
        (self.dead if msg.attempts >= max_attempts else self.pending).insert(0, msg)

    def release_inflight(self) -> int:
        n = len(self.inflight)
        self.pending = sorted(self.inflight + self.pending, key=lambda m: m.id)
        self.inflight = []
        return n

    def counts(self, topic: str | None = None) -> dict[str, int]:
        return {"pending": len(self.pending), "inflight": len(self.inflight), "failed": len(self.dead)}


class FlakyGraph:
    def __init__(self) -> None:
        self.down = False
        self.applied: list[str] = []

    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None:
        self._do("nodes:" + ",".join(n.id for n in nodes))

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None:
        self._do("edges:" + ",".join(e.source_id for e in edges))

    def _do(self, what: str) -> None:
        if self.down:
            raise ServiceUnavailableError("graph down", code="SVC_GRAPH_STORE")
        self.applied.append(what)


def test_ops_wait_while_graph_is_down_then_apply_in_order() -> None:
    queue, graph = ListQueue(), FlakyGraph()
    sync = GraphSync(queue, graph)  # type: ignore[arg-type]
    graph.down = True
    sync.enqueue(
        [
            op_upsert_nodes([GraphNode("Memory", "a")]),
            op_upsert_edges([GraphEdge("R", "Memory", "a", "Memory", "b")]),
        ]
    )
    assert sync.drain() == 0
    assert sync.pending()["pending"] == 2 and graph.applied == []
    graph.down = False
    assert sync.drain() == 2
    assert graph.applied == ["nodes:a", "edges:a"]
    assert sync.pending() == {"pending": 0, "inflight": 0, "failed": 0}


def test_persistent_failure_goes_dead_not_lost() -> None:
    queue, graph = ListQueue(), FlakyGraph()
    sync = GraphSync(queue, graph, max_attempts=2)  # type: ignore[arg-type]
    graph.down = True
    sync.enqueue([op_upsert_nodes([GraphNode("Memory", "x")])])
    sync.drain()
    sync.drain()
    assert sync.pending()["failed"] == 1
