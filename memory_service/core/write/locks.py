"""Per-key locks: serialise the read-modify-writes of one memory record.

One process owns a data directory (the owner file lock in ``app``), and tool handlers run in its
worker threads, so an in-process lock per memory id is enough to make "load, change, write back"
atomic. Locks are created on first use and dropped when nobody holds or waits for them, so the
table stays as small as the number of records being written right now. Several keys are taken in
sorted order: two writers that need the same ids never wait on each other in a cycle.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.RLock()  # re-entrant: a service may call another that locks the same id
        self.users = 0  # threads holding or waiting for the lock


class KeyedLocks:
    """A lock per key, refcounted so the table holds only keys in use."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    @contextmanager
    def hold(self, keys: Iterable[str]) -> Iterator[None]:
        """Hold the locks of every key (duplicates ignored), taken in sorted order."""
        taken: list[str] = []
        try:
            for key in sorted(set(keys)):
                entry = self._checkout(key)
                try:
                    entry.lock.acquire()
                except BaseException:
                    self._checkin(key)
                    raise
                taken.append(key)
            yield
        finally:
            for key in reversed(taken):
                self._entries[key].lock.release()
                self._checkin(key)

    def __len__(self) -> int:
        """Keys currently held or waited for (for tests: the table empties when writes end)."""
        with self._guard:
            return len(self._entries)

    def _checkout(self, key: str) -> _Entry:
        with self._guard:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
            entry.users += 1
            return entry

    def _checkin(self, key: str) -> None:
        with self._guard:
            entry = self._entries[key]
            entry.users -= 1
            if entry.users == 0:
                del self._entries[key]
