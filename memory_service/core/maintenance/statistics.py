"""memory_statistics: counts, storage, sync backlog, index totals and live latency, in one answer.

Everything is read from the stores themselves when asked (so it reflects every process that shares
them), except the latency figures and the cache hit rate, which are this process's counters since
it started. A store that is down does not fail the call: its figures read 0 and a warning says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime

from memory_service.core.code.schemas import IndexTotals
from memory_service.core.errors import MemoryServiceError
from memory_service.core.jobs import JobManager
from memory_service.core.maintenance.statistics_schemas import (
    IndexCounts,
    LatencyFigures,
    MemoryCounts,
    MemoryStatisticsOutput,
    PerformanceFigures,
    ProjectFigures,
    RelationshipCounts,
    StorageFigures,
    SyncFigures,
)
from memory_service.core.maintenance.telemetry import Telemetry
from memory_service.core.models import MemoryStatus, MemoryType
from memory_service.core.ports import ComponentHealth, PayloadFilter
from memory_service.core.records import MEMORIES, STALE_FIELD, Stores
from memory_service.core.scopes import ProjectOrigin
from memory_service.core.write.graph_sync import GraphSync

logger = logging.getLogger(__name__)

SEARCH_TOOLS = ("memory_search",)
# Tools that write memory records: avg_write_ms is their mean.
WRITE_TOOLS = (
    "memory_add",
    "memory_bulk_add",
    "memory_update",
    "memory_delete",
    "memory_supersede",
    "memory_feedback",
)
_MB = 1e6


class StatisticsService:
    def __init__(
        self,
        stores: Stores,
        sync: GraphSync,
        telemetry: Telemetry,
        jobs: JobManager,
        *,
        index_totals: Callable[[], IndexTotals],
        health: Callable[[], list[ComponentHealth]],
        backends: dict[str, str],
        local_bytes: Callable[[], int],
        project: ProjectOrigin,
    ) -> None:
        self._project = project
        self._stores = stores
        self._sync = sync
        self._telemetry = telemetry
        self._jobs = jobs
        self._index_totals = index_totals
        self._health = health
        self._backends = backends
        self._local_bytes = local_bytes

    def statistics(self) -> MemoryStatisticsOutput:
        warnings: list[str] = []
        parts = self._health()
        # Why a part is not ok (a damaged graph, a lost store) belongs next to its state.
        warnings += [f"{p.name} {p.state}: {p.detail}" for p in parts if p.state != "ok" and p.detail]
        origin = self._project
        return MemoryStatisticsOutput(
            project=ProjectFigures(name=origin.name, source=origin.source, reason=origin.reason),
            memories=self._memories(),
            index=self._index(),
            relationships=self._relationships(warnings),
            storage=self._storage(warnings),
            sync=self._sync_figures(warnings),
            performance=self._performance(),
            audit_events=self._stores.audit.count(),
            health={part.name: part.state for part in parts},
            jobs=[
                j.model_dump(include={"job_id", "kind", "status", "phase", "progress"})
                for j in self._jobs.active()
            ],
            warnings=warnings,
        )

    def _memories(self) -> MemoryCounts:
        vectors = self._stores.vectors

        def active(**equals: str | bool) -> int:
            flt = PayloadFilter(equals={"status": MemoryStatus.ACTIVE.value, **equals})
            return vectors.count(MEMORIES, flt)

        by_type = {t.value: n for t in MemoryType if (n := active(type=t.value))}
        return MemoryCounts(
            total=sum(by_type.values()),
            by_type=by_type,
            deleted=vectors.count(MEMORIES, PayloadFilter(equals={"status": MemoryStatus.DELETED.value})),
            embedding_pending=active(embedding_pending=True),
            stale=active(**{STALE_FIELD: "true"}),
            superseded=active(superseded="true"),
        )

    def _index(self) -> IndexCounts:
        totals = self._index_totals()
        return IndexCounts(
            files=totals.total_files,
            functions=totals.total_functions,
            classes=totals.total_classes,
            languages=totals.languages,
            last_indexed=totals.last_indexed,
        )

    def _relationships(self, warnings: list[str]) -> RelationshipCounts:
        try:
            by_type = self._stores.graph.count_edges_by_type()
            labels = self._stores.graph.count_nodes_by_label()
        except MemoryServiceError as exc:
            warnings.append(f"graph store unavailable, relationships not counted: {exc.message}")
            return RelationshipCounts(total=0, by_type={})
        return RelationshipCounts(total=sum(by_type.values()), by_type=by_type, nodes_by_label=labels)

    def _storage(self, warnings: list[str]) -> StorageFigures:
        graph_bytes = cache_bytes = 0
        try:
            graph_bytes = self._stores.graph.size_bytes()
        except MemoryServiceError as exc:
            warnings.append(f"graph size unknown: {exc.message}")
        try:
            cache_bytes = self._stores.cache.size_bytes()
        except MemoryServiceError as exc:
            warnings.append(f"cache size unknown: {exc.message}")
        return StorageFigures(
            qdrant_size_mb=round(self._stores.vectors.size_bytes() / _MB, 3),
            neo4j_size_mb=round(graph_bytes / _MB, 3),
            cache_size_mb=round(cache_bytes / _MB, 3),
            local_db_size_mb=round(self._local_bytes() / _MB, 3),
            vector_store=self._backends["vectors"],
            graph_store=self._backends["graph"],
            cache_store=self._backends["cache"],
        )

    def _sync_figures(self, warnings: list[str]) -> SyncFigures:
        try:
            counts = self._sync.pending()
        except MemoryServiceError as exc:
            warnings.append(f"sync queue unavailable: {exc.message}")
            counts = {}
        inflight = counts.get("inflight", 0)
        dead = counts.get("failed", 0)
        pending = counts.get("pending", 0) + inflight
        return SyncFigures(pending=pending, inflight=inflight, failed=dead, dead=dead)

    def _performance(self) -> PerformanceFigures:
        telemetry = self._telemetry
        search = telemetry.combined(SEARCH_TOOLS)
        write = telemetry.combined(WRITE_TOOLS)
        try:
            cache = self._stores.cache.stats()
        except MemoryServiceError:
            cache = {}
        return PerformanceFigures(
            avg_search_ms=search["avg_ms"],
            avg_write_ms=write["avg_ms"],
            cache_hit_rate=round(cache.get("hit_rate", 0.0), 4),
            search_p50_ms=search["p50_ms"],
            search_p95_ms=search["p95_ms"],
            write_p50_ms=write["p50_ms"],
            write_p95_ms=write["p95_ms"],
            cache_hits=int(cache.get("hits", 0)),
            cache_misses=int(cache.get("misses", 0)),
            tools={name: LatencyFigures(**figures) for name, figures in telemetry.summary().items()},
            since=datetime.fromtimestamp(telemetry.started, UTC).isoformat(),
            uptime_seconds=round(telemetry.uptime_seconds(), 1),
        )
