"""``memory-cli repair``'s file work on the embedded graph: move a damaged database aside, salvage.

Why never delete: the graph is derived from the memory records except for relationships given
explicitly at ``memory_add``; the damaged files are the only copy of those, so they are kept (in
``damaged-graph-<time>/`` beside them) for a later salvage by hand. Why try the main file alone: LadybugDB
checkpoints into the main file and appends later commits to ``<file>.wal``; a WAL cut short
by a power cut fails the checksum and the database will not open, while the main file without
it opens with everything up to the last checkpoint. What the WAL held is then rebuilt from the
records. Checked on ladybug 0.22: a truncated WAL -> "Checksum verification failed, the WAL file
is corrupted"; an overwritten header -> "not a valid Lbug database file"; a read-only file ->
"Cannot open file ...: Permission denied" (an immutable one: "Operation not permitted").
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memory_service.core.errors import ServiceUnavailableError
from memory_service.settings import Settings
from memory_service.stores.graph.ladybug_files import database_file, graph_files

_PERMISSION_TEXTS = ("Permission denied", "Operation not permitted", "Read-only file system")


def graph_path(settings: Settings) -> Path:
    """Where the factory's store keeps it: ``data_dir/graph`` is the database file itself unless
    it is a directory (then ``graph/graph.lbug``), as LadybugGraphStore decides."""
    return database_file(settings.resolved_data_dir / "graph")


def permission_problem(exc: BaseException) -> bool:
    return any(text in str(exc) for text in _PERMISSION_TEXTS)


@dataclass
class GraphRepair:
    """What ``prepare`` did, for the repair report."""

    opened: bool = False  # the graph opened as it was: nothing moved
    moved_to: str | None = None
    salvaged: bool = False  # the main file without its WAL opened
    error: str = ""
    notes: list[str] = field(default_factory=list)


def _try_open(settings: Settings) -> ServiceUnavailableError | None:
    from memory_service.stores.graph.ladybug import LadybugGraphStore

    try:
        LadybugGraphStore(graph_path(settings), buffer_pool_mb=settings.graph.buffer_pool_mb).close()
    except ServiceUnavailableError as exc:
        return exc
    return None


def prepare(settings: Settings) -> GraphRepair:
    """Make the embedded graph openable: as it is, else its main file alone, else a fresh one;
    the damaged files are moved aside first. A permission problem is left for the user to fix."""
    report = GraphRepair()
    path = graph_path(settings)
    failure = _try_open(settings)
    if failure is None:
        report.opened = True
        return report
    report.error = failure.message
    if permission_problem(failure):
        raise ServiceUnavailableError(
            f"The graph files cannot be opened for writing: {failure.message}",
            code="SVC_GRAPH_PERMISSIONS",
            details={"path": str(path)},
            suggestion="Nothing is damaged: give the server's user write access to the graph files "
            f"(chmod u+w {path}*; for an immutable file, chattr -i) and start the server again.",
        )
    aside = path.parent / f"damaged-{path.name}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    aside.mkdir(parents=True, exist_ok=True)
    for file in graph_files(path):
        file.rename(aside / file.name)
    report.moved_to = str(aside)
    report.notes.append(f"moved the damaged graph files to {aside}")
    if (aside / path.name).exists():
        shutil.copy2(aside / path.name, path)
        if _try_open(settings) is None:
            report.salvaged = True
            report.notes.append("the main graph file opened without its WAL: kept what it held")
            return report
        for file in graph_files(path):
            file.unlink()
    report.notes.append("started a fresh graph: it is rebuilt from the memory records")
    return report
