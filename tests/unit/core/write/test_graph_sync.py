"""The outbox keeps graph changes in order and keeps them when the graph is down (pure logic, fakes)."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, GraphEdge, GraphNode, QueueMessage
from memory_service.core.write.graph_sync import (
    GraphSync,
    default_consumer,
    op_upsert_edges,
    op_upsert_nodes,
)


class ListQueue:
    """The Queue port's semantics for one topic, in lists: head of line, one holder at a time."""

    def __init__(self) -> None:
        self.pending: list[QueueMessage] = []
        self.inflight: dict[str, list[QueueMessage]] = {}
        self.dead: list[QueueMessage] = []
        self.waiting: set[str] = set()  # failed, in their backoff (the test lifts it)
        self._next = 1

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[str]:
        ids = []
        for p in payloads:
            self.pending.append(QueueMessage(str(self._next), topic, p))
            ids.append(str(self._next))
            self._next += 1
        return ids

    def claim(self, topic: str, consumer: str, limit: int = 100) -> list[QueueMessage]:
        if any(held for name, held in self.inflight.items() if name != consumer):
            return []
        batch = []
        for m in self.pending[:limit]:
            if m.id in self.waiting:
                break
            batch.append(m)
        self.pending = self.pending[len(batch) :]
        self.inflight.setdefault(consumer, []).extend(batch)
        return batch

    def ack(self, topic: str, ids: Sequence[str]) -> int:
        before = sum(map(len, self.inflight.values()))
        self.inflight = {c: [m for m in held if m.id not in ids] for c, held in self.inflight.items()}
        return before - sum(map(len, self.inflight.values()))

    def fail(self, topic: str, message_id: str, error: str, *, max_attempts: int = 5) -> bool:
        holder, msg = next((c, m) for c, held in self.inflight.items() for m in held if m.id == message_id)
        self.inflight[holder].remove(msg)
        msg.attempts += 1
        msg.last_error = error
        if msg.attempts >= max_attempts:
            self.dead.append(msg)
            return True
        self.waiting.add(msg.id)
        self.pending.insert(0, msg)
        return False

    def release(self, topic: str, consumer: str) -> int:
        held = self.inflight.pop(consumer, [])
        self.pending = sorted(held + self.pending, key=lambda m: int(m.id))
        return len(held)

    def reclaim(self, topic: str, min_idle_seconds: float | None = None) -> int:
        return sum(self.release(topic, c) for c in list(self.inflight)) if min_idle_seconds == 0 else 0

    def counts(self, topic: str) -> dict[str, int]:
        inflight = sum(map(len, self.inflight.values()))
        return {"pending": len(self.pending), "inflight": inflight, "failed": len(self.dead)}


class FlakyGraph:
    def __init__(self) -> None:
        self.down = False
        self.edges_down = False
        self.applied: list[str] = []

    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None:
        self._do("nodes:" + ",".join(n.id for n in nodes))

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None:
        if self.edges_down:
            raise ServiceUnavailableError("edges refused", code="SVC_GRAPH_STORE")
        self._do("edges:" + ",".join(e.source_id for e in edges))

    def health(self) -> ComponentHealth:
        """Down means unreachable; edges refused is a store that answers but rejects a message."""
        return ComponentHealth("graph", "unavailable" if self.down else "ok", "fake")

    def _do(self, what: str) -> None:
        if self.down:
            raise ServiceUnavailableError("graph down", code="SVC_GRAPH_STORE")
        self.applied.append(what)


def test_ops_wait_while_graph_is_down_then_apply_in_order() -> None:
    queue, graph = ListQueue(), FlakyGraph()
    sync = GraphSync(queue, graph, consumer="me")  # type: ignore[arg-type]
    graph.down = True
    sync.enqueue(
        [
            op_upsert_nodes([GraphNode("Memory", "a")]),
            op_upsert_edges([GraphEdge("R", "Memory", "a", "Memory", "b")]),
        ]
    )
    assert sync.drain() == 0
    assert sync.pending() == {"pending": 2, "inflight": 0, "failed": 0}  # the rest was released
    assert graph.applied == []
    assert sync.drain() == 0
    assert [m.attempts for m in queue.pending] == [0, 0]  # an outage is no attempt: never dead
    graph.down = False
    assert sync.drain() == 2  # no backoff to wait out: applied as soon as the graph answers
    assert graph.applied == ["nodes:a", "edges:a"]
    assert sync.pending() == {"pending": 0, "inflight": 0, "failed": 0}


def test_a_failure_mid_batch_keeps_what_was_applied_and_the_order() -> None:
    queue, graph = ListQueue(), FlakyGraph()
    sync = GraphSync(queue, graph, consumer="me")  # type: ignore[arg-type]
    graph.edges_down = True
    sync.enqueue(
        [
            op_upsert_nodes([GraphNode("Memory", "a")]),
            op_upsert_edges([GraphEdge("R", "Memory", "a", "Memory", "b")]),
            op_upsert_nodes([GraphNode("Memory", "c")]),
        ]
    )
    assert sync.drain() == 1  # the node went in and was acked; the edge failed; c waits behind it
    assert graph.applied == ["nodes:a"]
    assert [m.payload["op"] for m in queue.pending] == ["upsert_edges", "upsert_nodes"]
    assert queue.pending[0].attempts == 1
    graph.edges_down = False
    queue.waiting.clear()
    assert sync.drain() == 2
    assert graph.applied == ["nodes:a", "edges:a", "nodes:c"]


def test_persistent_failure_goes_dead_and_the_line_moves_on() -> None:
    queue, graph = ListQueue(), FlakyGraph()
    sync = GraphSync(queue, graph, max_attempts=2, consumer="me")  # type: ignore[arg-type]
    graph.edges_down = True  # the store answers but refuses this message: its attempts count
    sync.enqueue([op_upsert_edges([GraphEdge("R", "Memory", "x", "Memory", "y")])])
    sync.enqueue([op_upsert_nodes([GraphNode("Memory", "z")])])
    sync.drain()
    queue.waiting.clear()
    sync.drain()
    assert sync.pending()["failed"] == 1
    assert queue.dead[0].last_error == "edges refused"
    assert graph.applied == ["nodes:z"]  # the line moved on


def test_another_consumer_holding_the_topic_blocks_draining() -> None:
    queue, graph = ListQueue(), FlakyGraph()
    sync = GraphSync(queue, graph, consumer="me")  # type: ignore[arg-type]
    sync.enqueue([op_upsert_nodes([GraphNode("Memory", "a")])])
    assert queue.claim("topic", "other")  # a process that died holding it
    assert sync.drain() == 0
    assert sync.recover() == 0  # not ours, not past the visibility timeout
    assert sync.recover(sole_consumer=True) == 1  # an owned embedded queue: every hold is stale
    assert sync.drain() == 1 and graph.applied == ["nodes:a"]


def test_consumer_name_is_host_and_pid() -> None:
    name = default_consumer()
    assert name == f"{socket.gethostname()}:{os.getpid()}"
    assert GraphSync(ListQueue(), FlakyGraph()).consumer == name  # type: ignore[arg-type]
