"""Inputs and outputs of normalize_memory and normalize_status (seed 001 §4.2.5).

The seed's three skip flags are kept as they are; ``dry_run``, ``skip_repair``,
``skip_stale_links`` and the near-duplicate threshold are additions, all off or safe by default.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memory_service.core.code.schemas import WAIT, JobStarted
from memory_service.core.schema_base import UUID_FORMAT, Absent, ToolInput, ToolOutput, absent_when_none

# Near duplicates merge only above this cosine (all-MiniLM-L6-v2): paraphrases of one statement
# score 0.93-0.99, related but distinct statements rarely above 0.9.
DEFAULT_THRESHOLD = 0.95


class NormalizeOptions(ToolInput):
    skip_deduplication: bool = Field(default=False, description="Do not merge duplicate memories")
    skip_orphan_cleanup: bool = Field(
        default=False,
        description="Do not remove graph nodes without a memory (or whose source file left the index)",
    )
    skip_embedding_refresh: bool = Field(
        default=False,
        description="Do not re-embed memories whose model or text changed, or that lack vectors",
    )
    skip_repair: bool = Field(
        default=False,
        description="Do not repair gaps between the stores (missing graph nodes, wrong content hashes)",
    )
    skip_stale_links: bool = Field(
        default=False, description="Do not flag memories whose code_refs cite code that is gone"
    )
    dry_run: bool = Field(
        default=False,
        description="Scan and report what would be done (stats.planned), changing nothing",
    )
    similarity_threshold: float = Field(
        default=DEFAULT_THRESHOLD,
        ge=0.93,  # 'Use PostgreSQL ...' vs 'Use MySQL ...' score 0.917: never below that
        le=1.0,
        description="Cosine above which two memories of one type and scope count as near duplicates",
    )


class NormalizeMemoryInput(ToolInput):
    options: NormalizeOptions = Field(default_factory=NormalizeOptions)
    wait: bool = Field(default=False, description=WAIT)


class NormalizeStarted(JobStarted):
    estimated_duration_minutes: int = Field(description="A rough estimate from the number of memories")
    dry_run: bool = False


class NormalizeStatusInput(ToolInput):
    job_id: str = Field(max_length=64, json_schema_extra=UUID_FORMAT)


class NormalizeStats(ToolOutput):
    """Counts so far; in a dry run, what would be done. Extra keys: per-kind details."""

    memories_processed: int = 0
    duplicates_merged: int = 0
    orphans_removed: int = 0
    embeddings_refreshed: int = 0
    exact_duplicates: int = 0
    near_duplicates: int = 0
    dangling_edges_removed: int = 0
    code_orphans_removed: int = 0
    graph_nodes_repaired: int = 0
    content_hashes_fixed: int = 0
    context_vectors_repaired: int = 0
    stale_links_flagged: int = 0
    planned: list[dict[str, Any]] = Field(
        default_factory=list, description="Dry run: the first planned actions (bounded)"
    )
    warnings: list[str] = Field(default_factory=list)


class NormalizeStatusOutput(ToolOutput):
    job_id: str
    status: str
    phase: str
    progress: int
    stats: NormalizeStats
    error: str | Absent = absent_when_none(description="Why the job failed; absent unless it did")
    estimated_remaining_seconds: int | Absent = absent_when_none(
        description="Absent while no estimate can be made yet"
    )
    dry_run: bool = False
    started_at: str | None = None
    finished_at: str | None = None
