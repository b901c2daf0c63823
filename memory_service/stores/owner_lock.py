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
import logging
import os
from pathlib import Path
from types import TracebackType

from memory_service.core.errors import ServiceUnavailableError

LOCK_FILENAME = "owner.lock"
logger = logging.getLogger(__name__)


def _pid_in(fd: int) -> int | None:
    raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(raw) if raw.isdigit() else None


class OwnerLock:
    """Exclusive, non-blocking ownership of a data directory. Usable as a context manager."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_FILENAME
        self._fd: int | None = None
        self.writable = True  # False when the lock file is read-only (locked, pid not written)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock and write our pid, or raise ``SVC_DATA_DIR_LOCKED`` naming the holder."""
        if self._fd is not None:
            return
        fd, writable = self._open()
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
        except OSError as exc:
            os.close(fd)
            raise self._unusable(exc) from None
        if writable:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
            os.fsync(fd)
        self.writable = writable
        self._fd = fd

    def _open(self) -> tuple[int, bool]:
        """The lock file's descriptor, read-write when possible. A read-only file still locks
        (``flock`` needs no write access): the server starts, only the pid cannot be written."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644), True
        except PermissionError:
            pass
        except OSError as exc:
            raise self._unusable(exc) from None
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise self._unusable(exc) from None
        logger.warning(
            "%s is read-only: the data directory is locked, but the owner's pid is not written in it "
            "(make it writable: chmod u+w, or chattr -i for an immutable file)",
            self.path,
        )
        return fd, False

    def _unusable(self, exc: OSError) -> ServiceUnavailableError:
        return ServiceUnavailableError(
            f"Cannot open the data directory's lock file {self.path}: {exc.strerror or exc}",
            code="SVC_DATA_DIR_LOCK_FILE",
            details={"data_dir": str(self.data_dir), "path": str(self.path), "error": str(exc)},
            suggestion="Give the server's user read and write access to the data directory and to "
            f"{LOCK_FILENAME} (chmod u+rw; for an immutable file, chattr -i), or point "
            "MEMORY_DATA_DIR at a directory it owns. While no server runs, the file may be removed.",
        )

    def release(self) -> None:
        """Clear the pid and drop the lock; harmless when not held."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if self.writable:
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
