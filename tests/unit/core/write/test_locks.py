"""KeyedLocks: one writer per key at a time, no deadlock across keys, an empty table when idle."""

from __future__ import annotations

import threading
import time

import pytest

from memory_service.core.write.locks import KeyedLocks


def _run(threads: list[threading.Thread]) -> None:
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock?)"


def test_one_key_serialises_read_modify_write() -> None:
    locks = KeyedLocks()
    counter = {"n": 0}

    def bump() -> None:
        for _ in range(200):
            with locks.hold(["a"]):
                value = counter["n"]
                time.sleep(0)  # yield mid-update: without the lock, increments would be lost
                counter["n"] = value + 1

    _run([threading.Thread(target=bump) for _ in range(8)])
    assert counter["n"] == 1600
    assert len(locks) == 0


def test_different_keys_do_not_wait_for_each_other() -> None:
    locks = KeyedLocks()
    inside = threading.Event()
    release = threading.Event()

    def hold_a() -> None:
        with locks.hold(["a"]):
            inside.set()
            release.wait(timeout=10)

    holder = threading.Thread(target=hold_a)
    holder.start()
    assert inside.wait(timeout=10)
    with locks.hold(["b"]):  # would block forever if keys shared one lock
        assert len(locks) == 2
    release.set()
    holder.join(timeout=10)
    assert len(locks) == 0


def test_many_keys_in_any_order_never_deadlock() -> None:
    locks = KeyedLocks()
    held: list[tuple[str, ...]] = []

    def worker(keys: list[str]) -> None:
        for _ in range(300):
            with locks.hold(keys):
                held.append(tuple(keys))

    _run([threading.Thread(target=worker, args=(k,)) for k in (["a", "b"], ["b", "a"], ["b", "c", "a"])])
    assert len(held) == 900 and len(locks) == 0


def test_reentrant_and_released_on_error() -> None:
    locks = KeyedLocks()
    with locks.hold(["a", "a"]), locks.hold(["a"]):  # duplicates and nesting in one thread
        assert len(locks) == 1
    with pytest.raises(RuntimeError), locks.hold(["x", "y"]):
        raise RuntimeError("boom")
    assert len(locks) == 0
    got = threading.Event()

    def other() -> None:
        with locks.hold(["x"]):
            got.set()

    _run([threading.Thread(target=other)])
    assert got.is_set()
