"""memory_search's input and output, as pydantic models (seed 001 §4.2.2, with seed 004's extras).

Generated into the published JSON schema like every tool's (``tools/schema.py``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from memory_service.core.models import StaleMark
from memory_service.core.schema_base import (
    DATETIME_FORMAT,
    MAX_QUERY_CHARS,
    UUID_FORMAT,
    ToolInput,
    ToolOutput,
    UtcDatetime,
)
from memory_service.core.scopes import ScopeInput

SearchMode = Literal["auto", "fast", "deep"]


class TimeRange(ToolInput):
    start: UtcDatetime | None = Field(default=None, json_schema_extra=DATETIME_FORMAT)
    end: UtcDatetime | None = Field(default=None, json_schema_extra=DATETIME_FORMAT)

    @model_validator(mode="after")
    def _ordered(self) -> TimeRange:
        if self.start and self.end and self.start > self.end:
            raise ValueError("time_range.start is after time_range.end")
        return self


class MemorySearchInput(ToolInput):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    memory_types: list[str] | None = None
    scope: ScopeInput | None = Field(
        default=None,
        description="Widen or move the read (seed 004): by default only the caller's org, project and "
        "branch (and project-wide memories) are searched; {'branch': 'main'} reads main, "
        "{'branch': '*'} every branch, {'project': '*'} every project",
    )
    time_range: TimeRange | None = None
    tags: list[str] | None = Field(
        default=None, max_length=32, description="Only memories carrying one of these tags (metadata.tags)"
    )
    limit: int = Field(default=10, ge=1, le=100)
    min_similarity: float = Field(default=0, ge=0, le=1)
    mode: SearchMode = Field(
        default="auto",
        description="auto (route by query shape), fast (lexical, cached) or deep (dense + lexical + "
        "graph expansion + fuzzy terms)",
    )
    include_superseded: bool = Field(
        default=False, description="Also return facts replaced by memory_supersede (hidden by default)"
    )
    semantic_hops: int | None = Field(
        default=None,
        ge=0,
        le=3,
        description="Feedback rounds that search again from the best hits (seed 002); default 0 "
        "(auto), 3 (deep), 0 (fast)",
    )
    read: Literal["targeted", "ambient"] = Field(
        default="targeted",
        description="targeted: a mid-task lookup; ambient: a session-start pack that favours "
        "preferences, facts and decisions, adds linked memories and mixes kinds",
    )
    token_budget: int | None = Field(
        default=None,
        ge=100,
        le=50_000,
        description="Pack results in rank order up to about this many tokens (4 characters each); "
        "ambient reads default to 2000",
    )
    problem_id: str | None = Field(
        default=None,
        json_schema_extra=UUID_FORMAT,
        description="The problem this read is for: utility votes cast for it count (memory_feedback); "
        "default: the best-ranked problem among the candidates, else every vote",
    )
    include_problem_links: bool | None = Field(
        default=None,
        description="true: each problem in the results is followed by its solutions and failed tactics, "
        "and each solution or failed tactic by its problem (route_used 'graph'; they count toward "
        "limit); false: never added; default: ambient reads add linked memories, targeted ones do not",
    )
    include_fact_update_links: bool | None = Field(
        default=None,
        description="true: each fact or change in the results is followed by its fact-update chain "
        "neighbours (memory_supersede: replaced and replacing facts, the change; superseded ones "
        "too); false: never added; default as include_problem_links",
    )


class SearchResult(ToolOutput):
    memory_id: str
    type: str
    content: str
    similarity: float = Field(description="Dense cosine similarity 0-1 (normalised BM25 in lexical mode)")
    relevance_score: float = Field(description="The re-scored rank value (see memory_explain)")
    metadata: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None
    created_at: str | None = None
    route_used: str | None = Field(default=None, description="semantic, fts or graph: how the hit was found")
    confidence: float | None = Field(default=None, description="0-1: how sure this hit is a match")
    stale: StaleMark | None = Field(
        default=None,
        description="Set when code this memory cites changed or vanished; memory_update clears it",
    )


class Suggestion(ToolOutput):
    kind: str = Field(description="broaden_types, broaden_time, deep_mode, related_terms or rephrase")
    message: str
    arguments: dict[str, Any] | None = Field(default=None, description="memory_search arguments to try")


class MemorySearchOutput(ToolOutput):
    pack_tokens: int | None = Field(default=None, description="Estimated tokens of the results when packed")
    results: list[SearchResult]
    total: int
    query_time_ms: int
    search_mode: str = Field(
        default="semantic", description="semantic (dense + lexical) or lexical (no embedding model loaded)"
    )
    model_status: str = Field(default="ready", description="ready, or why the embedding model is unavailable")
    warnings: list[str] = Field(default_factory=list)
    truncated: bool = False
    mode: str = Field(default="auto", description="The mode that ran: auto, fast or deep")
    route: str = Field(
        default="general", description="Query route: change_first, code_first, design_first or general"
    )
    cached: bool = Field(default=False, description="fast mode: served from the result cache")
    suggestions: list[Suggestion] = Field(
        default_factory=list, description="Given when fewer than 3 good results were found"
    )
