"""Contract tests for the embedded SQLite cache, outbox queue, audit log and the data-dir owner lock."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import AuditEvent, AuditLog, Cache, Queue
from memory_service.stores.local import LocalAuditLog, LocalCache, LocalQueue
from memory_service.stores.local_db import DB_FILENAME, LocalDB
from memory_service.stores.owner_lock import OwnerLock, read_owner

pytestmark = pytest.mark.contract

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[LocalDB]:
    database = LocalDB.in_dir(tmp_path)
    yield database
    database.close()


# --------------------------------------------------------------------------- setup


def test_one_file_in_wal_mode_with_full_sync(db: LocalDB, tmp_path: Path) -> None:
    assert db.path == tmp_path / DB_FILENAME
    with db.cursor("test") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db.size_bytes() > 0


def test_stores_satisfy_the_ports(db: LocalDB) -> None:
    assert isinstance(LocalCache(db), Cache)
    assert isinstance(LocalQueue(db), Queue)
    assert isinstance(LocalAuditLog(db), AuditLog)


def test_closing_one_store_keeps_the_shared_db_open_until_the_last(db: LocalDB) -> None:
    cache, queue = LocalCache(db), LocalQueue(db)
    cache.close()
    cache.close()  # idempotent: must not release twice
    assert queue.enqueue("t", [{"a": 1}]) == [1]
    queue.close()
    with pytest.raises(ServiceUnavailableError) as err:
        queue.counts()
    assert err.value.code == "SVC_LOCAL_STORE"


def test_unusable_path_is_a_service_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ServiceUnavailableError) as err:
        LocalDB(blocker / "sub" / DB_FILENAME)
    assert err.value.code == "SVC_LOCAL_STORE"
    assert err.value.suggestion


# --------------------------------------------------------------------------- cache


def test_cache_set_get_and_stats(db: LocalDB) -> None:
    cache = LocalCache(db)
    assert cache.get("ns", "k") is None
    cache.set("ns", "k", b"\x00\x01value")
    assert cache.get("ns", "k") == b"\x00\x01value"
    assert cache.get("other", "k") is None  # namespaces are separate
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["entries"]) == (1.0, 2.0, 1.0)
    assert stats["hit_rate"] == pytest.approx(1 / 3)
    assert cache.size_bytes() >= len(b"\x00\x01value")
    assert cache.health().state == "ok"


def test_cache_get_many_set_many_batched(db: LocalDB) -> None:
    cache = LocalCache(db)
    items = {f"key{i}": f"v{i}".encode() for i in range(1200)}  # more than one IN (...) chunk
    cache.set_many("emb", items)
    got = cache.get_many("emb", [*items, "absent"])
    assert got == items
    assert cache.stats()["misses"] == 1.0
    assert cache.delete_namespace("emb") == 1200
    assert cache.get_many("emb", ["key1"]) == {}


def test_cache_ttl_expiry(db: LocalDB) -> None:
    cache = LocalCache(db)
    cache.set("s", "gone", b"x", ttl_seconds=-1.0)  # already expired: no sleeping needed
    cache.set("s", "kept", b"y", ttl_seconds=3600.0)
    cache.set("s", "forever", b"z")
    assert cache.get("s", "gone") is None
    assert cache.get_many("s", ["gone", "kept", "forever"]) == {"kept": b"y", "forever": b"z"}
    assert cache.stats()["entries"] == 2.0
    assert cache.purge_expired() == 1
    cache.set("s", "gone", b"back")  # a fresh set replaces the expiry
    assert cache.get("s", "gone") == b"back"


# --------------------------------------------------------------------------- queue


def test_queue_claim_ack_in_order(db: LocalDB) -> None:
    queue = LocalQueue(db)
    ids = queue.enqueue("sync", [{"n": i} for i in range(5)])
    queue.enqueue("other", [{"n": 99}])
    assert ids == sorted(ids)
    first = queue.claim("sync", limit=3)
    assert [m.payload["n"] for m in first] == [0, 1, 2]
    assert queue.counts("sync") == {"pending": 2, "inflight": 3, "failed": 0}
    assert [m.payload["n"] for m in queue.claim("sync")] == [3, 4]  # in-flight ones are not re-claimed
    queue.ack([m.id for m in first])
    assert queue.counts("sync") == {"pending": 0, "inflight": 2, "failed": 0}
    assert queue.counts() == {"pending": 1, "inflight": 2, "failed": 0}
    assert queue.claim("sync") == []


def test_queue_fail_retries_then_dead(db: LocalDB) -> None:
    queue = LocalQueue(db)
    (mid,) = queue.enqueue("sync", [{"op": "x"}])
    for attempt in range(1, 3):
        (msg,) = queue.claim("sync")
        assert msg.attempts == attempt - 1
        queue.fail(msg.id, f"boom {attempt}", max_attempts=3)
        assert queue.counts("sync")["pending"] == 1
    (msg,) = queue.claim("sync")
    assert (msg.attempts, msg.last_error) == (2, "boom 2")
    queue.fail(mid, "boom 3", max_attempts=3)
    assert queue.counts("sync") == {"pending": 0, "inflight": 0, "failed": 1}
    assert queue.claim("sync") == []
    (dead,) = queue.dead("sync")
    assert (dead.id, dead.attempts, dead.last_error) == (mid, 3, "boom 3")
    assert queue.health().state == "degraded"
    assert queue.retry_dead("sync") == 1
    assert queue.claim("sync")[0].attempts == 0


def test_queue_survives_reopen_and_releases_inflight(tmp_path: Path) -> None:
    db = LocalDB.in_dir(tmp_path)
    queue = LocalQueue(db)
    ids = queue.enqueue("sync", [{"n": 1}, {"n": 2}, {"n": 3}])
    queue.claim("sync", limit=2)  # the "crashed" run never acks these
    queue.close()  # last user: closes the connection

    reopened = LocalQueue(LocalDB.in_dir(tmp_path))
    assert reopened.counts() == {"pending": 1, "inflight": 2, "failed": 0}
    assert reopened.release_inflight() == 2
    assert [m.id for m in reopened.claim("sync")] == ids
    next_id = reopened.enqueue("sync", [{"n": 4}])[0]
    reopened.ack(ids)
    assert reopened.enqueue("sync", [{"n": 5}])[0] > next_id  # ids are never reused
    reopened.close()


# --------------------------------------------------------------------------- audit


def test_audit_append_list_count(db: LocalDB) -> None:
    audit = LocalAuditLog(db)
    audit.append(
        [
            AuditEvent("create", "memory", "m1", "agent", {"title": "a", "tags": ["x"]}),
            AuditEvent("update", "memory", "m1", "agent", {"field": "title"}),
            AuditEvent("create", "memory", "m2", "cli", timestamp="2026-01-01T00:00:00+00:00"),
        ]
    )
    assert audit.count() == 3
    assert audit.count("m1") == 2
    newest_first = audit.list("m1")
    assert [e.operation for e in newest_first] == ["update", "create"]
    assert newest_first[1].details == {"title": "a", "tags": ["x"]}
    assert newest_first[0].timestamp is not None and newest_first[0].timestamp.endswith("+00:00")
    assert audit.list("m2")[0].timestamp == "2026-01-01T00:00:00+00:00"  # given timestamps are kept
    assert len(audit.list(limit=1)) == 1


def test_audit_of_operation_reads_many_entities_at_once(db: LocalDB) -> None:
    audit = LocalAuditLog(db)
    ids = [f"m{i}" for i in range(1200)]  # more ids than one SQL chunk holds
    audit.append([AuditEvent("utility_vote", "memory", mid, "a", {"vote": i}) for i, mid in enumerate(ids)])
    audit.append(
        [
            AuditEvent("create", "memory", "m1", "a"),
            AuditEvent("utility_vote", "memory", "m1", "a", {"vote": -1}),
        ]
    )
    got = audit.of_operation("utility_vote", ["m1", "m1199", "unknown", "m1"])
    assert [(e.entity_id, e.details["vote"]) for e in got] == [("m1", 1), ("m1199", 1199), ("m1", -1)]
    assert len(audit.of_operation("utility_vote", ids)) == 1201
    assert audit.of_operation("utility_vote", []) == []


def test_audit_rows_cannot_be_updated_or_deleted(db: LocalDB) -> None:
    LocalAuditLog(db).append([AuditEvent("create", "memory", "m1", "agent")])
    raw = sqlite3.connect(db.path)
    try:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            raw.execute("UPDATE audit SET actor = 'mallory'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            raw.execute("DELETE FROM audit")
    finally:
        raw.close()
    assert LocalAuditLog(db).list()[0].actor == "agent"


# --------------------------------------------------------------------------- concurrency


def test_four_threads_writing_queue_and_cache_lose_nothing(db: LocalDB) -> None:
    cache, queue = LocalCache(db), LocalQueue(db)
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            start.wait()
            for i in range(50):
                queue.enqueue("sync", [{"w": n, "i": i}])
                cache.set_many(f"w{n}", {f"k{i}": bytes([n, i])})
                assert cache.get(f"w{n}", f"k{i}") == bytes([n, i])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    claimed = queue.claim("sync", limit=1000)
    assert sorted((m.payload["w"], m.payload["i"]) for m in claimed) == [
        (w, i) for w in range(4) for i in range(50)
    ]
    assert cache.stats()["entries"] == 200.0


def test_concurrent_claimers_never_get_the_same_message(db: LocalDB) -> None:
    queue = LocalQueue(db)
    ids = queue.enqueue("sync", [{"i": i} for i in range(200)])
    start = threading.Barrier(4)
    claimed: list[list[int]] = [[] for _ in range(4)]

    def worker(n: int) -> None:
        start.wait()
        while batch := queue.claim("sync", limit=7):
            claimed[n].extend(m.id for m in batch)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(i for part in claimed for i in part) == ids


# --------------------------------------------------------------------------- owner lock

_HOLDER = """
import sys
from memory_service.stores.owner_lock import OwnerLock
lock = OwnerLock(sys.argv[1])
try:
    lock.acquire()
