"""Contract tests for the embedded SQLite file (its cache and queue beyond the ports' contract, the
audit log, the flags) and the data-dir owner lock."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import AuditEvent, AuditLog, AuditQuery, Cache, Flags, Queue
from memory_service.stores.local.audit import LocalAuditLog
from memory_service.stores.local.cache import LocalCache
from memory_service.stores.local.db import DB_FILENAME, LocalDB
from memory_service.stores.local.flags import LocalFlags
from memory_service.stores.local.queue import LocalQueue
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


def test_cache_rows_commit_without_the_fsync_and_everything_else_with_it(db: LocalDB) -> None:
    seen: list[int] = []
    with db.transaction("test", durable=False) as conn:
        seen.append(conn.execute("PRAGMA synchronous").fetchone()[0])
    with db.transaction("test") as conn:
        seen.append(conn.execute("PRAGMA synchronous").fetchone()[0])
        with db.transaction("inner", durable=False) as inner:  # joins the outer: as durable
            seen.append(inner.execute("PRAGMA synchronous").fetchone()[0])
    assert seen == [1, 2, 2]  # NORMAL, then FULL
    statements: list[str] = []
    with db.cursor("test") as conn:
        conn.set_trace_callback(statements.append)
    LocalCache(db).set_many("ns", {"k": b"v"})
    cached, statements[:] = list(statements), []
    LocalAuditLog(db).append([AuditEvent("create", "memory", "m1", "tester", {})])
    with db.cursor("test") as conn:
        conn.set_trace_callback(None)
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # back to FULL after it
    assert "PRAGMA synchronous=NORMAL" in cached
    assert "PRAGMA synchronous=NORMAL" not in statements and statements  # the audit: with the fsync
    assert LocalCache(db).get("ns", "k") == b"v"


def test_stores_satisfy_the_ports(db: LocalDB) -> None:
    assert isinstance(LocalCache(db), Cache)
    assert isinstance(LocalQueue(db), Queue)
    assert isinstance(LocalAuditLog(db), AuditLog)
    assert isinstance(LocalFlags(db), Flags)


def test_closing_one_store_keeps_the_shared_db_open_until_the_last(db: LocalDB) -> None:
    cache, queue = LocalCache(db), LocalQueue(db)
    cache.close()
    cache.close()  # idempotent: must not release twice
    assert queue.enqueue("t", [{"a": 1}]) == ["1"]
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


# --------------------------------------------------------------------------- cache and queue
# Their behaviour is the ports' contract, proven on SQLite and Redis in test_cache_queue.py; what
# is left here is SQLite's own: expiry purging and the queue table's migration.


def test_cache_purges_expired_rows(db: LocalDB) -> None:
    cache = LocalCache(db)
    cache.set("s", "gone", b"x", ttl_seconds=-1.0)
    cache.set("s", "kept", b"y", ttl_seconds=3600.0)
    assert cache.purge_expired() == 1
    assert cache.get("s", "kept") == b"y"


# The queue table as the first version created it (no consumers, no backoff).
_OLD_QUEUE = """
CREATE TABLE queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'inflight', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    enqueued_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX queue_claim ON queue(topic, state, id);
INSERT INTO queue(topic, payload, state, attempts, last_error, enqueued_at, updated_at) VALUES
    ('sync', '{"n": 1}', 'pending', 0, NULL, 1, 1),
    ('sync', '{"n": 2}', 'inflight', 1, 'graph down', 1, 1),
    ('sync', '{"n": 3}', 'dead', 10, 'bad op', 1, 1);
