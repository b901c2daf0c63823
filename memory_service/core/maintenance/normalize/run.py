"""What one normalize_memory run shares between its phases: options, counters, the dry-run plan,
progress across phases, and the snapshot of memory records it reads from the vector store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memory_service.core.jobs import JobContext
from memory_service.core.maintenance.normalize.schemas import NormalizeOptions, NormalizeStats
from memory_service.core.models import MemoryRecord
from memory_service.core.ports import VectorStore
from memory_service.core.records import MEMORIES, from_payload

MAX_PLANNED = 200  # a dry run lists at most this many actions (the counts cover all of them)
MAX_WARNINGS = 20
PAGE = 256


class Run:
    def __init__(self, ctx: JobContext, options: NormalizeOptions, phases: list[str]) -> None:
        self.ctx = ctx
        self.options = options
        self.dry_run = options.dry_run
        self._phases = phases
        self.stats = ctx.stats
        self.stats.update(NormalizeStats().model_dump())
        self.stats["dry_run"] = options.dry_run

    def count(self, key: str, n: int = 1) -> None:
        self.stats[key] = self.stats.get(key, 0) + n

    def plan(self, action: str, **details: Any) -> None:
        """Keep a dry run's planned action (the first MAX_PLANNED of them)."""
        planned: list[dict[str, Any]] = self.stats["planned"]
        if self.dry_run and len(planned) < MAX_PLANNED:
            planned.append({"action": action, **details})

    def warn(self, message: str) -> None:
        warnings: list[str] = self.stats["warnings"]
        if len(warnings) < MAX_WARNINGS and message not in warnings:
            warnings.append(message)

    def progress(self, phase: str, done: int, total: int) -> None:
        """Report overall progress: each phase is an equal slice of the bar (raises on cancel)."""
        share = 1.0 if total <= 0 else min(1.0, done / total)
        overall = (self._phases.index(phase) + share) / len(self._phases)
        self.ctx.progress(int(overall * 1000), 1000, phase)


def scan(vectors: VectorStore, run: Run | None = None, phase: str = "") -> list[MemoryRecord]:
    """Every memory record, active and deleted, in pages (progress reported per page when given
    a run: a re-read between phases reports none)."""
    total = vectors.count(MEMORIES) if run is not None else 0
    out: list[MemoryRecord] = []
    for page in _pages(vectors):
        out.extend(from_payload(p.payload) for p in page)
        if run is not None:
            run.progress(phase, len(out), total)
    return out


def _pages(vectors: VectorStore) -> Iterator[list[Any]]:
    offset: str | None = None
    while True:
        points, offset = vectors.scroll(MEMORIES, None, limit=PAGE, offset=offset)
        yield points
        if offset is None:
            return


def batches(items: list[str], size: int = 64) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
