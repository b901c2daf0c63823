"""One server process per data directory: an exclusive ``flock`` on ``data_dir/owner.lock``.

Why ``flock``: the kernel drops it when the holder dies (even on SIGKILL), so a crashed server never
leaves a stale lock behind, unlike a pid file alone. The pid written into the file is only there to
tell the user *who* holds the lock; :func:`read_owner` reports it only while the lock is really held.

``flock`` locks belong to an open file description: two ``OwnerLock`` objects in one process
exclude each other too, and the descriptor is not inherited by child processes (Python opens files
non-inheritable), so a subprocess started by the server does not keep the lock alive.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from memory_service.core.errors import ServiceUnavailableError

LOCK_FILENAME = "owner.lock"


def _pid_in(fd: int) -> int | None:
    raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(raw) if raw.isdigit() else None


class OwnerLock:
    """Exclusive, non-blocking ownership of a data directory. Usable as a context manager."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_FILENAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock and write our pid, or raise ``SVC_DATA_DIR_LOCKED`` naming the holder."""
        if self._fd is not None:
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _pid_in(fd)
            os.close(fd)
            raise ServiceUnavailableError(
                f"The data directory {self.data_dir} is in use by another memory-service process"
                + (f" (pid {owner})" if owner else ""),
                code="SVC_DATA_DIR_LOCKED",
                details={"data_dir": str(self.data_dir), "owner_pid": owner},
                suggestion="Stop the other server, or give this one its own data directory "
                "(MEMORY_DATA_DIR). The lock is released automatically when the owner exits.",
            ) from None
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        """Clear the pid and drop the lock; harmless when not held."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> OwnerLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def read_owner(data_dir: Path) -> int | None:
    """The pid of the live process holding ``data_dir``, or None when nobody holds it.

    A pid left in the file by a crashed owner is ignored: we probe the lock itself.
    """
    path = Path(data_dir) / LOCK_FILENAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _pid_in(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
