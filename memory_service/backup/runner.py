"""``memory-cli backup`` / ``restore``: a consistent copy of a data directory, and its return.

Offline (no daemon serves the directory), the backup takes the data directory's owner lock (so
no server can write, and a ``--no-daemon`` one makes it refuse), drains the graph-sync outbox,
reads the counts, closes every store (SQLite checkpoints its WAL, LadybugDB and qdrant-edge
flush) and only then copies the files, still holding the lock. While a daemon serves, the daemon
takes the backup itself with its writes paused (:mod:`.backup_online`); both take the same
steps (:mod:`.backup_steps`). The copy goes to a temporary folder beside the destination,
renamed into place once the manifest is written, so a backup directory either is whole or does
not exist. Restore (always offline) checks the manifest before writing anything, copies into a
temporary folder beside the target, renames it, then opens the restored stores and compares
their counts with the manifest's.

With server backends (``kind: export``) the memories live on the servers, which a file copy
cannot reach: the backup adds an export of every memory (:mod:`.backup_servers`), taken while
no write runs, and the restore imports it into servers that hold none of the project's memories
yet (docs/backup.md).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from memory_service import __version__
from memory_service.backup import manifest as backup_manifest
from memory_service.backup import servers as backup_servers
from memory_service.backup import state as backup_state
from memory_service.backup.files import copy_file, fsync_tree
from memory_service.backup.steps import (
    EXPORT,
    Progress,
    check_destination,
    copy_tree,
    move_into,
    record,
    refuse_non_empty,
    seal,
    skipped,
    summary_of,
)
from memory_service.core.errors import InternalError, MemoryServiceError
from memory_service.settings import Settings


def _quiet(_description: str, _done: int, _total: int) -> None:
    return None


def _open(settings: Settings, *, accept_empty: bool = False) -> Any:
    from memory_service.app import open_services

    return open_services(settings, housekeeping=False, accept_empty=accept_empty)


def backup(settings: Settings, dest: Path, progress: Progress = _quiet) -> dict[str, Any]:
    """Write a backup of the data directory into ``dest`` (missing or empty); return a summary."""
    started = time.monotonic()
    data_dir = settings.resolved_data_dir
    dest = check_destination(settings, dest)
    services = _open(settings)  # the owner lock: refused while a server runs
    tmp: Path | None = None
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
        try:
            header = record(services, tmp, progress)
        finally:
            services.close_stores()
        dirs, files = copy_tree(data_dir, tmp, skipped(settings), progress)
        manifest = seal(tmp, header, dirs, files, dest)
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        services.lock.release()
    return summary_of(manifest, dest, started)


def restore(settings: Settings, source: Path, progress: Progress = _quiet) -> dict[str, Any]:
    """Restore the backup at ``source`` into the (missing or empty) data directory, check it
    file by file, then open it and compare its counts with the manifest's (a server backup's
    export is imported into the servers first)."""
    started = time.monotonic()
    source = source.expanduser().resolve()
    target = settings.resolved_data_dir.expanduser().resolve()
    manifest = backup_manifest.read(source)
    backup_state.check_settings(manifest, settings)
    kind = manifest.get("kind", "files")
    refuse_non_empty(target, "data directory")
    listed = backup_manifest.check_listing(source, manifest)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.restore-", dir=target.parent))
    cleared = 0
    try:
        for d in manifest["directories"]:
            (tmp / d).mkdir(parents=True, exist_ok=True)
        for i, entry in enumerate(listed):
            progress(f"restoring {entry.path}", i, len(listed))
            export = kind == "export" and entry.path == EXPORT  # checked here, imported below
            (tmp / entry.path).parent.mkdir(parents=True, exist_ok=True)
            got = copy_file(source / entry.path, None if export else tmp / entry.path)
            if got.sha256 != entry.sha256 or got.size != entry.size:
                raise backup_manifest.hash_mismatch(entry, got.sha256)
        progress("restored", len(listed), len(listed))
        rows = backup_manifest.sqlite_rows(tmp / backup_manifest.SQLITE_FILE)
        if rows != manifest.get("sqlite_rows", rows):
            raise _mismatch(
                backup_manifest.differences(manifest["sqlite_rows"], rows), target, restored=False
            )
        if kind == "export":
            if EXPORT not in {e.path for e in listed}:
                raise backup_manifest.damaged(
                    f"The server backup lists no {EXPORT}", "VAL_BACKUP_FILE_MISSING", file=EXPORT
                )
            progress("checking the servers", 0, 1)
            backup_servers.refuse_if_servers_hold_memories(settings)
            if backup_state.code_on_servers(settings):
                cleared = backup_servers.clear_index_state(tmp / backup_manifest.SQLITE_FILE)
        fsync_tree(tmp)
        move_into(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if kind == "export":
        return _restore_export(settings, manifest, source, target, cleared, progress, started)
    progress("checking the restored stores", 0, 1)
    services = _open(settings.model_copy(update={"data_dir": target}))
    try:
        found = backup_state.store_counts(services)
    finally:
        services.close()
    progress("checked", 1, 1)
    other_version = manifest.get("memory_service_version") != __version__
    problems = backup_manifest.differences(manifest.get("counts", {}), found, only_expected=other_version)
    if problems:
        raise _mismatch(problems, target, restored=True)
    summary = summary_of(manifest, target, started)
    summary["warnings"] = backup_state.engine_warnings(manifest)
    return summary


def _restore_export(
    settings: Settings,
    manifest: dict[str, Any],
    source: Path,
    target: Path,
    cleared: int,
    progress: Progress,
    started: float,
) -> dict[str, Any]:
    """The local files are in place: import the export into the servers, then count. The
    restored ``stores.json`` remembers the memories the servers held; they are empty until the
    import (checked above), which is no loss to raise an alarm for."""
    services = _open(settings.model_copy(update={"data_dir": target}), accept_empty=True)
    try:
        try:
            imported = backup_servers.import_from(services, source / EXPORT, progress)
        except MemoryServiceError as exc:
            raise _import_failed(exc, target) from exc
        found = backup_state.export_counts(services)
    finally:
        services.close()
    expected = manifest.get("counts", {})
    problems = backup_manifest.differences(
        {k: expected.get(k) for k in backup_state.EXPORT_COMPARED},
        {k: found.get(k) for k in backup_state.EXPORT_COMPARED},
    )
    votes = backup_manifest.sqlite_rows(target / backup_manifest.SQLITE_FILE).get("votes", 0)
    saved_votes = manifest.get("sqlite_rows", {}).get("votes", 0)
    problems += backup_servers.import_problems(manifest.get("export", {}), imported, (saved_votes, votes))
    if found["audit_events"] < expected.get("audit_events", 0):
        problems.append(
            f"audit_events: expected at least {expected['audit_events']}, found {found['audit_events']}"
        )
    if problems:
        raise _mismatch(problems, target, restored=True)
    summary = summary_of(manifest, target, started)
    summary["code_files"] = found["code_index"]["files"]
    summary["audit_events"] = found["audit_events"]
    summary["imported"] = imported.imported + imported.updated
    summary["vectors_reused"] = imported.vectors_reused
    summary["reembedded"] = imported.reembedded
    summary["warnings"] = [
        f"the audit log has {found['audit_events'] - expected.get('audit_events', 0)} more events: the "
        "import's own (operation 'import')",
    ]
    if cleared:
        summary["warnings"].append(
            f"the code index ({cleared} files) is not in a server backup: run memory-cli index PATH "
            "(or index_directory) to rebuild it"
        )
    return summary


def _import_failed(exc: MemoryServiceError, target: Path) -> InternalError:
    return InternalError(
        f"The local files were restored into {target}, but importing the memories into the servers "
        f"failed: {exc.message}",
        code="INT_RESTORE_IMPORT",
        details={"data_dir": str(target), "cause": exc.code},
        suggestion=f"{exc.suggestion} Then delete {target} and this project's data on the servers, "
        "and restore again.",
    )


def _mismatch(problems: list[str], target: Path, *, restored: bool) -> InternalError:
    where = f"The restored data directory {target}" if restored else "The restored SQLite file"
    return InternalError(
        f"{where} does not hold what the manifest says: " + "; ".join(problems[:10]),
        code="INT_RESTORE_MISMATCH",
        details={"differences": problems, "data_dir": str(target)},
        suggestion=(
            f"Do not use {target}: delete it and restore from another backup. "
            if restored
            else "Nothing was written. "
        )
        + "Report this with the manifest: an engine may not have reopened its files the same way.",
    )
