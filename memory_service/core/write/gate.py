"""The write gate: work that may change the stores passes it; an online backup closes it.

Every tool call, background job and housekeeping tick runs inside :meth:`WriteGate.passing`
(shared, any number at once). :meth:`WriteGate.closed` (one at a time) stops new work at the
gate, waits for the work already inside to finish, and holds the gate while the backup flushes
and copies the stores: the copy then sees only whole writes, each acknowledged one in every
store. Work arriving meanwhile waits at the gate and goes on when it opens again; nothing fails.
Long work (a job, an HNSW build: ``long=True``) is waited for first with the gate still open
(:meth:`WriteGate.long_work`), so that sessions are not held for minutes behind it.

A thread already inside passes again (a call nested in another), and so does the thread that
closed the gate (the backup drains the graph outbox and reads the counts through the services).
Closing gives up after ``timeout`` (work that does not end: a long import), opening the gate
again: the error names what was still running.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from memory_service.core.errors import ServiceUnavailableError


class WriteGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._inside: Counter[int] = Counter()  # thread id -> nested passes
        self._what: dict[int, str] = {}  # thread id -> what its outermost pass runs
        self._long: set[int] = set()  # threads whose outermost pass is long work
        self._closer: int | None = None  # the thread that closed (or is closing) the gate

    @contextmanager
    def passing(self, what: str = "work", *, long: bool = False) -> Iterator[None]:
        """Run the block as work that may write; waits while the gate is closed. ``long``: work
        that may take minutes (a backup waits for it before closing the gate)."""
        me = threading.get_ident()
        with self._cond:
            if not self._inside[me] and self._closer != me:
                while self._closer is not None:
                    self._cond.wait()
                self._what[me] = what
                if long:
                    self._long.add(me)
            self._inside[me] += 1
        try:
            yield
        finally:
            with self._cond:
                self._inside[me] -= 1
                if not self._inside[me]:
                    del self._inside[me]
                    self._what.pop(me, None)
                    self._long.discard(me)
                    self._cond.notify_all()

    @contextmanager
    def closed(self, timeout: float) -> Iterator[None]:
        """Hold the gate closed for the block, once the work inside has finished.

        Raises:
            ServiceUnavailableError: another backup holds it, or work inside did not finish within
                ``timeout`` seconds (the gate opens again at once).
        """
        me = threading.get_ident()
        deadline = time.monotonic() + timeout
        with self._cond:
            if self._closer is not None:
                raise ServiceUnavailableError(
                    "Another backup is pausing the writes right now",
                    code="SVC_BACKUP_BUSY",
                    details={},
                    suggestion="Wait for it to finish, then run this backup again.",
                )
            self._closer = me
            while any(tid != me for tid in self._inside):
                left = deadline - time.monotonic()
                if left <= 0:
                    running = sorted({w for tid, w in self._what.items() if tid != me})
                    self._closer = None
                    self._cond.notify_all()
                    raise ServiceUnavailableError(
                        f"Writes did not pause within {timeout:.0f} s: still running: {', '.join(running)}",
                        code="SVC_BACKUP_PAUSE",
                        details={"running": running, "timeout_s": timeout},
                        suggestion="Run the backup again once that work has finished (a long import "
                        "or index job), or stop the daemon and back up offline.",
                    )
                self._cond.wait(left)
        try:
            yield
        finally:
            with self._cond:
                self._closer = None
                self._cond.notify_all()

    def busy(self) -> list[str]:
        """What runs inside the gate now (for messages and tests)."""
        with self._cond:
            return sorted(self._what.values())

    def long_work(self) -> list[str]:
        """The long work inside the gate now (a backup waits until there is none)."""
        with self._cond:
            return sorted(self._what[tid] for tid in self._long if tid in self._what)
