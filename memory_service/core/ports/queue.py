"""The queue port: durable topics with claim, ack, retry and a dead-letter list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memory_service.core.ports.health import ComponentHealth


@dataclass
class QueueMessage:
    """A queue entry as claimed (or dead): id, topic, JSON payload, failed attempts, last error.

    ``id`` is opaque (a SQLite row id, a Redis stream entry id, as a string): compare it for
    equality and hand it back to ``ack``/``fail``/``replay_dead``; never parse or order by it.
    """

    id: str
    topic: str
    payload: dict[str, Any]
    attempts: int = 0
    last_error: str | None = None


@runtime_checkable
class Queue(Protocol):
    """A durable, at-least-once, consumer-aware queue per topic (the graph-sync outbox).

    A message is *pending* (waiting, possibly in a retry backoff), *inflight* (held by the
    consumer that claimed it, until it acks, fails or releases it) or *dead* (failed
    ``max_attempts`` times; kept for inspection and replay). A consumer is a name chosen by its
    process (``"host:pid"``); several processes may claim from one topic.

    Ordering guarantee (graph sync relies on it: node upserts before the edges that reference
    them, a delete after an upsert). Within a topic:

    * Messages are delivered in enqueue order, head first, to **one consumer at a time**: while
      a consumer holds messages of the topic, ``claim`` by any other consumer returns ``[]``; the
      holder's next claim continues after what it holds.
    * **Head of line**: a message behind the head is never delivered before the head. A failed
      message stays at the head; while it waits out its backoff nothing behind it is delivered;
      once dead it leaves the line and the rest moves on.
    * So a consumer applies a batch in order and, at its first failure, calls ``fail`` for that
      message and ``release`` for the rest, which are then delivered again after it.
    * ``replay_dead`` re-enqueues dead letters at the tail, in their original order, with new ids.

    A consumer that dies holding messages blocks its topic until the hold is older than the
    adapter's visibility timeout; then ``claim`` (or ``reclaim``) returns them to the head, as
    Redis's XAUTOCLAIM does with its min-idle-time. Delivery is at-least-once (a consumer too slow
    or dead before its ack has its messages delivered again), so operations must be idempotent.
    """

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[str]:
        """Append messages durably, in order; returns their ids."""
        ...

    def claim(self, topic: str, consumer: str, limit: int = 100) -> list[QueueMessage]:
        """Up to ``limit`` messages from the head of the line for ``consumer``, oldest first
        (``[]`` when another consumer holds the topic or the head is in its retry backoff)."""
        ...

    def ack(self, topic: str, ids: Sequence[str]) -> int:
        """Done: delete the messages (whoever holds them now); returns how many were there."""
        ...

    def fail(self, topic: str, message_id: str, error: str, *, max_attempts: int = 5) -> bool:
        """Record a failed attempt of a held message: back to the head of the line, claimable
        again once its backoff (growing with each attempt) has passed, or dead when this was
        attempt ``max_attempts``. Returns True when it went dead; a message nobody holds is left
        as it is (False)."""
        ...

    def release(self, topic: str, consumer: str) -> int:
        """Give back what ``consumer`` (and only it) holds, untouched, to the head of the line;
        returns how many."""
        ...

    def reclaim(self, topic: str, min_idle_seconds: float | None = None) -> int:
        """Return messages held longer than ``min_idle_seconds`` (default: the visibility
        timeout) by any consumer to the head of the line; returns how many. ``0`` takes back
        every hold: only for a process that knows it is the topic's sole consumer."""
        ...

    def dead(self, topic: str, limit: int = 100) -> list[QueueMessage]:
        """Dead letters, oldest first, with their ids, attempts and last error."""
        ...

    def replay_dead(self, topic: str, ids: Sequence[str] | None = None) -> int:
        """Re-enqueue dead letters (these ids, or all) at the tail with attempts reset; returns
        how many."""
        ...

    def counts(self, topic: str) -> dict[str, int]:
        """``pending`` (waiting, backoff included), ``inflight`` (held) and ``failed`` (dead)."""
        ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...
