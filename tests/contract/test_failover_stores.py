"""The failover cache and queue (stores/failover_*.py) against a real redis-server the test stops
and starts again (same port, same AOF directory): Redis going away never fails a call, the queue
keeps this process's order across the local detour, and both move back when Redis answers."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import Cache, Queue
from memory_service.stores.local.db import LocalDB
from memory_service.stores.local.queue import LocalQueue
from memory_service.stores.redis.cache import RedisCache
from memory_service.stores.redis.queue import RedisQueue
from memory_service.stores.resilience.failover_cache import FailoverCache
from memory_service.stores.resilience.failover_queue import FailoverQueue
from tests.servers.redis_server import RedisServer

pytestmark = pytest.mark.contract
T = "sync"


@pytest.fixture
def server(tmp_path: Path, redis_servers: list[RedisServer]) -> RedisServer:
    redis = RedisServer(tmp_path / "redis", appendonly=True)
    redis_servers.append(redis)
    redis.start()
    return redis


@pytest.fixture
def queue(server: RedisServer, tmp_path: Path) -> Iterator[FailoverQueue]:
    q = open_queue(server, tmp_path)
    yield q
    q.close()


def open_queue(server: RedisServer, tmp_path: Path, prefix: str = "fo:") -> FailoverQueue:
    redis = RedisQueue(server.url, prefix, socket_timeout=2.0, backoff_base=0.01)
    return FailoverQueue(redis, LocalQueue(LocalDB(tmp_path / "local.db"), backoff_base=0.01))


def drain(q: Queue, consumer: str = "host:1") -> list[int]:
    out: list[int] = []
    while batch := q.claim(T, consumer, limit=3):
        out += [m.payload["n"] for m in batch]
        q.ack(T, [m.id for m in batch])
    return out


def test_both_adapters_satisfy_their_ports(queue: FailoverQueue, server: RedisServer) -> None:
    cache = FailoverCache(RedisCache(server.url, "fo:"))
    assert isinstance(queue, Queue) and isinstance(cache, Cache)
    cache.close()


def test_queue_detours_through_the_local_queue_and_keeps_the_order(
    queue: FailoverQueue, server: RedisServer
) -> None:
    queue.enqueue(T, [{"n": 1}, {"n": 2}])  # in Redis, not yet applied
    server.stop()
    local_ids = queue.enqueue(T, [{"n": 3}, {"n": 4}])
    assert all(i.isdigit() for i in local_ids)  # the local queue's row ids
    # Redis may still hold older messages (1, 2): the local ones wait rather than jump the line.
    assert queue.claim(T, "host:1") == []
    assert queue.counts(T)["pending"] == 2  # what can be seen: the local queue
    assert queue.health().state == "degraded"

    server.start()
    queue.enqueue(T, [{"n": 5}])  # still local until the local queue is drained: order holds
    assert drain(queue) == [1, 2, 3, 4, 5]
    assert queue.local.counts(T) == {"pending": 0, "inflight": 0, "failed": 0}
    [back] = queue.enqueue(T, [{"n": 6}])
    assert not back.isdigit()  # a Redis stream id again
    assert drain(queue) == [6]
    assert queue.health().state == "ok"


def test_local_messages_are_served_while_redis_stays_down_once_it_was_seen_empty(
    queue: FailoverQueue, server: RedisServer
) -> None:
    queue.enqueue(T, [{"n": 1}])
    assert drain(queue) == [1]  # Redis seen empty of the topic
    server.stop()
    queue.enqueue(T, [{"n": 2}, {"n": 3}])
    assert drain(queue) == [2, 3]  # applied without Redis
    queue.enqueue(T, [{"n": 4}])
    server.start()
    assert drain(queue) == [4]
    assert not queue.enqueue(T, [{"n": 5}])[0].isdigit()


def test_a_failed_message_in_the_local_queue_keeps_its_place(
    queue: FailoverQueue, server: RedisServer
) -> None:
    queue.enqueue(T, [{"n": 1}])
    drain(queue)
    server.stop()
    queue.enqueue(T, [{"n": 2}, {"n": 3}])
    first = queue.claim(T, "host:1", limit=2)
    assert queue.fail(T, first[0].id, "graph refused", max_attempts=3) is False
    queue.release(T, "host:1")
    server.start()
    threading.Event().wait(0.1)  # its retry backoff (0.01 s)
    assert drain(queue) == [2, 3]
    assert queue.local.counts(T) == {"pending": 0, "inflight": 0, "failed": 0}


def test_a_restarted_process_keeps_writing_local_until_the_local_queue_is_drained(
    queue: FailoverQueue, server: RedisServer, tmp_path: Path
) -> None:
    server.stop()
    queue.enqueue(T, [{"n": 1}])
    queue.close()
    server.start()
    reopened = open_queue(server, tmp_path)
    try:
        assert reopened.enqueue(T, [{"n": 2}])[0].isdigit()  # behind 1, which is local
        assert drain(reopened) == [1, 2]
    finally:
        reopened.close()


def test_redis_stopping_mid_traffic_loses_nothing_and_reorders_nothing(
    queue: FailoverQueue, server: RedisServer
) -> None:
    """A producer and a consumer thread run while the server is stopped and started twice."""
    total, produced, seen = 600, threading.Event(), list[int]()

    def produce() -> None:
        for n in range(total):
            queue.enqueue(T, [{"n": n}])
        produced.set()

    def consume() -> None:
        while True:
            try:
                batch = queue.claim(T, "host:1", limit=20)
            except ServiceUnavailableError:
                batch = []
            if not batch:
                if produced.is_set() and len(set(seen)) == total:
                    return
                threading.Event().wait(0.005)
                continue
            seen.extend(m.payload["n"] for m in batch)
            try:
                queue.ack(T, [m.id for m in batch])
            except ServiceUnavailableError:  # Redis went away before the ack: delivered again
                queue.release(T, "host:1")

    threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
    for thread in threads:
        thread.start()
    for _ in range(2):
        server.stop()
        threading.Event().wait(0.3)
        server.start()
        threading.Event().wait(0.3)
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    first_seen = list(dict.fromkeys(seen))
    assert first_seen == list(range(total))  # every message, in order (repeats only of a prefix)
    assert queue.local.counts(T)["pending"] == 0


def test_cache_turns_an_outage_into_misses_and_replays_what_must_not_be_lost(
    server: RedisServer, tmp_path: Path
) -> None:
    prefix = f"c{uuid.uuid4().hex[:6]}:"
    cache = FailoverCache(RedisCache(server.url, prefix, socket_timeout=2.0), probe_interval=0.0)
    cache.set("ns", "k", b"v")
    cache.set("old", "k", b"stale")
    assert cache.incr("gen", "w") == 1
    server.stop()
    assert cache.get("ns", "k") is None  # a miss, not an error
    cache.set("ns", "k2", b"v2")  # skipped
    assert cache.incr("gen", "w") == 0  # remembered
    assert cache.delete_namespace("old") == 0  # remembered
    assert cache.stats()["misses"] >= 1
    health = cache.health()
    assert health.state == "degraded" and "caching off" in health.detail
    server.start()
    assert cache.get("ns", "k") == b"v"  # AOF kept it; the first call that answers replays
    assert cache.get("gen", "w") == b"2"  # the increment made during the outage
    assert cache.get("old", "k") is None  # the namespace deletion made during the outage
    assert cache.health().state == "ok"
    cache.close()
