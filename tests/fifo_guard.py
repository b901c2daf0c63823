"""A guard for tests of "a FIFO must not block": the test fails, it never hangs.

Opening a FIFO for reading waits for a writer. If the code under test does that, a thread of
the guard, after a grace period, keeps opening each FIFO for writing and closing it, so the
stuck reader gets end-of-file and the test runs on to its assertion that nobody had to be
unblocked. A FIFO nobody reads cannot be opened for writing (ENXIO), so nothing is recorded
when the code under test leaves the FIFOs alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def fifo_guard(*fifos: Path, grace_seconds: float = 5.0) -> Iterator[list[Path]]:
    """Yields the list of FIFOs that a reader was found waiting on (empty when all is well)."""
    stop = threading.Event()
    unblocked: list[Path] = []

    def poke() -> None:
        if stop.wait(grace_seconds):
            return
        while not stop.is_set():
            for fifo in fifos:
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # ENXIO: no reader
                    continue
                unblocked.append(fifo)
            stop.wait(0.02)

    thread = threading.Thread(target=poke, name="fifo-guard", daemon=True)
    thread.start()
    try:
        yield unblocked
    finally:
        stop.set()
        thread.join()
