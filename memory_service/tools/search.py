"""Search tools (seed 001 §4.2.2)."""

from __future__ import annotations

from memory_service.core.schemas import MemorySearchInput, MemorySearchOutput
from memory_service.tools.registry import READ_ONLY, ToolSpec

SEARCH_TOOLS = [
    ToolSpec(
        name="memory_search",
        title="Search memories",
        description=(
            "Semantic search across memories: describe what you need in words. Filter by "
            "memory_types and time_range (on creation time); limit 1-100 (default 10); "
            "min_similarity 0-1 drops weak matches. Results carry similarity and relevance_score; "
            "the response says whether search was semantic or lexical (no embedding model)."
        ),
        schema_model=MemorySearchInput,
        output_model=MemorySearchOutput,
        handler=lambda s, r: s.search.search(r),
        annotations=READ_ONLY,
    ),
]
