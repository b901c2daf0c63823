"""The graph-sync outbox: graph changes are queued durably, then applied in order.

A write to a memory is acknowledged once its record is in the vector store and its graph changes
are in the durable queue. Draining applies them to the graph; when the graph is down they stay
queued (``sync.pending``) and are retried, so the vector side keeps working (seed 001 §6.3).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError
from memory_service.core.ports import GraphEdge, GraphNode, GraphStore, Queue, QueueMessage
from memory_service.core.records import GRAPH_SYNC_TOPIC

logger = logging.getLogger(__name__)


def _plain(item: GraphNode | GraphEdge) -> dict[str, Any]:
    """A node or edge as a dict (its properties copied one level: they are scalars or lists of
    them); ``dataclasses.asdict`` copies deeply: 11 µs a node against 0.4 here."""
    return {**vars(item), "properties": dict(item.properties)}


def op_upsert_nodes(nodes: list[GraphNode]) -> dict[str, Any]:
    return {"op": "upsert_nodes", "nodes": [_plain(n) for n in nodes]}


def op_upsert_edges(edges: list[GraphEdge]) -> dict[str, Any]:
    return {"op": "upsert_edges", "edges": [_plain(e) for e in edges]}


def op_delete_edges_of(label: str, node_id: str) -> dict[str, Any]:
    return {"op": "delete_edges_of", "label": label, "id": node_id}


def op_delete_node(label: str, node_id: str) -> dict[str, Any]:
    return {"op": "delete_node", "label": label, "id": node_id}


def op_delete_nodes(label: str, node_ids: list[str]) -> dict[str, Any]:
    return {"op": "delete_nodes", "label": label, "ids": list(node_ids)}


def default_consumer() -> str:
    """This process's consumer name: ``host:pid`` (a restart in a container often gets the same
    name back, and then takes back at once what its previous life held)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class GraphSync:
    """Applies queued graph operations in order; safe to call from several threads.

    Processes sharing a queue (Redis) each drain under their own consumer name; the queue hands a
    topic to one consumer at a time, head first, so operations apply in the order they were queued.
    """

    def __init__(
        self, queue: Queue, graph: GraphStore, *, max_attempts: int = 10, consumer: str | None = None
    ) -> None:
        self._queue = queue
        self._graph = graph
        self._max_attempts = max_attempts
        self.consumer = consumer or default_consumer()
        self._lock = threading.Lock()

    def enqueue(self, ops: list[dict[str, Any]]) -> None:
        if ops:
            self._queue.enqueue(GRAPH_SYNC_TOPIC, ops)

    def recover(self, *, sole_consumer: bool = False) -> int:
        """At start: take back what this consumer name held (a previous run of the same name) and
        what dead consumers held past the visibility timeout, or every hold when this process is
        known to be the queue's only consumer (the embedded queue in an owned data directory)."""
        released = self._queue.release(GRAPH_SYNC_TOPIC, self.consumer)
        return released + self._queue.reclaim(GRAPH_SYNC_TOPIC, 0.0 if sole_consumer else None)

    def drain(self, limit: int = 500) -> int:
        """Apply pending operations in order; stop at the first failure. Returns how many applied."""
        applied = 0
        with self._lock:
            while batch := self._queue.claim(GRAPH_SYNC_TOPIC, self.consumer, limit):
                done, go_on = self._apply_batch(batch)
                applied += done
                if not go_on:
                    break
        return applied

    def _apply_batch(self, batch: list[QueueMessage]) -> tuple[int, bool]:
        """Apply a claimed batch in order, acking what was applied (one ack per batch: a crash
        replays the batch, and replaying an in-order prefix ends in the same graph). At the first
        failure the message is failed and the rest released behind it. Returns (applied, whether
        draining may go on: yes unless a message is waiting for its retry)."""
        done: list[str] = []
        try:
            for message in batch:
                self._apply(message.payload)
                done.append(message.id)
        except ServiceUnavailableError as exc:
            down = exc.details.get("fail_fast") or self._graph.health().state != "ok"
            if not down:  # the store answers: this message's fault
                return self._failed(batch, done, exc)
            # The store is down, not the message: hand the batch back without counting an attempt
            # (no dead letters however long the outage); retried on every drain (housekeeping).
            self._queue.ack(GRAPH_SYNC_TOPIC, done)
            self._queue.release(GRAPH_SYNC_TOPIC, self.consumer)
            logger.info("graph sync waits for the graph store: %s", exc.message)
            return len(done), False
        except MemoryServiceError as exc:
            return self._failed(batch, done, exc)
        except BaseException:  # a bug or an interrupt: keep what was applied, hand back the rest
            self._queue.ack(GRAPH_SYNC_TOPIC, done)
            self._queue.release(GRAPH_SYNC_TOPIC, self.consumer)
            raise
        self._queue.ack(GRAPH_SYNC_TOPIC, done)
        return len(done), True

    def _failed(
        self, batch: list[QueueMessage], done: list[str], exc: MemoryServiceError
    ) -> tuple[int, bool]:
        """Ack what was applied, fail the message that failed (retry backoff or dead letter) and
        release the rest behind it."""
        failed = batch[len(done)]
        self._queue.ack(GRAPH_SYNC_TOPIC, done)
        dead = self._queue.fail(GRAPH_SYNC_TOPIC, failed.id, exc.message, max_attempts=self._max_attempts)
        # Keep order: the rest of the batch goes back behind the failed message.
        self._queue.release(GRAPH_SYNC_TOPIC, self.consumer)
        if dead:
            logger.error(
                "graph sync gave up on a %s operation after %d attempts (now a dead letter): %s",
                failed.payload.get("op"), self._max_attempts, exc.message,
            )  # fmt: skip
        else:
            logger.warning("graph sync failed (will retry): %s", exc.message)
        return len(done), dead

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
        elif kind == "delete_nodes":
            self._graph.delete_nodes(op["label"], op["ids"])
        else:  # an op this version does not know: keep it visible rather than drop it
            raise MemoryServiceError(f"unknown graph-sync operation {kind!r}", code="INT_UNKNOWN_SYNC_OP")
