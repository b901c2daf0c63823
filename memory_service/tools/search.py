"""Search tools (seed 001 §4.2.2)."""

from __future__ import annotations

from memory_service.core.search.schemas import MemorySearchInput, MemorySearchOutput
from memory_service.tools.registry import READ_ONLY, ToolSpec

SEARCH_TOOLS = [
    ToolSpec(
        name="memory_search",
        title="Search memories",
        description=(
            "Hybrid search across memories: describe what you need in words, or paste an identifier "
            "(PR-123, a file path, a function name, an error). Dense (semantic) and BM25 (exact "
            "terms) results are fused, then re-scored for recency, kind, scope, links and utility "
            "votes (memory_explain shows the breakdown). mode: auto (default; routes by query "
            "shape), fast (lexical only, cached), deep (adds fuzzy terms and linked memories). "
            "Filter by memory_types and time_range (on creation time); limit 1-100 (default 10); "
            "min_similarity 0-1 drops weak matches. Results carry similarity (dense cosine), "
            "relevance_score (the rank), route_used and confidence; fewer than 3 confident results "
            "come with suggestions. Superseded facts are hidden unless include_superseded=true."
        ),
        schema_model=MemorySearchInput,
        output_model=MemorySearchOutput,
        handler=lambda s, r: s.search.search(r),
        annotations=READ_ONLY,
    ),
]
