"""memory_statistics: seed 001 §4.2.5's fields, plus what a user needs to judge the store's health."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memory_service.core.schema_base import DATETIME_FORMAT, ToolInput, ToolOutput


class MemoryStatisticsInput(ToolInput):
    """No arguments (seed 001)."""


class MemoryCounts(ToolOutput):
    total: int = Field(description="Active memories")
    by_type: dict[str, int] = Field(description="Active memories per type")
    deleted: int = Field(description="Soft-deleted memories (still stored)")
    embedding_pending: int = Field(description="Active memories waiting for a dense vector")
    stale: int = Field(description="Active memories whose cited code changed or vanished")
    superseded: int = Field(description="Facts replaced by a newer fact (memory_supersede)")


class IndexCounts(ToolOutput):
    files: int
    functions: int
    classes: int
    languages: dict[str, int] = Field(default_factory=dict)
    last_indexed: str | None = Field(default=None, json_schema_extra=DATETIME_FORMAT)


class RelationshipCounts(ToolOutput):
    total: int
    by_type: dict[str, int]
    nodes_by_label: dict[str, int] = Field(default_factory=dict)


class StorageFigures(ToolOutput):
    qdrant_size_mb: float = Field(description="The vector store (qdrant-edge embedded, or Qdrant)")
    neo4j_size_mb: float = Field(description="The graph store (LadybugDB embedded, or Neo4j; 0 when unknown)")
    cache_size_mb: float = Field(description="Cache entries (SQLite embedded, or Redis)")
    local_db_size_mb: float = Field(description="The data directory's SQLite file: audit, queue, index state")
    vector_store: str
    graph_store: str
    cache_store: str


class SyncFigures(ToolOutput):
    pending: int = Field(description="Graph changes waiting to be applied (held ones included)")
    inflight: int = Field(description="Held by a process applying them now")
    failed: int = Field(description="Gave up after their retries (dead letters, kept for replay)")
    dead: int = Field(description="Same as failed, by the queue's name for them")


class LatencyFigures(ToolOutput):
    calls: int
    errors: int = 0
    avg_ms: float
    p50_ms: float
    p95_ms: float


class PerformanceFigures(ToolOutput):
    avg_search_ms: float = Field(description="memory_search, mean since start")
    avg_write_ms: float = Field(description="memory_add/update/delete/bulk_add/supersede/feedback, mean")
    cache_hit_rate: float = Field(description="Cache hits / lookups since start, 0-1")
    search_p50_ms: float
    search_p95_ms: float
    write_p50_ms: float
    write_p95_ms: float
    cache_hits: int = 0
    cache_misses: int = 0
    tools: dict[str, LatencyFigures] = Field(
        default_factory=dict, description="Per tool called since start: calls, errors, mean, p50, p95"
    )
    since: str = Field(json_schema_extra=DATETIME_FORMAT, description="When the counters started")
    uptime_seconds: float


class ProjectFigures(ToolOutput):
    name: str = Field(description="The project this server's writes go to and its reads see by default")
    source: str = Field(
        description="Where the name came from: setting (MEMORY_PROJECT), git remote, git folder, "
        "folder (no git repository: the folder the server started in), default"
    )
    reason: str = Field(description="The same in a sentence")


class MemoryStatisticsOutput(ToolOutput):
    project: ProjectFigures
    memories: MemoryCounts
    index: IndexCounts
    relationships: RelationshipCounts
    storage: StorageFigures
    sync: SyncFigures
    performance: PerformanceFigures
    audit_events: int = Field(description="Mutations recorded in the audit log")
    health: dict[str, str] = Field(
        default_factory=dict, description="Each store's and the model's state: ok, degraded, unavailable"
    )
    jobs: list[dict[str, Any]] = Field(
        default_factory=list, description="Background jobs queued or running now"
    )
    warnings: list[str] = Field(default_factory=list)
