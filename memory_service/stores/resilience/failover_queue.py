"""A Queue on Redis that falls back to the local SQLite queue while Redis is down.

A write must not fail because Redis is away: the graph-sync outbox is what makes it durable. So
an ``enqueue`` Redis refuses goes to :class:`~.local_queue.LocalQueue` in the data directory, and
this process keeps its order (the outbox's whole point: node before edges, upsert before delete):

* once a topic went local, every later message of it goes local too, until the local queue of
  that topic is empty again; only then do new messages go to Redis (back to normal);
* ``claim`` serves Redis first, since anything there is older than what went local; the local
  messages are served only once Redis is known to hold nothing of the topic (seen empty by a
  claim, or empty the last time it answered). While Redis is down and may still hold older
  messages, the local ones wait: order before liveness.

Message ids tell their queue apart (Redis stream ids ``ms-seq``, local row ids digits), so
``ack``/``fail``/``replay_dead`` go where the message is. A Redis ``release`` that fails (the
server went away between a claim and its release), or a ``claim`` that fails (the script may
have run and its answer been lost), is remembered and the consumer's holdings released before
its next claim, as a held message would otherwise wait out the visibility timeout. Each process
keeps its own order; several processes sharing one Redis are each in order, not in order with
each other while one is local.

``reclaim``, ``dead`` and ``counts`` ask both queues alike: the same call goes to the local queue
and to Redis, and their answers are joined (the local one alone while Redis is down); they take
one path (:meth:`FailoverQueue.around`, stores/resilience/delegate.py). The other methods keep
the order, route by message id or remember a failed release, each in its own way, and are stated.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, Queue, QueueMessage
from memory_service.stores.local.queue import LocalQueue
from memory_service.stores.resilience.delegate import PortCall, PortDelegate

logger = logging.getLogger(__name__)
T = TypeVar("T")
_REDIS_ID = re.compile(r"^\d+-\d+$")


def _live(counts: dict[str, int]) -> int:
    return counts.get("pending", 0) + counts.get("inflight", 0)


# How the answers of a call asked of both queues are joined: (Redis's, the local one's, arguments).
_JOIN: dict[str, Callable[[Any, Any, dict[str, Any]], Any]] = {
    "reclaim": lambda remote, local, _: local + remote,
    "dead": lambda remote, local, args: (remote + local)[: args["limit"]],
    "counts": lambda remote, local, _: {
        name: local.get(name, 0) + remote.get(name, 0) for name in ("pending", "inflight", "failed")
    },
}


class FailoverQueue(PortDelegate, port=Queue):
    """Redis first, the local durable queue while Redis is down; see the module docstring.

    Args:
        redis: the Redis queue (the normal home of messages).
        local: the data directory's queue.
    """

    def __init__(self, redis: Queue, local: LocalQueue) -> None:
        self.redis = redis
        self.local = local
        self._lock = threading.RLock()
        self._local_mode: dict[str, bool] = {}  # topic -> messages of it went local
        self._redis_clear: dict[str, bool] = {}  # topic -> Redis held none of it when last seen
        self._stranded: set[tuple[str, str]] = set()  # (topic, consumer) whose Redis release failed
        self._down: str | None = None

    # ------------------------------------------------------------------ plumbing
    def _redis(self, fn: Callable[[], T]) -> T:
        """A Redis call; records whether Redis answers (and logs when that changes)."""
        try:
            result = fn()
        except ServiceUnavailableError as exc:
            with self._lock:
                if self._down is None:
                    logger.warning("Redis queue unreachable, using the local queue: %s", exc.message)
                self._down = exc.message
            raise
        if self._down is not None:
            with self._lock:
                self._down = None
            logger.warning("Redis queue answers again")
        return result

    def _is_local(self, topic: str) -> bool:
        """Whether messages of ``topic`` go local (checked on disk the first time: a previous
        run of this process may have left some there)."""
        with self._lock:
            if topic not in self._local_mode:
                self._local_mode[topic] = _live(self.local.counts(topic)) > 0
            return self._local_mode[topic]

    def _claim_redis(self, topic: str, consumer: str, limit: int) -> list[QueueMessage]:
        """A Redis claim. One that fails may still have taken messages (the script ran, the
        answer was lost with the connection): they would wait out the visibility timeout, so the
        consumer's holdings are released before its next claim, as after a failed release."""
        try:
            return self._redis(lambda: self.redis.claim(topic, consumer, limit))
        except ServiceUnavailableError:
            self._stranded.add((topic, consumer))
            raise

    def _unstrand(self, topic: str) -> None:
        for key in [k for k in self._stranded if k[0] == topic]:
            self._redis(functools.partial(self.redis.release, *key))
            self._stranded.discard(key)

    # ------------------------------------------------------------------ the Queue port
    def around(self, name: str, call: PortCall) -> Any:
        """``reclaim``, ``dead`` and ``counts``: the local queue's answer joined with Redis's
        (:data:`_JOIN`), or the local one alone while Redis does not answer."""
        local = call.on(self.local)
        try:
            remote = self._redis(lambda: call.on(self.redis))
        except ServiceUnavailableError:
            return local
        return _JOIN[name](remote, local, call.arguments)

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[str]:
        with self._lock:
            if not self._is_local(topic):
                try:
                    ids = self._redis(lambda: self.redis.enqueue(topic, payloads))
                except ServiceUnavailableError:
                    self._local_mode[topic] = True
                else:
                    if payloads:
                        self._redis_clear[topic] = False
                    return ids
            return self.local.enqueue(topic, payloads)

    def claim(self, topic: str, consumer: str, limit: int = 100) -> list[QueueMessage]:
        with self._lock:
            if not self._is_local(topic):
                self._unstrand(topic)
                batch = self._claim_redis(topic, consumer, limit)
                if not batch and not self._redis_clear.get(topic, False):
                    # Known empty now: a later outage may serve the local queue at once.
                    self._redis_clear[topic] = not _live(self._redis(lambda: self.redis.counts(topic)))
                return batch
            try:
                self._unstrand(topic)
                batch = self._claim_redis(topic, consumer, limit)
                if batch:
                    return batch
                if _live(self._redis(lambda: self.redis.counts(topic))):
                    return []  # another consumer holds it, or its head waits for a retry
                self._redis_clear[topic] = True
                redis_up = True
            except ServiceUnavailableError:
                if not self._redis_clear.get(topic, False):
                    return []  # older messages may wait in Redis: keep the order
                redis_up = False
            batch = self.local.claim(topic, consumer, limit)
            if not batch and redis_up and _live(self.local.counts(topic)) == 0:
                self._local_mode[topic] = False  # drained: new messages go to Redis again
                logger.warning("local queue of %r drained: back to Redis", topic)
            return batch

    def _split(self, ids: Sequence[str]) -> tuple[list[str], list[str]]:
        return [i for i in ids if _REDIS_ID.match(i)], [i for i in ids if not _REDIS_ID.match(i)]

    def ack(self, topic: str, ids: Sequence[str]) -> int:
        remote, local = self._split(ids)
        done = self.local.ack(topic, local) if local else 0
        return done + (self._redis(lambda: self.redis.ack(topic, remote)) if remote else 0)

    def fail(self, topic: str, message_id: str, error: str, *, max_attempts: int = 5) -> bool:
        if _REDIS_ID.match(message_id):
            return self._redis(lambda: self.redis.fail(topic, message_id, error, max_attempts=max_attempts))
        return self.local.fail(topic, message_id, error, max_attempts=max_attempts)

    def release(self, topic: str, consumer: str) -> int:
        released = self.local.release(topic, consumer)
        try:
            return released + self._redis(lambda: self.redis.release(topic, consumer))
        except ServiceUnavailableError:
            with self._lock:
                self._stranded.add((topic, consumer))
            return released

    def replay_dead(self, topic: str, ids: Sequence[str] | None = None) -> int:
        """Dead letters go back to the tail of their own queue (Redis ones need Redis up)."""
        if ids is None:
            return self.local.replay_dead(topic) + self._redis(lambda: self.redis.replay_dead(topic))
        remote, local = self._split(ids)
        done = self.local.replay_dead(topic, local) if local else 0
        return done + (self._redis(lambda: self.redis.replay_dead(topic, remote)) if remote else 0)

    def health(self) -> ComponentHealth:
        """Redis's health; ``degraded`` while Redis is down or messages wait in the local queue."""
        health = self.redis.health()
        local = self.local.counts()
        if health.state == "ok" and not _live(local) and not local["failed"]:
            return health
        extra = {**health.extra, **{f"local_{k}": v for k, v in local.items()}}
        why = "Redis unreachable" if health.state == "unavailable" else f"Redis {health.state}"
        detail = f"{why}; local queue: {_live(local)} waiting, {local['failed']} dead ({health.detail})"
        return ComponentHealth(health.name, "degraded", health.backend, detail, extra=extra)

    def close(self) -> None:
        self.redis.close()
        self.local.close()
