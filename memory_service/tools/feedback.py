"""Seed 002's update operations as tools: utility votes and fact-update chains."""

from __future__ import annotations

from memory_service.core.memory.feedback_schemas import (
    MemoryFeedbackInput,
    MemoryFeedbackOutput,
    MemorySupersedeInput,
    MemorySupersedeOutput,
)
from memory_service.tools.registry import ADDITIVE, DESTRUCTIVE_APPEND, ToolSpec

FEEDBACK_TOOLS = [
    ToolSpec(
        name="memory_feedback",
        title="Rate a memory's usefulness",
        description=(
            "Record how useful a memory was for a problem: vote in [-1, 1] (1 = it solved it, "
            "-1 = it misled). problem_id is the 'problem' memory you were working on. Votes are "
            "append-only and their mean lifts or lowers the memory in search ranking. "
            "mode='dry_run' validates and previews without recording."
        ),
        schema_model=MemoryFeedbackInput,
        output_model=MemoryFeedbackOutput,
        handler=lambda s, r: s.feedback.vote(r),
        annotations=ADDITIVE,
        keyed=True,
    ),
    ToolSpec(
        name="memory_supersede",
        title="Supersede a fact",
        description=(
            "When a change in the codebase makes a 'fact' memory untrue: record the change and the "
            "replacement fact, linked to the old fact with SUPERSEDES edges. Give new_fact "
            "{content, metadata} or new_fact_id, and change {content, metadata} or change_id. The "
            "old fact drops out of default memory_search results but stays readable with its chain "
            "(memory_get include_relationships=true). mode='dry_run' previews the chain."
        ),
        schema_model=MemorySupersedeInput,
        output_model=MemorySupersedeOutput,
        handler=lambda s, r: s.supersede.supersede(r),
        annotations=DESTRUCTIVE_APPEND,  # writes new memories, hides the old fact
        keyed=True,
    ),
]
