"""Maintenance tools (seed 001 §4.2.5): normalize_memory starts the job, normalize_status follows it."""

from __future__ import annotations

from memory_service.core.maintenance.normalize.schemas import (
    NormalizeMemoryInput,
    NormalizeStarted,
    NormalizeStatusInput,
    NormalizeStatusOutput,
)
from memory_service.tools.index import wait_for_job
from memory_service.tools.registry import READ_ONLY, UPDATE, ToolSpec

NORMALIZE_TOOLS = [
    ToolSpec(
        name="normalize_memory",
        title="Normalize memory",
        description=(
            "Put the memory stores back in order as a background job; returns a job_id at once "
            "(follow it with normalize_status, or pass wait=true). Merges exact and near-duplicate "
            "memories of one type and scope (the survivor keeps what it absorbed; nothing is deleted "
            "for good), removes graph nodes without a memory, re-embeds memories whose model or text "
            "changed, repairs missing graph nodes and context vectors, flags memories citing code "
            "that is gone. options.dry_run=true reports what it would do and changes nothing."
        ),
        schema_model=NormalizeMemoryInput,
        output_model=NormalizeStarted,
        handler=lambda s, r: s.normalize.start(r),
        after=wait_for_job,
        annotations=UPDATE,
    ),
    ToolSpec(
        name="normalize_status",
        title="Normalization status",
        description="Status, phase, progress (0-100), counts so far and estimated remaining time of a "
        "normalize_memory job (job_id). A dry run's stats.planned lists the first planned actions.",
        schema_model=NormalizeStatusInput,
        output_model=NormalizeStatusOutput,
        handler=lambda s, r: s.normalize.status(r),
        annotations=READ_ONLY,
    ),
]
