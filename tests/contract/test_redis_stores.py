"""What the Redis cache and queue add to the ports' contract (test_cache_queue.py runs that on
Redis too): durability through a server crash with AOF, errors that say what to fix, health."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memory_service.core.errors import ServiceUnavailableError
from memory_service.stores.redis.cache import RedisCache
from memory_service.stores.redis.client import safe_url
from memory_service.stores.redis.queue import RedisQueue
from tests.servers.redis_server import RedisServer, free_port

pytestmark = pytest.mark.contract


def test_outbox_survives_a_server_crash_with_aof(tmp_path: Path, redis_servers: list[RedisServer]) -> None:
    server = RedisServer(tmp_path / "redis", appendonly=True)
    redis_servers.append(server)
    server.start()
    queue = RedisQueue(server.url, "crash:")
    ids = queue.enqueue("sync", [{"n": i} for i in range(3)])
    assert [m.id for m in queue.claim("sync", "host:1", limit=1)] == ids[:1]
    queue.close()
    server.kill()  # SIGKILL: nothing flushed on the way out

    server.start()  # same directory and port: the AOF is replayed
    reopened = RedisQueue(server.url, "crash:")
    assert reopened.counts("sync") == {"pending": 2, "inflight": 1, "failed": 0}
    assert reopened.release("sync", "host:1") == 1
    assert [m.id for m in reopened.claim("sync", "host:2")] == ids
    reopened.close()


def test_an_unreachable_server_is_a_service_error_naming_the_setting() -> None:
    url = f"redis://:secret@127.0.0.1:{free_port()}/0"  # nothing listens there
    cache, queue = RedisCache(url, socket_timeout=2.0), RedisQueue(url, socket_timeout=2.0)
    for call, code in ((lambda: cache.get("ns", "k"), "SVC_CACHE"), (lambda: queue.counts("t"), "SVC_QUEUE")):
        with pytest.raises(ServiceUnavailableError) as err:
            call()
        assert err.value.code == code
        assert "MEMORY_REDIS__URL" in err.value.suggestion
        assert "secret" not in err.value.message + err.value.suggestion + str(err.value.details)
    assert cache.health().state == "unavailable"
    assert queue.health().state == "unavailable"
    cache.close()
    queue.close()


def test_a_url_the_driver_cannot_parse_is_a_service_error() -> None:
    with pytest.raises(ServiceUnavailableError) as err:
        RedisCache("http://127.0.0.1:1/0")
    assert err.value.code == "SVC_CACHE" and "MEMORY_REDIS__URL" in err.value.suggestion


def test_passwords_are_masked_in_urls() -> None:
    assert safe_url("redis://:pw@host:6380/1") == "redis://:***@host:6380/1"
    assert safe_url("rediss://user:pw@host/0") == "rediss://user:***@host/0"
    assert safe_url("redis://host:6379/0") == "redis://host:6379/0"


def test_health_and_keys_stay_under_the_prefix(redis_url: str) -> None:
    import redis

    prefix = f"test:{uuid.uuid4().hex}:"
    cache, queue = RedisCache(redis_url, prefix), RedisQueue(redis_url, prefix)
    client = redis.Redis.from_url(redis_url)
    try:
        cache.set("jobs", "j1", b"{}")
        queue.enqueue("sync", [{"n": 1}])
        assert cache.health().state == "ok" and "Redis" in cache.health().detail
        health = queue.health()
        assert (health.state, health.extra) == ("ok", {"pending": 1, "inflight": 0, "failed": 0})
        keys = {k.decode() for k in client.scan_iter(match=prefix + "*")}
        assert keys == {f"{prefix}c:jobs:j1", f"{prefix}q:{{sync}}", f"{prefix}q:topics"}
    finally:
        cache.close()
        queue.close()
        client.unlink(*client.scan_iter(match=prefix + "*"))
        client.close()
