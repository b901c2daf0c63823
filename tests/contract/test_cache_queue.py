"""Contract tests of the Cache and Queue ports, run against every backend: SQLite and Redis.

Two handles opened on one backend (``make_queue()`` twice) share its data, as two processes do:
a SQLite file opened twice, or one Redis server under one key prefix. The Redis server is the
session's (``tests/servers/redis_server.py``); each test keeps to its own key prefix.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_service.core.ports import Cache, Queue
from memory_service.stores.local.cache import LocalCache
from memory_service.stores.local.db import DB_FILENAME, LocalDB
from memory_service.stores.local.queue import LocalQueue

pytestmark = pytest.mark.contract

REPO = Path(__file__).resolve().parents[2]
T = "sync"  # the topic most tests use


class Backend:
    """Opens caches and queues on one backend's shared storage and closes them at the end."""

    def __init__(self, name: str, tmp_path: Path, redis_url: str | None) -> None:
        self.name = name
        self.spec: dict[str, Any] = (
            {"backend": "sqlite", "path": str(tmp_path / DB_FILENAME)}
            if redis_url is None
            else {"backend": "redis", "url": redis_url, "prefix": f"test:{uuid.uuid4().hex}:"}
        )
        self._opened: list[Any] = []

    def make_queue(self, **options: Any) -> Queue:
        queue = open_queue(self.spec, **options)
        self._opened.append(queue)
        return queue

    def make_cache(self) -> Cache:
        if self.name == "sqlite":
            cache: Cache = LocalCache(LocalDB(Path(self.spec["path"])))  # closing it closes the file
        else:
            from memory_service.stores.redis.cache import RedisCache

            cache = RedisCache(self.spec["url"], self.spec["prefix"])
        self._opened.append(cache)
        return cache

    def close(self) -> None:
        for store in self._opened:
            store.close()
        if self.name == "redis":
            import redis

            client = redis.Redis.from_url(self.spec["url"])
            keys = list(client.scan_iter(match=self.spec["prefix"] + "*"))
            if keys:
                client.unlink(*keys)
            client.close()


def open_queue(spec: dict[str, Any], **options: Any) -> Queue:
    """A queue from a spec (also used by the worker processes)."""
    if spec["backend"] == "sqlite":
        return LocalQueue(LocalDB(Path(spec["path"])), **options)  # closing it closes the file
    from memory_service.stores.redis.queue import RedisQueue

    return RedisQueue(spec["url"], spec["prefix"], **options)


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    opened = Backend(request.param, tmp_path, url)
    yield opened
    opened.close()


