"""The Cache port on Redis: one string key per entry, TTLs by Redis itself.

Keys are ``<prefix>c:<namespace>:<key>`` (``:`` and ``%`` in a namespace are percent-encoded, so a
namespace never reads as the start of another), which lets ``delete_namespace`` find a namespace's
keys with ``SCAN MATCH`` and remove them with ``UNLINK`` (freed in the background) without a
per-namespace index to keep in step with expiries. Job state (``core/jobs.py``) and the embedding
and search caches all go through this port.

Hit and miss counts are this process's, like the SQLite cache's. ``entries`` and ``size_bytes``
walk the prefix's keys with SCAN (O(keys), for statistics, never on the request path);
``size_bytes`` asks ``MEMORY USAGE`` of a sample and scales it up, so it is an estimate.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager

import redis

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth
from memory_service.stores.redis.client import connect, safe_url, server_version, translated

_CODE = "SVC_CACHE"
_CHUNK = 500  # keys per MGET / pipeline / UNLINK
_SIZE_SAMPLE = 1000  # keys whose MEMORY USAGE is asked for by size_bytes


def _bytes(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value  # the client does not decode


def _glob_escape(text: str) -> str:
    """``text`` as a literal inside a SCAN MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


class RedisCache:
    """Key/value cache with optional TTL on a Redis server.

    Args:
        url: ``redis://[:password@]host:port/db`` (``rediss://`` for TLS).
        prefix: put before every key, so several projects can share one server.
        socket_timeout: seconds before a call to an unresponsive server fails.
    """

    def __init__(self, url: str, prefix: str = "", *, socket_timeout: float = 5.0) -> None:
        self._url = url
        self._prefix = prefix
        self._client = connect(url, code=_CODE, what="cache", socket_timeout=socket_timeout)
        self._hits = 0
        self._misses = 0
        self._counter_lock = threading.Lock()

    def _key(self, namespace: str, key: str) -> str:
        return f"{self._namespace_prefix(namespace)}{key}"

    def _namespace_prefix(self, namespace: str) -> str:
        encoded = namespace.replace("%", "%25").replace(":", "%3A")
        return f"{self._prefix}c:{encoded}:"

    def _calls(self, operation: str) -> AbstractContextManager[None]:
        return translated(_CODE, "cache", operation, self._url)

    def get(self, namespace: str, key: str) -> bytes | None:
        return self.get_many(namespace, [key]).get(key)

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        with self._calls("get_many"):
            for start in range(0, len(wanted), _CHUNK):
                part = wanted[start : start + _CHUNK]
                values = self._client.mget([self._key(namespace, k) for k in part])
                found.update((k, _bytes(v)) for k, v in zip(part, values, strict=True) if v is not None)
        with self._counter_lock:
            self._hits += len(found)
            self._misses += len(wanted) - len(found)
        return found

    def set(self, namespace: str, key: str, value: bytes, ttl_seconds: float | None = None) -> None:
        self.set_many(namespace, {key: value}, ttl_seconds)

    def set_many(self, namespace: str, items: dict[str, bytes], ttl_seconds: float | None = None) -> None:
        """A TTL that has already run out (<= 0 ms) removes the entries: they would read as misses."""
        if not items:
            return
        ttl_ms = None if ttl_seconds is None else int(ttl_seconds * 1000)
        names = [(self._key(namespace, k), v) for k, v in items.items()]
        with self._calls("set_many"):
            for start in range(0, len(names), _CHUNK):
                pipe = self._client.pipeline(transaction=False)
                for name, value in names[start : start + _CHUNK]:
                    if ttl_ms is None:
                        pipe.set(name, value)
                    elif ttl_ms > 0:
                        pipe.set(name, value, px=ttl_ms)
                    else:
                        pipe.unlink(name)
                pipe.execute()

    def delete_namespace(self, namespace: str) -> int:
        deleted = 0
        with self._calls("delete_namespace"):
            batch: list[bytes] = []
            for name in self._scan(_glob_escape(self._namespace_prefix(namespace)) + "*"):
                batch.append(name)
                if len(batch) >= _CHUNK:
                    deleted += int(self._client.unlink(*batch))
                    batch = []
            if batch:
                deleted += int(self._client.unlink(*batch))
        return deleted

    def incr(self, namespace: str, key: str) -> int:
        """INCR, and PERSIST: a counter never expires (as in the SQLite cache)."""
        with self._calls("incr"):
            pipe = self._client.pipeline(transaction=True)
            pipe.incr(self._key(namespace, key))
            pipe.persist(self._key(namespace, key))
            value, _ = pipe.execute()
        return int(value)

    def _scan(self, match: str) -> Iterator[bytes]:
        yield from self._client.scan_iter(match=match, count=1000)

    def _all_keys(self) -> Iterator[bytes]:
        return self._scan(_glob_escape(f"{self._prefix}c:") + "*")

    def _counters(self) -> dict[str, float]:
        with self._counter_lock:
            hits, misses = self._hits, self._misses
        total = hits + misses
        return {"hits": float(hits), "misses": float(misses), "hit_rate": hits / total if total else 0.0}

    def stats(self) -> dict[str, float]:
        """hits, misses, hit_rate (this process), entries (keys under the prefix, by SCAN)."""
        with self._calls("stats"):
            entries = sum(1 for _ in self._all_keys())
        return {**self._counters(), "entries": float(entries)}

    def size_bytes(self) -> int:
        """Estimate: MEMORY USAGE of up to 1,000 keys, scaled to the number of keys."""
        with self._calls("size_bytes"):
            count, sample = 0, list[bytes]()
            for name in self._all_keys():
                count += 1
                if len(sample) < _SIZE_SAMPLE:
                    sample.append(name)
            if not sample:
                return 0
            try:
                pipe = self._client.pipeline(transaction=False)
                for name in sample:
                    pipe.memory_usage(name, samples=0)
                sizes = [int(s or 0) for s in pipe.execute()]
            except redis.ResponseError:  # MEMORY disabled (some managed services): value lengths
                pipe = self._client.pipeline(transaction=False)
                for name in sample:
                    pipe.strlen(name)
                sizes = [int(s) + len(n) for s, n in zip(pipe.execute(), sample, strict=True)]
        return int(sum(sizes) * count / len(sample))

    def health(self) -> ComponentHealth:
        """PING and the server version (cheap: no key walk); hit counters as extra."""
        try:
            with self._calls("health"):
                self._client.ping()
                version = server_version(self._client)
        except ServiceUnavailableError as exc:
            return ComponentHealth("cache", "unavailable", "redis", exc.message)
        detail = f"{safe_url(self._url)} (Redis {version}), keys under {self._prefix!r}"
        return ComponentHealth("cache", "ok", "redis", detail, extra=self._counters())

    def close(self) -> None:
        self._client.close()
