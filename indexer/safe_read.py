"""The one way the indexer reads a file: a regular file, opened without blocking, inside a root.

A path that was checked is not the file that gets opened: between the check and the open a
directory on the way can be swapped for a symlink to somewhere else, and a ``*.py`` can be a
FIFO (an open that waits forever for a writer) or a device. So `open_source` walks the path
one component at a time from its root, each directory opened relative to the previous one's
descriptor with ``O_NOFOLLOW | O_DIRECTORY``, and opens the file itself with ``O_NOFOLLOW |
O_NONBLOCK``; then `fstat` on the descriptor decides, so what is read is what was checked.
Refusals are `OSError` subclasses, so a caller that only knows "unreadable" still copes.
POSIX only (``dir_fd`` and ``O_NOFOLLOW``), like the server.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1 << 20


class RefusedFile(OSError):
    """The file exists but policy says it is not read (not an I/O failure)."""


class NotRegularFile(RefusedFile):
    """A FIFO, socket, device or directory where a source file was expected."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file but a {kind}", str(path))
        self.kind = kind


class OutsideRoot(RefusedFile):
    """The path is not under an allowed root, or reaches its file through a symlink."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(errno.EXDEV, why, str(path))


class FileTooLarge(RefusedFile):
    """Bigger than the configured limit (``MEMORY_INDEXER__MAX_FILE_BYTES``)."""

    def __init__(self, path: Path, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes, over the {limit}-byte limit", str(path))
        self.size = size
        self.limit = limit


def file_kind(mode: int) -> str:
    """A person's name for a file type: "FIFO (named pipe)", "socket", "directory"..."""
    kinds = (
        (stat.S_ISREG, "regular file"),
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISLNK, "symlink"),
    )
    return next((name for test, name in kinds if test(mode)), "special file")


def read_source(path: Path, roots: Sequence[Path], *, max_bytes: int, head: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``, read through `open_source`.

    Args:
        path: Absolute path of the file, under one of ``roots`` (not resolved: symlinks are refused).
        roots: Resolved directories the file may live in.
        max_bytes: A larger file is refused; also enforced on what is read, should it grow.
        head: Read only the first ``head`` bytes (the walker's sniff for binaries and headers).

    Raises:
        OutsideRoot, NotRegularFile, FileTooLarge: the file is not read, and why.
        OSError: it could not be opened or read.
    """
    fd = open_source(path, roots)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise FileTooLarge(path, size, max_bytes)
        want = max_bytes + 1 if head is None else min(head, max_bytes + 1)
        chunks: list[bytes] = []
        got = 0
        while got < want and (chunk := os.read(fd, min(_CHUNK, want - got))):
            chunks.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise FileTooLarge(path, len(data), max_bytes)
    return data


def open_source(path: Path, roots: Sequence[Path]) -> int:
    """A read-only descriptor of the regular file at ``path``; no symlink below its root is followed.

    Raises:
        OutsideRoot: ``path`` is not under a root, or a component of it is a symlink.
        NotRegularFile: it is a FIFO, socket, device or directory (a FIFO is never waited on).
        OSError: it does not exist or cannot be opened.
    """
    path = Path(os.path.abspath(path))
    dir_fd = open_dir(path.parent, roots)
    try:
        # Look before opening, so that a device is not even opened; fstat below closes the race.
        mode = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            raise OutsideRoot(path, "a symlink (not followed)")
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, file_kind(mode))
        fd = _open_at(dir_fd, path.name, path)
    finally:
        os.close(dir_fd)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # it changed between the stat and the open
        os.close(fd)
        raise NotRegularFile(path, file_kind(mode))
    return fd


def open_dir(path: Path, roots: Sequence[Path]) -> int:
    """A descriptor of the directory at ``path``, each component below its root opened with
    ``O_NOFOLLOW`` relative to the one before, so no symlink on the way is followed.

    Raises:
        OutsideRoot: ``path`` is not under a root, or a component of it is a symlink.
        OSError: a component does not exist or is not a directory.
    """
    path = Path(os.path.abspath(path))  # lexical: ".." is dropped, no link is followed
    root = next((r for r in roots if path.is_relative_to(r)), None)
    if root is None:
        raise OutsideRoot(path, "not under an allowed root")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the roots are trusted as given
    try:
        for part in path.relative_to(root).parts:
            next_fd = _open_at(fd, part, path, directory=True)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_at(dir_fd: int, name: str, path: Path, *, directory: bool = False) -> int:
    """Open ``name`` inside ``dir_fd`` without following it, a symlink refused as `OutsideRoot`."""
    try:
        return os.open(name, _DIR_FLAGS if directory else _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        # O_NOFOLLOW makes a symlink fail with ELOOP (or ENOTDIR with O_DIRECTORY on some systems).
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            try:
                mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except OSError:
                raise exc from None
            if stat.S_ISLNK(mode):
                raise OutsideRoot(path, f"'{name}' is a symlink (not followed)") from None
        raise
