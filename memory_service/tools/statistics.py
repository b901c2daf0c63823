"""Maintenance tools that read: memory_statistics (seed 001) and memory_audit (seed 004)."""

from __future__ import annotations

from memory_service.core.maintenance.statistics_schemas import MemoryStatisticsInput, MemoryStatisticsOutput
from memory_service.core.memory.audit_schemas import MemoryAuditInput, MemoryAuditOutput
from memory_service.tools.registry import READ_ONLY, ToolSpec

STATISTICS_TOOLS = [
    ToolSpec(
        name="memory_statistics",
        title="Memory statistics",
        description=(
            "How the store is doing: memories by type (deleted, stale, superseded, waiting for "
            "embeddings), relationships by type, code index totals, storage per store, the graph-sync "
            "backlog (pending, failed), each store's health, running jobs, and live latency since the "
            "server started (memory_search and write p50/p95, per-tool calls and errors, cache hit rate)."
        ),
        schema_model=MemoryStatisticsInput,
        output_model=MemoryStatisticsOutput,
        handler=lambda s, _r: s.statistics.statistics(),
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="memory_audit",
        title="Audit log",
        description=(
            "Who changed what, when: the append-only log of every mutation (create, update, delete, "
            "supersede, utility_vote, mark_stale, import, merge, index_file...). Filter by memory_id "
            "(or any entity_id), operation, actor and time range (since/until, ISO-8601); newest first, "
            "paged with limit and next_cursor."
        ),
        schema_model=MemoryAuditInput,
        output_model=MemoryAuditOutput,
        handler=lambda s, r: s.audit.query(r),
        annotations=READ_ONLY,
    ),
]
