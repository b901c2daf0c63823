"""File work of ``memory-cli backup`` / ``restore``: list a tree, copy it, hash what was copied.

Why sparse-aware: qdrant-edge preallocates its page and WAL files (32 MiB apparent, a few KiB
used), so a data directory of 2 MB on disk reads as 800 MB. Copying byte for byte would write
all those zeros and make a backup 400 times its source. The copy below moves only the data
extents (``SEEK_DATA``/``SEEK_HOLE``) and recreates the holes, and the hash still covers every
byte of the file (a hole is fed to SHA-256 as the zeros it reads as), so ``sha256sum`` of a file
agrees with the manifest.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memory_service.core.errors import ValidationError

_CHUNK = 1 << 20
_ZEROS = bytes(_CHUNK)


@dataclass(frozen=True)
class FileEntry:
    """One file of a backup: its path relative to the tree (POSIX ``/``), size and SHA-256."""

    path: str
    size: int
    sha256: str


def walk(root: Path, *, skip: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """The directories and regular files under ``root`` as sorted relative POSIX paths.

    Empty directories are listed too (an engine may expect its folders). ``skip`` holds relative
    paths to leave out, with everything under them (the owner lock; a Qdrant local-mode folder
    inside the data directory, which an export covers). A symlink or special file is refused: a
    data directory holds none, and following one could copy something that is not ours.
    """
    dirs: list[str] = []
    files: list[str] = []
    for folder, subdirs, names in os.walk(root):
        rel = Path(folder).relative_to(root)
        subdirs[:] = sorted(d for d in subdirs if (rel / d).as_posix() not in skip)
        for d in subdirs:
            if (Path(folder) / d).is_symlink():
                raise _unsupported(rel / d)
            dirs.append((rel / d).as_posix())
        for name in sorted(names):
            if (rel / name).as_posix() in skip:
                continue
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                raise _unsupported(rel / name)
            files.append((rel / name).as_posix())
    return dirs, files


def _unsupported(rel: Path) -> ValidationError:
    return ValidationError(
        f"'{rel.as_posix()}' is not a regular file or directory",
        code="VAL_BACKUP_UNSUPPORTED_FILE",
        details={"file": rel.as_posix()},
        suggestion="A data directory holds only files and folders: remove the link or special file.",
    )


def _extents(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each data extent; the whole file where the OS cannot tell holes."""
    if not hasattr(os, "SEEK_DATA"):
        yield 0, size
        return
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole left
                return
            if exc.errno == errno.EINVAL:  # file system without SEEK_DATA
                yield pos, size
                return
            raise
        end = os.lseek(fd, start, os.SEEK_HOLE)
        yield start, end
        pos = end


class _NoHash:
    def update(self, _data: bytes) -> None:
        return None

    def hexdigest(self) -> str:
        return ""


def _hash_zeros(h: hashlib._Hash | _NoHash, n: int) -> None:
    while n > 0:
        step = min(n, _CHUNK)
        h.update(_ZEROS[:step] if step < _CHUNK else _ZEROS)
        n -= step


def copy_file(src: Path, dst: Path | None, *, finish: bool = True) -> FileEntry:
    """Copy ``src`` to ``dst`` keeping holes (``dst`` None: only hash), fsync it, and return
    the size and SHA-256 of the bytes read. Without ``finish`` the copy is neither hashed (an
    empty hash) nor synced: :func:`finish_copy` does both later, as an online backup does once
    writes resume. ``path`` is left to the caller."""
    h = hashlib.sha256() if finish else _NoHash()
    with open(src, "rb") as fi:
        fd = fi.fileno()
        size = os.fstat(fd).st_size
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if dst else None
        try:
            pos = 0
            for start, end in _extents(fd, size):
                _hash_zeros(h, start - pos)
                offset = start
                while offset < end:
                    block = os.pread(fd, min(_CHUNK, end - offset), offset)
                    if not block:  # the file shrank under us: hash what is there
                        break
                    h.update(block)
                    if out is not None:
                        os.pwrite(out, block, offset)
                    offset += len(block)
                pos = offset
            _hash_zeros(h, size - pos)
            if out is not None:
                os.ftruncate(out, size)
                if finish:
                    os.fsync(out)
        finally:
            if out is not None:
                os.close(out)
    return FileEntry(path="", size=size, sha256=h.hexdigest())


def finish_copy(path: Path) -> FileEntry:
    """Sync a file copied without ``finish`` and hash it (the copy is byte for byte its source)."""
    _fsync(path)
    return copy_file(path, None)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sqlite_snapshot(src: Path, dst: Path) -> FileEntry:
    """A copy of a live SQLite database through its online backup API (a consistent snapshot,
    whatever other connections do meanwhile), synced, with its size and SHA-256."""
    source = sqlite3.connect(src)
    try:
        target = sqlite3.connect(dst)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")  # one file, as a closed database is
        finally:
            target.close()
    finally:
        source.close()
    return finish_copy(dst)


def allocated_bytes(root: Path) -> int:
    """Bytes a tree takes on disk (holes excluded), as ``du`` counts them."""
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def fsync_tree(root: Path) -> None:
    """Make the directory entries durable (files were synced as they were written)."""
    for folder, _, _ in os.walk(root, topdown=False):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def is_empty_dir_or_missing(path: Path) -> bool:
    if not path.exists():
        return True
    return path.is_dir() and next(path.iterdir(), None) is None
