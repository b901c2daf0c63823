"""memory_explain (seed 000): per-memory retrieval rationale, the same numbers memory_search ranks by."""

from __future__ import annotations

from memory_service.core.search.explain_schemas import MemoryExplainInput, MemoryExplainOutput
from memory_service.tools.registry import READ_ONLY, ToolSpec

EXPLAIN_TOOLS = [
    ToolSpec(
        name="memory_explain",
        title="Explain memory ranking",
        description=(
            "Explain why memories rank where they do: for a query (its top `limit` results, as "
            "memory_search mode=auto ranks them) and/or explicit memory ids. Each item gives the "
            "score total and its components (base relevance, recency, kind_bonus, scope, citations, "
            "utility, graph; null when not derivable), the query terms it matches and whether it is "
            "in the project. Unknown ids go to missing_ids; problems are listed in errors "
            "(INVALID_ARGUMENT, NOT_FOUND, PROJECT_MISMATCH) without failing the call. "
            "include_pack_context=true adds snippet, token estimate, pack position and links."
        ),
        schema_model=MemoryExplainInput,
        output_model=MemoryExplainOutput,
        handler=lambda s, r: s.explain.explain(r),
        annotations=READ_ONLY,
    ),
]