DELETE FROM queue WHERE id = 1;
INSERT INTO queue(topic, payload, enqueued_at, updated_at) VALUES ('sync', '{"n": 4}', 2, 2);
"""


def test_queue_of_an_older_data_directory_keeps_working(tmp_path: Path) -> None:
    raw = sqlite3.connect(tmp_path / DB_FILENAME)
    raw.executescript(_OLD_QUEUE)
    raw.close()
    db = LocalDB.in_dir(tmp_path)
    queue = LocalQueue(db)
    assert queue.counts("sync") == {"pending": 2, "inflight": 0, "failed": 1}  # old holds released
    batch = queue.claim("sync", "me")
    assert [(m.id, m.payload["n"], m.attempts, m.last_error) for m in batch] == [
        ("2", 2, 1, "graph down"),
        ("4", 4, 0, None),
    ]
    assert [(m.id, m.payload) for m in queue.dead("sync")] == [("3", {"n": 3})]
    assert queue.enqueue("sync", [{"n": 5}]) == ["5"]  # ids go on from the old ones, never reused
    LocalQueue(db).close()  # opening it again migrates nothing twice
    queue.close()


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


def test_audit_query_filters_and_pages_newest_first(db: LocalDB) -> None:
    audit = LocalAuditLog(db)
    audit.append(
        [
            AuditEvent("create", "memory", "m1", "agent", timestamp="2026-01-01T00:00:00.000000+00:00"),
            AuditEvent("update", "memory", "m1", "cli", timestamp="2026-01-02T00:00:00.000000+00:00"),
            AuditEvent("create", "memory", "m2", "agent", timestamp="2026-01-03T00:00:00.000000+00:00"),
            AuditEvent(
                "index_file", "code_index", "a.py", "agent", timestamp="2026-01-04T00:00:00.000000+00:00"
            ),
            AuditEvent("delete", "memory", "m1", "agent", timestamp="2026-01-05T00:00:00.000000+00:00"),
        ]
    )
    events, total = audit.query(AuditQuery(entity_id="m1"))
    assert total == 3 and [e.operation for e in events] == ["delete", "update", "create"]
    assert all(e.seq is not None for e in events) and events[0].seq > events[1].seq > events[2].seq  # type: ignore[operator]
    assert [e.entity_id for e in audit.query(AuditQuery(operation="create"))[0]] == ["m2", "m1"]
    assert [e.operation for e in audit.query(AuditQuery(actor="cli"))[0]] == ["update"]
    assert audit.query(AuditQuery(entity_type="code_index"))[1] == 1
    window = AuditQuery(since="2026-01-02T00:00:00.000000+00:00", until="2026-01-04T00:00:00.000000+00:00")
    assert [e.operation for e in audit.query(window)[0]] == ["index_file", "create", "update"]
    # Pages: before_seq continues below the last seq seen; the total ignores the page.
    first, total = audit.query(AuditQuery(limit=2))
    rest, again = audit.query(AuditQuery(limit=10, before_seq=first[-1].seq))
    assert total == again == 5
    assert [e.seq for e in first + rest] == sorted({e.seq for e in first + rest}, reverse=True)  # type: ignore[type-var]
    assert len(first + rest) == 5
    assert audit.query(AuditQuery(operation="nothing")) == ([], 0)


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


# --------------------------------------------------------------------------- flags


def test_flags_are_unset_until_set_and_kept_on_disk(tmp_path: Path) -> None:
    db = LocalDB.in_dir(tmp_path)
    flags = LocalFlags(db)
    assert flags.get("embeddings_complete") is None
    flags.set("embeddings_complete", True)
    flags.set("embeddings_complete", False)
    flags.set("other", True)
    flags.close()
    db.close()
    db = LocalDB.in_dir(tmp_path)
    flags = LocalFlags(db)
    assert (flags.get("embeddings_complete"), flags.get("other")) == (False, True)
    flags.close()
    db.close()


def test_flags_of_an_older_data_directory_are_kept(tmp_path: Path) -> None:
    """They rode on the write journal, in its ``journal_flags`` table: the same table serves."""
    conn = sqlite3.connect(tmp_path / DB_FILENAME)
    conn.execute("CREATE TABLE journal_flags (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    conn.execute("INSERT INTO journal_flags VALUES ('embeddings_complete', 1)")
    conn.commit()
    conn.close()
    db = LocalDB.in_dir(tmp_path)
    flags = LocalFlags(db)
    assert flags.get("embeddings_complete") is True
    flags.close()
    db.close()


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
