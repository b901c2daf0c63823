"""The Queue port on Redis Streams: one stream and consumer group per topic, dead letters beside it.

Claims read new messages with XREADGROUP and take back what a dead consumer held with XAUTOCLAIM
(min-idle-time = the visibility timeout); acks are XACK + XDEL. What the group alone cannot
express, the port's ordering guarantee (one consumer holds a topic at a time, head of line,
retry backoff), the Lua scripts in :mod:`.redis_queue_scripts` enforce atomically; see there for
the key layout. Attempts and last errors are kept per message id in a hash.

Durability is the server's: run it with AOF (``appendonly yes``; ``appendfsync always`` for
"nothing acknowledged that is not durable", ``everysec`` to risk one second) for the outbox.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, QueueMessage
from memory_service.stores.redis import queue_scripts as lua
from memory_service.stores.redis.client import connect, safe_url, server_version, translated

_CODE = "SVC_QUEUE"
# The placeholder consumer that owns released, failed and reclaimed messages (pending again).
PARKED = "(parked)"
_STREAM_ID = re.compile(r"^\d+-\d+$")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisQueue:
    """Durable at-least-once queue with the Queue port's ordering (see its docstring).

    Args:
        url: ``redis://[:password@]host:port/db`` (``rediss://`` for TLS).
        prefix: put before every key, so several projects can share one server.
        group: the consumer group every consumer of a topic joins.
        visibility_timeout: seconds after which a hold counts as a dead consumer's.
        backoff_base, backoff_max: retry backoff after a failure (doubling from base, capped).
        socket_timeout: seconds before a call to an unresponsive server fails.
    """

    def __init__(
        self,
        url: str,
        prefix: str = "",
        *,
        group: str = "consumers",
        visibility_timeout: float = 300.0,
        backoff_base: float = 1.0,
        backoff_max: float = 300.0,
        socket_timeout: float = 10.0,
    ) -> None:
        self._url = url
        self._prefix = prefix
        self._group = group
        self._visibility_ms = int(visibility_timeout * 1000)
        self._backoff_ms = (int(backoff_base * 1000), int(backoff_max * 1000))
        self._client = connect(url, code=_CODE, what="queue", socket_timeout=socket_timeout)
        self._scripts = {
            name: self._client.register_script(getattr(lua, name))
            for name in ("CLAIM", "ACK", "FAIL", "RELEASE", "RECLAIM", "COUNTS", "REPLAY_DEAD")
        }

    def all_keys(self, topic: str) -> tuple[str, str, str]:
        """stream, meta and dead-letter keys of a topic (one hash tag: one Cluster slot)."""
        stream = f"{self._prefix}q:{{{topic}}}"
        return stream, f"{stream}:meta", f"{stream}:dead"

    def _calls(self, operation: str) -> AbstractContextManager[None]:
        return translated(_CODE, "queue", operation, self._url)

    def _run(self, script: str, operation: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        with self._calls(operation):
            return self._scripts[script](keys=list(keys), args=list(args))

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[str]:
        if not payloads:
            return []
        stream = self.all_keys(topic)[0]
        with self._calls("enqueue"):
            pipe = self._client.pipeline(transaction=True)
            for payload in payloads:
                pipe.xadd(stream, {"p": json.dumps(payload)})
            pipe.sadd(f"{self._prefix}q:topics", topic)
            *ids, _ = pipe.execute()
        return [_text(i) for i in ids]

    def claim(self, topic: str, consumer: str, limit: int = 100) -> list[QueueMessage]:
        if consumer == PARKED:
            raise ValueError(f"{PARKED!r} is the queue's own placeholder, not a consumer name")
        stream, meta, _ = self.all_keys(topic)
        args = (self._group, consumer, limit, self._visibility_ms, PARKED)
        rows = self._run("CLAIM", "claim", (stream, meta), args)
        return [QueueMessage(_text(i), topic, json.loads(p), int(a), _text(e) or None) for i, p, a, e in rows]

    def ack(self, topic: str, ids: Sequence[str]) -> int:
        valid = [i for i in ids if _STREAM_ID.match(i)]
        if not valid:
            return 0
        stream, meta, _ = self.all_keys(topic)
        return int(self._run("ACK", "ack", (stream, meta), (self._group, *valid)))

    def fail(self, topic: str, message_id: str, error: str, *, max_attempts: int = 5) -> bool:
        if not _STREAM_ID.match(message_id):
            return False
        base, cap = self._backoff_ms
        args = (self._group, message_id, error or "failed", max_attempts, base, cap, PARKED)
        return int(self._run("FAIL", "fail", self.all_keys(topic), args)) == 1

    def release(self, topic: str, consumer: str) -> int:
        if consumer == PARKED:
            return 0
        stream = self.all_keys(topic)[0]
        return int(self._run("RELEASE", "release", (stream,), (self._group, consumer, PARKED)))

    def reclaim(self, topic: str, min_idle_seconds: float | None = None) -> int:
        idle = self._visibility_ms if min_idle_seconds is None else int(min_idle_seconds * 1000)
        stream = self.all_keys(topic)[0]
        return int(self._run("RECLAIM", "reclaim", (stream,), (self._group, idle, PARKED)))

    def dead(self, topic: str, limit: int = 100) -> list[QueueMessage]:
        with self._calls("dead"):
            entries = self._client.xrange(self.all_keys(topic)[2], count=limit) or []
        out = []
        for _, raw in entries:
            fields = {_text(k): _text(v) for k, v in (raw or {}).items()}
            attempts, error = int(fields.get("attempts", 0)), fields.get("error") or None
            out.append(
                QueueMessage(fields["origin"], topic, json.loads(fields.get("p", "{}")), attempts, error)
            )
        return out

    def replay_dead(self, topic: str, ids: Sequence[str] | None = None) -> int:
        stream, _, dead = self.all_keys(topic)
        args = (self._group, "1" if ids is None else "0", *(ids or ()))
        return int(self._run("REPLAY_DEAD", "replay_dead", (stream, dead), args))

    def counts(self, topic: str) -> dict[str, int]:
        stream, _, dead = self.all_keys(topic)
        live, inflight, failed = self._run("COUNTS", "counts", (stream, dead), (self._group, PARKED))
        return {"pending": int(live) - int(inflight), "inflight": int(inflight), "failed": int(failed)}

    def topics(self) -> list[str]:
        """Every topic ever enqueued to under this prefix."""
        with self._calls("topics"):
            return sorted(_text(t) for t in self._client.smembers(f"{self._prefix}q:topics"))

    def health(self) -> ComponentHealth:
        try:
            with self._calls("health"):
                self._client.ping()
                version = server_version(self._client)
            totals = {"pending": 0, "inflight": 0, "failed": 0}
            for topic in self.topics():
                for name, n in self.counts(topic).items():
                    totals[name] += n
        except ServiceUnavailableError as exc:
            return ComponentHealth("queue", "unavailable", "redis", exc.message)
        if totals["failed"]:
            detail = f"{totals['failed']} dead message(s): see dead() and replay_dead()"
            return ComponentHealth("queue", "degraded", "redis", detail, extra=dict(totals))
        detail = f"{safe_url(self._url)} (Redis {version}), keys under {self._prefix!r}"
        return ComponentHealth("queue", "ok", "redis", detail, extra=dict(totals))

    def close(self) -> None:
        self._client.close()