except Exception as exc:
    print("ERR", exc.code, exc.details["owner_pid"], flush=True)
    raise SystemExit(0)
print("HELD", flush=True)
sys.stdin.read()  # hold until the parent closes our stdin
"""


def _holder(data_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(data_dir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip


def test_second_process_cannot_take_a_held_data_dir(tmp_path: Path) -> None:
    with OwnerLock(tmp_path) as lock:
        assert lock.held and read_owner(tmp_path) == os.getpid()
        child = _holder(tmp_path)
        out, _ = child.communicate(timeout=30)
        assert out.split() == ["ERR", "SVC_DATA_DIR_LOCKED", str(os.getpid())]
    assert read_owner(tmp_path) is None


def test_lock_held_by_another_process_refuses_us_until_it_exits(tmp_path: Path) -> None:
    child = _holder(tmp_path)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "HELD"
        assert read_owner(tmp_path) == child.pid
        with pytest.raises(ServiceUnavailableError) as err:
            OwnerLock(tmp_path).acquire()
        assert err.value.code == "SVC_DATA_DIR_LOCKED"
        assert err.value.details["owner_pid"] == child.pid
        assert "MEMORY_DATA_DIR" in err.value.suggestion
    finally:
        child.communicate("", timeout=30)  # closes stdin: the holder exits, the kernel drops the lock
    lock = OwnerLock(tmp_path)
    lock.acquire()
    assert int((tmp_path / "owner.lock").read_text()) == os.getpid()
    lock.release()
    lock.release()  # harmless twice


def test_stale_pid_without_a_lock_is_not_an_owner(tmp_path: Path) -> None:
    (tmp_path / "owner.lock").write_text("999999\n")  # left behind by a crashed owner
    assert read_owner(tmp_path) is None
    with OwnerLock(tmp_path):
        assert read_owner(tmp_path) == os.getpid()
