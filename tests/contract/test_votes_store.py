"""Contract tests for the VoteStore port (SQLite) and the cache's write-generation counter.

Votes used to be read back from the audit log on every search; they have their own store now,
and a data directory from before gets its votes copied from the audit log once.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memory_service.core.ports import AuditEvent, Vote
from memory_service.stores.local.audit import LocalAuditLog
from memory_service.stores.local.cache import LocalCache
from memory_service.stores.local.db import LocalDB
from memory_service.stores.local.votes import LocalVoteStore

pytestmark = pytest.mark.contract


def test_votes_per_memory_in_order_and_latest_only(tmp_path: Path) -> None:
    store = LocalVoteStore(LocalDB.in_dir(tmp_path))
    store.add([Vote("m1", "p1", 1.0, "a"), Vote("m2", "p1", -1.0, "a"), Vote("m1", "p2", 0.5, "b")])
    store.add([Vote("m1", "p1", -0.5, "a")])
    assert store.of(["m1", "m2", "m3", "m1"]) == {"m1": [1.0, 0.5, -0.5], "m2": [-1.0]}
    assert store.of(["m1"], latest=2) == {"m1": [0.5, -0.5]}
    assert store.of([]) == {}
    many = [f"m{i}" for i in range(1200)]  # more ids than one IN list holds
    store.add([Vote(mid, "p", 1.0, "a") for mid in many])
    assert len(store.of(many)) == 1200


def test_all_of_lists_whole_votes_by_memory_in_the_order_cast(tmp_path: Path) -> None:
    store = LocalVoteStore(LocalDB.in_dir(tmp_path))
    store.add([Vote("m1", "p1", 1.0, "a", "2026-01-01T00:00:00+00:00"), Vote("m2", "p1", -1.0, "b")])
    store.add([Vote("m1", "p2", 0.5, "c", "2026-01-02T00:00:00+00:00")])
    got = store.all_of(["m2", "m3", "m1", "m2"])
    assert [(v.memory_id, v.problem_id, v.vote, v.actor) for v in got] == [
        ("m2", "p1", -1.0, "b"),
        ("m1", "p1", 1.0, "a"),
        ("m1", "p2", 0.5, "c"),
    ]
    assert got[1].timestamp == "2026-01-01T00:00:00+00:00"  # a given timestamp is kept
    assert got[0].timestamp  # and one is set when none is given
    assert store.all_of([]) == []
    many = [f"x{i}" for i in range(1200)]  # more ids than one IN list holds
    store.add([Vote(mid, "p", 1.0, "a") for mid in many])
    assert [v.memory_id for v in store.all_of(many)] == many


def test_votes_cast_before_the_store_existed_are_copied_from_the_audit_log(tmp_path: Path) -> None:
    db = LocalDB.in_dir(tmp_path)
    audit = LocalAuditLog(db)
    vote = "utility_vote"
    audit.append(
        [
            AuditEvent(vote, "memory", "m1", "a", {"problem_id": "p1", "vote": 1}),
            AuditEvent("update", "memory", "m1", "a", {"vote": 5}),  # not a vote
            AuditEvent(vote, "memory", "m1", "a", {"problem_id": "p1", "vote": -0.5}),
            AuditEvent(vote, "memory", "m2", "a", {"problem_id": "p2", "vote": "bad"}),  # no number
        ]
    )
    assert LocalVoteStore(db).of(["m1", "m2"]) == {"m1": [1.0, -0.5]}
    LocalVoteStore(db)  # opening again copies nothing twice
    assert LocalVoteStore(db).of(["m1"]) == {"m1": [1.0, -0.5]}


def test_generation_counter_is_atomic_across_threads(tmp_path: Path) -> None:
    cache = LocalCache(LocalDB.in_dir(tmp_path))
    assert cache.get("memory", "write_generation") is None

    def bump() -> None:
        for _ in range(50):
            cache.incr("memory", "write_generation")

    workers = [threading.Thread(target=bump) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert cache.get("memory", "write_generation") == b"400"
    assert cache.incr("memory", "write_generation") == 401
