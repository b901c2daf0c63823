"""The write gate (core/write/gate.py): a backup closes it once the work inside has finished, work
arriving meanwhile waits (never fails) and goes on when it opens, and a pause that cannot happen
gives up, naming what ran, with the gate open again. Real threads, no fakes."""

from __future__ import annotations

import threading
import time

import pytest

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.write.gate import WriteGate

WAIT = 30.0  # generous: the machine may be loaded; nothing here waits that long when it works


def _until(predicate: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def test_closing_waits_for_work_inside_and_holds_new_work_until_it_opens() -> None:
    gate = WriteGate()
    events: list[str] = []
    inside, release = threading.Event(), threading.Event()

    def writer(name: str, hold: threading.Event | None) -> None:
        with gate.passing(name):
            events.append(f"{name} in")
            inside.set()
            if hold is not None:
                assert hold.wait(WAIT)
            events.append(f"{name} out")

    first = threading.Thread(target=writer, args=("first", release))
    first.start()
    assert inside.wait(WAIT)
    closed = threading.Event()
    waiting = [threading.Thread(target=writer, args=("late", None))]

    def backup() -> None:
        with gate.closed(timeout=WAIT):
            events.append("copy")
            closed.set()
            _until(
                lambda: gate.busy() == [] and len(waiting) == 1 and waiting[0].is_alive(), "the late writer"
            )
            time.sleep(0.05)  # the late writer is parked at the gate, not inside
            events.append("copied")

    closer = threading.Thread(target=backup)
    closer.start()
    _until(lambda: gate._closer is not None, "the backup to start closing")
    waiting[0].start()
    time.sleep(0.05)
    assert not closed.is_set() and gate.busy() == ["first"], "closed while work was inside"
    release.set()
    for t in (first, closer, waiting[0]):
        t.join(WAIT)
    assert events == ["first in", "first out", "copy", "copied", "late in", "late out"]


def test_nested_work_and_the_closing_thread_pass() -> None:
    """No deadlock: work inside passes again while a backup waits, and the backup's own thread
    passes (it drains the outbox and reads counts through the services)."""
    gate = WriteGate()
    entered, nested_done = threading.Event(), threading.Event()
    go_nested = threading.Event()

    def writer() -> None:
        with gate.passing("outer"):
            entered.set()
            assert go_nested.wait(WAIT)
            with gate.passing("inner"):
                nested_done.set()

    t = threading.Thread(target=writer)
    t.start()
    assert entered.wait(WAIT)
    done: list[bool] = []

    def backup() -> None:
        with gate.closed(timeout=WAIT), gate.passing("the backup itself"):
            done.append(True)

    closer = threading.Thread(target=backup)
    closer.start()
    _until(lambda: gate._closer is not None, "the backup to start closing")
    go_nested.set()
    assert nested_done.wait(WAIT), "nested work deadlocked behind the waiting backup"
    t.join(WAIT)
    closer.join(WAIT)
    assert done == [True] and gate.busy() == []


def test_a_pause_that_cannot_happen_gives_up_and_opens_the_gate() -> None:
    gate = WriteGate()
    inside, release = threading.Event(), threading.Event()

    def long_import() -> None:
        with gate.passing("tool import_memory"):
            inside.set()
            assert release.wait(WAIT)

    t = threading.Thread(target=long_import)
    t.start()
    assert inside.wait(WAIT)
    with pytest.raises(ServiceUnavailableError) as caught, gate.closed(timeout=0.2):
        pytest.fail("closed while work was inside")
    assert caught.value.code == "SVC_BACKUP_PAUSE"
    assert caught.value.details["running"] == ["tool import_memory"] and caught.value.suggestion
    passed: list[str] = []
    with gate.passing("after"):  # the gate is open again: new work passes at once
        passed.append("after")
    assert passed == ["after"]
    release.set()
    t.join(WAIT)


def test_one_backup_at_a_time() -> None:
    gate = WriteGate()
    holding, release = threading.Event(), threading.Event()

    def first() -> None:
        with gate.closed(timeout=WAIT):
            holding.set()
            assert release.wait(WAIT)

    t = threading.Thread(target=first)
    t.start()
    assert holding.wait(WAIT)
    with pytest.raises(ServiceUnavailableError) as caught, gate.closed(timeout=WAIT):
        pass
    assert caught.value.code == "SVC_BACKUP_BUSY"
    release.set()
    t.join(WAIT)


def test_long_work_is_named_while_it_runs_and_short_work_passes_meanwhile() -> None:
    """A backup waits for long work (a job, an HNSW build) with the gate still open."""
    gate = WriteGate()
    inside, release = threading.Event(), threading.Event()

    def job() -> None:
        with gate.passing("the index job 1", long=True), gate.passing("nested"):
            inside.set()
            assert release.wait(WAIT)

    t = threading.Thread(target=job)
    t.start()
    assert inside.wait(WAIT)
    assert gate.long_work() == ["the index job 1"]
    with gate.passing("tool memory_add"):  # the gate is open: sessions go on
        assert gate.busy() == ["the index job 1", "tool memory_add"]
        assert gate.long_work() == ["the index job 1"]
    release.set()
    t.join(WAIT)
    assert gate.long_work() == [] and gate.busy() == []
