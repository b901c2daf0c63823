"""The steps both backups take (offline: :mod:`.backup`; while the daemon serves:
:mod:`.backup_online`), and what restore shares with them: the destination checked, the header
recorded, the files copied and hashed, the manifest sealed and the copy renamed into place."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_service.backup import manifest as backup_manifest
from memory_service.backup import servers as backup_servers
from memory_service.backup import state as backup_state
from memory_service.backup.files import (
    FileEntry,
    allocated_bytes,
    copy_file,
    finish_copy,
    fsync_tree,
    is_empty_dir_or_missing,
    walk,
)
from memory_service.core.errors import ConflictError, MemoryServiceError, ValidationError
from memory_service.daemon.paths import INFO_FILENAME, LOG_FILENAME
from memory_service.settings import Settings
from memory_service.stores.owner_lock import LOCK_FILENAME

# (description, done, total): files copied or checked so far.
Progress = Callable[[str, int, int], None]
EXPORT = backup_servers.EXPORT_FILE


def check_destination(settings: Settings, dest: Path) -> Path:
    """``dest`` resolved, once checked: a data directory to back up, a destination outside it,
    missing or empty."""
    data_dir = settings.resolved_data_dir
    dest = dest.expanduser().resolve()
    if not (data_dir / backup_manifest.SQLITE_FILE).is_file():
        raise ValidationError(
            f"No memory-service data directory at {data_dir}: nothing to back up",
            code="VAL_BACKUP_NO_DATA",
            details={"data_dir": str(data_dir)},
            suggestion="Point --data-dir (or MEMORY_DATA_DIR) at the directory the server uses.",
        )
    if dest == data_dir.resolve() or dest.is_relative_to(data_dir.resolve()):
        raise ValidationError(
            f"The backup destination {dest} is inside the data directory {data_dir}",
            code="VAL_BACKUP_DEST",
            details={"path": str(dest)},
            suggestion="Write the backup somewhere outside the data directory.",
        )
    refuse_non_empty(dest, "backup destination")
    return dest


def skipped(settings: Settings) -> set[str]:
    """Data-directory paths no backup copies: the owner lock, the daemon's own files (its pid
    and log), and what a server backup's export covers."""
    return {LOCK_FILENAME, INFO_FILENAME, LOG_FILENAME, *backup_servers.local_skip(settings)}


def record(services: Any, tmp: Path, progress: Progress) -> dict[str, Any]:
    """The manifest's header: the graph outbox drained, the counts read (and a server backup's
    export written into ``tmp``). Writes must not run meanwhile: the stores are owned by this
    process alone, or the daemon's write gate is closed."""
    settings = services.settings
    with contextlib.suppress(MemoryServiceError):  # what stays queued is in the copy too
        services.sync.drain()
    if backup_state.kind(settings) == "export":
        header = backup_state.header(settings, backup_state.export_counts(services))
        header["export"] = backup_servers.export_into(services, tmp, progress)
        return header
    return backup_state.header(settings, backup_state.store_counts(services))


def copy_tree(
    data_dir: Path,
    tmp: Path,
    skip: set[str],
    progress: Progress,
    done: list[FileEntry] | None = None,
    *,
    finish: bool = True,
) -> tuple[list[str], list[FileEntry]]:
    """Copy the data directory's files into ``tmp`` but ``skip`` (and the files in ``done``,
    copied already); returns its folders and every file entry, ``done`` first (without
    ``finish``, the copies are left unsynced, their hashes empty, for :func:`finish_copies`)."""
    files = list(done or [])
    dirs, names = walk(data_dir, skip=frozenset(skip | {f.path for f in files}))
    exported = (tmp / EXPORT).exists()  # a server backup's export, written by record()
    if EXPORT in names and exported:
        raise ValidationError(
            f"The data directory holds a file named {EXPORT}, the name of the backup's export",
            code="VAL_BACKUP_UNSUPPORTED_FILE",
            details={"file": EXPORT},
            suggestion=f"Move {data_dir / EXPORT} out of the data directory, then back up again.",
        )
    for d in dirs:
        (tmp / d).mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        progress(f"copying {name}", i, len(names))
        files.append(entry_of(name, copy_file(data_dir / name, tmp / name, finish=finish)))
    if exported:
        files.append(entry_of(EXPORT, copy_file(tmp / EXPORT, None)))
    progress("copied", len(names), len(names))
    return dirs, files


def finish_copies(tmp: Path, files: list[FileEntry], progress: Progress) -> list[FileEntry]:
    """The entries of files copied without ``finish``: synced, and hashed from the copies."""
    out = []
    for i, entry in enumerate(files):
        if not entry.sha256:
            progress(f"hashing {entry.path}", i, len(files))
            entry = entry_of(entry.path, finish_copy(tmp / entry.path))
        out.append(entry)
    return out


def seal(
    tmp: Path, header: dict[str, Any], dirs: list[str], files: list[FileEntry], dest: Path
) -> dict[str, Any]:
    """Write the manifest into the finished copy, sync it and rename it to ``dest``."""
    header["sqlite_rows"] = backup_manifest.sqlite_rows(tmp / backup_manifest.SQLITE_FILE)
    manifest = backup_manifest.build(header, dirs, files)
    backup_manifest.write(tmp, manifest)
    fsync_tree(tmp)
    move_into(tmp, dest)
    return manifest


def entry_of(name: str, copied: FileEntry) -> FileEntry:
    return FileEntry(path=name, size=copied.size, sha256=copied.sha256)


def refuse_non_empty(path: Path, what: str) -> None:
    if is_empty_dir_or_missing(path):
        return
    hint = (
        "Choose a new backup path (memory-cli never overwrites a backup)."
        if what == "backup destination"
        else "Restore into a new directory (--data-dir), or move the existing one aside first: "
        "restore never overwrites data."
    )
    raise ConflictError(
        f"The {what} {path} exists and is not empty",
        code="CON_TARGET_NOT_EMPTY",
        details={"path": str(path)},
        suggestion=hint,
    )


def move_into(tmp: Path, dest: Path) -> None:
    """Rename the finished folder into place (an empty ``dest`` is replaced)."""
    with contextlib.suppress(FileNotFoundError):
        dest.rmdir()  # only succeeds when empty; a non-empty one makes rename fail below
    try:
        os.rename(tmp, dest)
    except OSError as exc:
        raise ConflictError(
            f"Could not move the finished copy into {dest}: {exc.strerror}",
            code="CON_TARGET_NOT_EMPTY",
            details={"path": str(dest)},
            suggestion="Something wrote into the target meanwhile; make sure nothing else uses it and retry.",
        ) from exc


def summary_of(manifest: dict[str, Any], where: Path, started: float) -> dict[str, Any]:
    counts = manifest.get("counts", {})
    files = manifest["files"]
    out = {
        "path": str(where),
        "kind": manifest.get("kind", "files"),
        "files": len(files),
        "bytes": sum(f["size"] for f in files),
        "bytes_on_disk": allocated_bytes(where),
        "memories": counts.get("memories", {}).get("total", 0),
        "relationships": counts.get("relationships", {}).get("total", 0),
        "code_files": counts.get("code_index", {}).get("files", 0),
        "audit_events": counts.get("audit_events", 0),
        "seconds": round(time.monotonic() - started, 2),
        "created_at": manifest.get("created_at"),
    }
    exported = manifest.get("export")
    if isinstance(exported, dict):
        for key in ("memories", "relationships", "votes"):
            out[f"exported_{key}"] = exported.get(key, 0)
    return out