def wait_for(probe: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll until ``probe()`` is truthy (no fixed sleeps); returns its value."""
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)
    return value


def numbers(messages: list[Any]) -> list[int]:
    return [m.payload["n"] for m in messages]


# --------------------------------------------------------------------------- queue: basics


def test_queue_satisfies_the_port(backend: Backend) -> None:
    assert isinstance(backend.make_queue(), Queue)
    assert isinstance(backend.make_cache(), Cache)


def test_claim_in_order_one_consumer_at_a_time(backend: Backend) -> None:
    queue = backend.make_queue()
    ids = queue.enqueue(T, [{"n": i} for i in range(5)])
    queue.enqueue("other", [{"n": 99}])
    assert all(isinstance(i, str) for i in ids) and len(set(ids)) == 5
    first = queue.claim(T, "a", limit=3)
    assert numbers(first) == [0, 1, 2] and [m.id for m in first] == ids[:3]
    assert (first[0].topic, first[0].attempts, first[0].last_error) == (T, 0, None)
    assert queue.counts(T) == {"pending": 2, "inflight": 3, "failed": 0}
    assert queue.claim(T, "b") == []  # a holds the topic
    assert numbers(queue.claim("other", "b")) == [99]  # topics are independent
    assert numbers(queue.claim(T, "a")) == [3, 4]  # the holder continues after what it holds
    assert queue.ack(T, [m.id for m in first]) == 3
    assert queue.counts(T) == {"pending": 0, "inflight": 2, "failed": 0}
    assert queue.ack(T, ids[3:]) == 2
    assert queue.ack(T, ids[3:]) == 0  # acking twice is harmless
    assert queue.claim(T, "b") == []
    assert queue.counts(T) == {"pending": 0, "inflight": 0, "failed": 0}


def test_release_gives_back_only_that_consumers_messages(backend: Backend) -> None:
    queue = backend.make_queue()
    queue.enqueue(T, [{"n": i} for i in range(4)])
    queue.enqueue("t2", [{"n": 10}])
    assert numbers(queue.claim(T, "a", limit=3)) == [0, 1, 2]
    assert numbers(queue.claim("t2", "b")) == [10]
    assert queue.release(T, "b") == 0  # b holds nothing of this topic
    assert queue.counts(T)["inflight"] == 3
    assert queue.release(T, "a") == 3
    assert queue.counts("t2")["inflight"] == 1  # b's hold elsewhere is untouched
    again = queue.claim(T, "b", limit=10)
    assert numbers(again) == [0, 1, 2, 3] and all(m.attempts == 0 for m in again)
    assert queue.claim(T, "a") == []


def test_empty_and_unknown_things_are_harmless(backend: Backend) -> None:
    queue = backend.make_queue()
    assert queue.counts("nothing") == {"pending": 0, "inflight": 0, "failed": 0}
    assert queue.claim("nothing", "a") == []
    assert queue.release("nothing", "a") == 0
    assert queue.reclaim("nothing", 0) == 0
    assert queue.dead("nothing") == [] and queue.replay_dead("nothing") == 0
    assert queue.ack("nothing", ["1", "1-0", "bogus"]) == 0
    assert queue.fail("nothing", "bogus", "x") is False
    assert queue.enqueue(T, []) == []


def test_queue_survives_reopening(backend: Backend) -> None:
    queue = backend.make_queue()
    ids = queue.enqueue(T, [{"n": i} for i in range(3)])
    queue.claim(T, "host:1", limit=2)  # then the process "crashes"
    queue.close()
    reopened = backend.make_queue()
    assert reopened.counts(T) == {"pending": 1, "inflight": 2, "failed": 0}
    assert reopened.release(T, "host:1") == 2  # a restart under the same name takes them back
    batch = reopened.claim(T, "host:2")
    assert [m.id for m in batch] == ids
    reopened.ack(T, ids)
    assert reopened.enqueue(T, [{"n": 3}])[0] not in ids  # ids are never reused


# --------------------------------------------------------------------------- dead consumers


def test_a_dead_consumers_messages_are_reclaimed_after_the_visibility_timeout(backend: Backend) -> None:
    patient = backend.make_queue(visibility_timeout=600.0)
    quick = backend.make_queue(visibility_timeout=0.3)
    patient.enqueue(T, [{"n": i} for i in range(3)])
    held = patient.claim(T, "dead", limit=2)  # ... and never acks: its process died
    assert patient.claim(T, "alive") == []
    assert patient.reclaim(T) == 0  # held for less than the visibility timeout
    started = time.monotonic()
    batch = wait_for(lambda: quick.claim(T, "alive"))  # claim reclaims, like XAUTOCLAIM
    assert time.monotonic() - started >= 0.2
    assert numbers(batch) == [0, 1, 2]  # back at the head, in order
    assert quick.counts(T) == {"pending": 0, "inflight": 3, "failed": 0}
    quick.ack(T, [m.id for m in batch])
    assert patient.ack(T, [m.id for m in held]) == 0  # the late ack of the dead one finds nothing
    assert quick.counts(T) == {"pending": 0, "inflight": 0, "failed": 0}


def test_reclaim_takes_back_holds_at_once_for_a_sole_consumer(backend: Backend) -> None:
    queue = backend.make_queue()
    queue.enqueue(T, [{"n": i} for i in range(3)])
    queue.claim(T, "crashed", limit=2)
    assert queue.reclaim(T, min_idle_seconds=0) == 2
    assert queue.reclaim(T, min_idle_seconds=0) == 0
    assert numbers(queue.claim(T, "new")) == [0, 1, 2]


_HOLDER = """
import json, sys
from tests.contract.test_cache_queue import open_queue, T
queue = open_queue(json.loads(sys.argv[1]))
print(json.dumps([m.id for m in queue.claim(T, "doomed", limit=2)]), flush=True)
sys.stdin.read()  # hold them until killed
"""


def test_messages_of_a_killed_process_come_back_in_order(backend: Backend) -> None:
    patient, queue = backend.make_queue(visibility_timeout=600.0), backend.make_queue(visibility_timeout=0.5)
    ids = queue.enqueue(T, [{"n": i} for i in range(3)])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, json.dumps(backend.spec)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and json.loads(holder.stdout.readline()) == ids[:2]
        assert patient.claim(T, "survivor") == []  # the holder is alive
    finally:
        holder.kill()  # SIGKILL: no release, no ack
        holder.communicate(timeout=30)
    batch = wait_for(lambda: queue.claim(T, "survivor"))
    assert [m.id for m in batch] == ids
    assert queue.ack(T, ids) == 3


# --------------------------------------------------------------------------- failures


def test_a_failed_message_waits_its_backoff_at_the_head(backend: Backend) -> None:
    queue = backend.make_queue(backoff_base=0.3, backoff_max=0.5)
    queue.enqueue(T, [{"n": i} for i in range(3)])
    for attempt, backoff in ((1, 0.3), (2, 0.5)):  # doubling, capped
        head, *rest = queue.claim(T, "a")
        assert numbers([head, *rest]) == [0, 1, 2] and head.attempts == attempt - 1
        started = time.monotonic()
        assert queue.fail(T, head.id, f"boom {attempt}", max_attempts=5) is False
        assert queue.release(T, "a") == 2
        assert queue.counts(T) == {"pending": 3, "inflight": 0, "failed": 0}
        assert queue.claim(T, "b") == []  # nothing passes the head while it waits
        batch = wait_for(lambda: queue.claim(T, "a"))
        assert time.monotonic() - started >= backoff * 0.9
        assert numbers(batch) == [0, 1, 2]
        assert (batch[0].attempts, batch[0].last_error) == (attempt, f"boom {attempt}")
        assert queue.release(T, "a") == 3  # a release is no failed attempt
    assert queue.fail(T, head.id, "not held") is False  # nobody holds it: nothing recorded
    assert queue.claim(T, "a")[0].attempts == 2


def test_dead_letters_leave_the_line_and_replay_at_the_tail(backend: Backend) -> None:
    queue = backend.make_queue(backoff_base=0.0)
    ids = queue.enqueue(T, [{"n": i} for i in range(4)])
    for attempt in (1, 2, 3):
        (msg,) = queue.claim(T, "a", limit=1)
        assert msg.id == ids[0] and msg.attempts == attempt - 1
        assert queue.fail(T, msg.id, f"boom {attempt}", max_attempts=3) is (attempt == 3)
    assert queue.counts(T) == {"pending": 3, "inflight": 0, "failed": 1}
    (dead,) = queue.dead(T)
    assert (dead.id, dead.topic, dead.payload, dead.attempts, dead.last_error) == (
        ids[0], T, {"n": 0}, 3, "boom 3",
    )  # fmt: skip
    assert queue.health().state == "degraded"
    (msg,) = queue.claim(T, "a", limit=1)  # the line moved on
    assert numbers([msg]) == [1]
    assert queue.fail(T, msg.id, "bad", max_attempts=1) is True
    assert [d.payload["n"] for d in queue.dead(T)] == [0, 1]
    assert [d.payload["n"] for d in queue.dead(T, limit=1)] == [0]
    assert queue.replay_dead(T, [ids[1]]) == 1
    assert numbers(queue.claim(T, "a")) == [2, 3, 1]  # at the tail, attempts reset
    queue.release(T, "a")
    assert queue.replay_dead(T) == 1
    replayed = queue.claim(T, "a")
    assert numbers(replayed) == [2, 3, 1, 0] and all(m.attempts == 0 for m in replayed)
    assert queue.replay_dead(T) == 0 and queue.dead(T) == []
    assert queue.health().state == "ok"


# --------------------------------------------------------------------------- concurrency


def _consume(
    queue: Queue, consumer: str, log: list[int], lock: threading.Lock, stop: threading.Event
) -> None:
    rng = random.Random(consumer)
    while True:
        batch = queue.claim(T, consumer, limit=rng.randint(1, 7))
        if not batch:
            counts = queue.counts(T)
            if stop.is_set() and not counts["pending"] and not counts["inflight"]:
                return
            time.sleep(0.001)
            continue
        with lock:
            log.extend(m.payload["n"] for m in batch)
        queue.ack(T, [m.id for m in batch])


@pytest.mark.parametrize("shared_name", [False, True], ids=["own-names", "one-name"])
def test_threads_claiming_and_producing_lose_nothing(backend: Backend, shared_name: bool) -> None:
    """Two producers and four consumers: each message processed once; with one consumer per
    thread the topic is also processed in enqueue order (each producer's messages in turn)."""
    queue = backend.make_queue()
    log: list[int] = []
    lock, stop = threading.Lock(), threading.Event()
    errors: list[BaseException] = []

    def guarded(target: Callable[..., None], *args: Any) -> Callable[[], None]:
        def run() -> None:
            try:
                target(*args)
            except BaseException as exc:
                errors.append(exc)

        return run

    def produce(base: int) -> None:
        for i in range(100):
            queue.enqueue(T, [{"n": base + i}])

    consumers = [
        threading.Thread(target=guarded(_consume, queue, "c" if shared_name else f"c{n}", log, lock, stop))
        for n in range(4)
    ]
    producers = [threading.Thread(target=guarded(produce, base)) for base in (0, 1000)]
    for t in consumers + producers:
        t.start()
    for t in producers:
        t.join()
    stop.set()
    for t in consumers:
        t.join(timeout=120)
    assert errors == []
    assert sorted(log) == [*range(100), *range(1000, 1100)]
    if not shared_name:
        assert [n for n in log if n < 1000] == list(range(100))
        assert [n for n in log if n >= 1000] == list(range(1000, 1100))


_WORKER = """
import json, sys, time
from pathlib import Path
from tests.contract.test_cache_queue import open_queue, T
spec, name, stop_file = json.loads(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
queue = open_queue(spec)
print("ready", flush=True)
while True:
    batch = queue.claim(T, name, limit=5)
    if not batch:
        counts = queue.counts(T)
        if stop_file.exists() and not counts["pending"] and not counts["inflight"]:
            break
        time.sleep(0.002)
        continue
    for m in batch:  # the system-wide monotonic clock orders work across processes
        print(json.dumps({"n": m.payload["n"], "t": time.monotonic_ns()}), flush=True)
    queue.ack(T, [m.id for m in batch])
    time.sleep(0.002)  # work elsewhere: the others get their turn at the topic
queue.close()
"""


def _worker(spec: dict[str, Any], name: str, stop_file: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-c", _WORKER, json.dumps(spec), name, str(stop_file)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)


@pytest.mark.slow
def test_processes_claiming_one_topic_process_each_message_once_in_order(
    backend: Backend, tmp_path: Path
) -> None:
    queue = backend.make_queue()
    stop_file = tmp_path / "stop"
    workers = [_worker(backend.spec, f"proc{n}", stop_file) for n in range(3)]
    for worker in workers:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    for start in range(0, 300, 50):  # arriving while they work
        queue.enqueue(T, [{"n": i} for i in range(start, start + 50)])
    stop_file.touch()
    done = []
    for worker in workers:
        out, _ = worker.communicate(timeout=180)
        assert worker.returncode == 0
        done.append([json.loads(line) for line in out.splitlines()])
    assert sum(1 for part in done if part) >= 2, [len(part) for part in done]  # they took turns
    in_time_order = [row["n"] for row in sorted((r for part in done for r in part), key=lambda r: r["t"])]
    assert in_time_order == list(range(300))  # each once, and in enqueue order across processes
    assert queue.counts(T) == {"pending": 0, "inflight": 0, "failed": 0}


# --------------------------------------------------------------------------- cache


def test_cache_set_get_and_stats(backend: Backend) -> None:
    cache = backend.make_cache()
    assert cache.get("ns", "k") is None
    cache.set("ns", "k", b"\x00\x01value")
    assert cache.get("ns", "k") == b"\x00\x01value"
    assert cache.get("other", "k") is None  # namespaces are separate
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["entries"]) == (1.0, 2.0, 1.0)
    assert stats["hit_rate"] == pytest.approx(1 / 3)
    assert cache.size_bytes() >= len(b"\x00\x01value")
    assert cache.health().state == "ok"


def test_cache_get_many_set_many_and_namespace_deletion(backend: Backend) -> None:
    cache = backend.make_cache()
    items = {f"key{i}": f"v{i}".encode() for i in range(1200)}  # more than one batch
    cache.set_many("emb", items)
    cache.set_many("emb:x", {"key1": b"other"})  # a namespace that starts like another
    cache.set_many("e*", {"key1": b"glob"})  # pattern characters are literal
    got = cache.get_many("emb", [*items, "absent", "key1"])
    assert got == items
    assert cache.stats()["misses"] == 1.0
    assert cache.delete_namespace("emb") == 1200
    assert cache.get_many("emb", ["key1", "key2"]) == {}
    assert cache.get("emb:x", "key1") == b"other"
    assert cache.delete_namespace("e*") == 1
    assert cache.get("emb:x", "key1") == b"other"
    assert cache.delete_namespace("never") == 0
    assert cache.stats()["entries"] == 1.0


def test_cache_ttl_expiry(backend: Backend) -> None:
    cache = backend.make_cache()
    cache.set("s", "gone", b"x", ttl_seconds=-1.0)  # already expired
    cache.set("s", "kept", b"y", ttl_seconds=3600.0)
    cache.set("s", "forever", b"z")
    cache.set_many("s", {"brief": b"w", "brief2": b"v"}, ttl_seconds=0.3)
    assert cache.get("s", "gone") is None
    assert cache.get_many("s", ["kept", "forever", "brief"]) == {"kept": b"y", "forever": b"z", "brief": b"w"}
    wait_for(lambda: cache.get_many("s", ["brief", "brief2"]) == {})
    assert cache.get_many("s", ["gone", "kept", "forever"]) == {"kept": b"y", "forever": b"z"}
    assert cache.stats()["entries"] == 2.0
    cache.set("s", "gone", b"back")  # a fresh set replaces the expiry
    cache.set("s", "kept", b"y2")  # and a set without TTL keeps it for good
    assert cache.get_many("s", ["gone", "kept"]) == {"gone": b"back", "kept": b"y2"}


def test_cache_counters_are_atomic(backend: Backend) -> None:
    caches = [backend.make_cache() for _ in range(2)]  # two handles, as two processes
    start = threading.Barrier(4)

    def bump(cache: Cache) -> None:
        start.wait()
        for _ in range(50):
            cache.incr("gen", "writes")

    threads = [threading.Thread(target=bump, args=(caches[n % 2],)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert caches[0].get("gen", "writes") == b"200"
    assert caches[1].incr("gen", "writes") == 201


# --------------------------------------------------------------------------- job state


def test_job_state_is_kept_in_the_cache_and_read_back_by_a_new_manager(backend: Backend) -> None:
    """Index jobs keep their state in the Cache port: another manager (a restarted server) reads
    it back, and a job whose manager stopped before it finished reads as interrupted."""
    from memory_service.core.jobs import JobContext, JobManager

    first = JobManager(backend.make_cache())
    release = threading.Event()

    def work(ctx: JobContext) -> dict[str, Any]:
        ctx.progress(1, 2, "halfway")
        assert release.wait(10)
        return {"files_indexed": 2}

    done = first.submit("index_directory", lambda ctx: {"files_indexed": 1})
    assert first.wait(done.job_id, 10)
    running = first.submit("index_directory", work)
    wait_for(lambda: (s := first.get(running.job_id)) is not None and s.phase == "halfway")

    second = JobManager(backend.make_cache())  # as if the server had restarted
    finished = second.get(done.job_id)
    assert finished is not None and finished.status == "completed" and finished.stats["files_indexed"] == 1
    interrupted = second.get(running.job_id)
    assert interrupted is not None and interrupted.status == "interrupted"
    assert second.get(str(uuid.uuid4())) is None
    release.set()
    assert first.wait(running.job_id, 10)
    assert JobManager(backend.make_cache()).get(running.job_id).status == "completed"  # type: ignore[union-attr]
    first.shutdown()
    second.shutdown()
