"""A backup taken by the daemon while it serves (``memory-cli backup`` with a daemon running).

The daemon owns the stores, so it copies them itself, with its writes paused for the copy:

1. It waits (sessions still served) until no long work runs: a background job (index,
   normalization) or an HNSW index build.
2. It closes the write gate (core/write/gate.py): new tool calls, jobs and housekeeping wait at
   the gate, and the calls already inside finish. Nothing fails; a write that arrives now is
   answered once the copy is done.
3. With no write running it does what an offline backup does with the stores closed: drains the
   graph outbox, reads the counts (and writes a server backup's export), then makes each engine's
   files whole (qdrant-edge flushes its segments and syncs its WAL, LadybugDB runs CHECKPOINT),
   snapshots SQLite through its online backup API, and copies the other files (keeping their
   holes: a few MB of data in files of hundreds of MB apparent).
4. It opens the gate, syncs and hashes the copies (the pause waits for neither a disk flush per
   file nor SHA-256 over the holes), writes the manifest (same format, same hashes as offline)
   and renames the copy into place.

So the backup holds every write acknowledged before the gate closed, and no part of a write that
was still to come. Restore stays offline (:mod:`.backup`).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from memory_service.backup import manifest as backup_manifest
from memory_service.backup.files import FileEntry, sqlite_snapshot
from memory_service.backup.steps import (
    Progress,
    check_destination,
    copy_tree,
    finish_copies,
    record,
    seal,
    skipped,
    summary_of,
)
from memory_service.core.errors import ServiceUnavailableError

logger = logging.getLogger(__name__)
SQLITE = backup_manifest.SQLITE_FILE
# SQLite's own sidecar files: the snapshot of the database covers them.
SQLITE_SIDECARS = {f"{SQLITE}-wal", f"{SQLITE}-shm", f"{SQLITE}-journal"}
# How long a backup waits for long work to end (sessions are served meanwhile), and then for
# the tool calls in flight to finish once new ones wait (a session's call waits that long at most).
JOB_WAIT_S = 600.0
PAUSE_WAIT_S = 60.0


def _quiet(_description: str, _done: int, _total: int) -> None:
    return None


def backup_serving(services: Any, dest: Path, progress: Progress = _quiet) -> dict[str, Any]:
    """Back up the data directory ``services`` serves into ``dest`` (missing or empty), pausing
    writes for the copy; the summary of :func:`.backup.backup` plus ``writes_paused_seconds``."""
    started = time.monotonic()
    settings = services.settings
    data_dir = settings.resolved_data_dir
    dest = check_destination(settings, dest)
    _wait_for_long_work(services, progress)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
    try:
        progress("pausing writes", 0, 1)
        with services.gate.closed(PAUSE_WAIT_S):
            paused = time.monotonic()
            header = record(services, tmp, progress)
            services.stores.vectors.checkpoint()
            services.stores.graph.checkpoint()
            first = [_sqlite(data_dir, tmp)]
            skip = skipped(settings) | SQLITE_SIDECARS
            dirs, files = copy_tree(data_dir, tmp, skip, progress, first, finish=False)
            paused = time.monotonic() - paused
        manifest = seal(tmp, header, dirs, finish_copies(tmp, files, progress), dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    summary = summary_of(manifest, dest, started)
    summary["writes_paused_seconds"] = round(paused, 3)
    logger.info("backup into %s: %d files, writes paused for %.2f s", dest, len(files), paused)
    return summary


def _sqlite(data_dir: Path, tmp: Path) -> FileEntry:
    copied = sqlite_snapshot(data_dir / SQLITE, tmp / SQLITE)
    return FileEntry(path=SQLITE, size=copied.size, sha256=copied.sha256)


def _wait_for_long_work(services: Any, progress: Progress) -> None:
    """Until no job or index build runs, sessions still served: the gate closes only for the copy."""
    deadline = time.monotonic() + JOB_WAIT_S
    while running := services.gate.long_work():
        if time.monotonic() > deadline:
            raise ServiceUnavailableError(
                f"Still running after {JOB_WAIT_S:.0f} s: {', '.join(running)}",
                code="SVC_BACKUP_PAUSE",
                details={"running": running, "timeout_s": JOB_WAIT_S},
                suggestion="Run the backup again once it has finished (index_status or "
                "normalize_status follows a job), or cancel the job.",
            )
        jobs = services.jobs.active()
        if jobs:
            progress(f"waiting for the {jobs[0].kind} job", jobs[0].progress, 100)
        else:
            progress(f"waiting for {running[0]}", 0, 0)
        time.sleep(0.2)
