"""Inputs and outputs of the seed-001 index and code-search tools (§4.2.2-4.2.3)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from memory_service.core.schema_base import (
    DATETIME_FORMAT,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    MAX_QUERY_CHARS,
    UUID_FORMAT,
    Absent,
    ToolInput,
    ToolOutput,
    absent_when_none,
    enum_of,
)

Glob = Annotated[str, Field(max_length=1000)]

WAIT = (
    "Wait for the job to finish before answering (default false: answer at once with the job id). "
    "MCP progress notifications are sent while waiting when the request carries a progressToken."
)


class IndexFileInput(ToolInput):
    file_path: str = Field(min_length=1, max_length=MAX_PATH_CHARS)
    force: bool = False


class IndexFileOutput(ToolOutput):
    status: str = Field(json_schema_extra=enum_of("indexed", "skipped", "unsupported"))
    functions: int
    classes: int
    relationships: int
    file_path: str | None = None
    language: str | None = None
    parse_errors: int = 0
    message: str | None = None


class IndexDirectoryInput(ToolInput):
    directory_path: str = Field(min_length=1, max_length=MAX_PATH_CHARS)
    filters: list[Glob] | None = Field(default=None, max_length=100, description="Glob patterns to include")
    exclude: list[Glob] | None = Field(default=None, max_length=100, description="Glob patterns to exclude")
    wait: bool = Field(default=False, description=WAIT)


class JobStarted(ToolOutput):
    job_id: str = Field(json_schema_extra=UUID_FORMAT)
    status: str = Field(json_schema_extra=enum_of("started"))
    job: dict[str, Any] | None = Field(default=None, description="The finished job's state when wait=true")


class IndexStatusInput(ToolInput):
    job_id: str | None = Field(
        default=None, description="Optional: specific job status", json_schema_extra=UUID_FORMAT
    )


class JobView(ToolOutput):
    job_id: str
    status: str
    progress: int
    done: int = Field(default=0, description="Work done so far, in `unit` (index jobs: bytes of source)")
    total: int = Field(default=0, description="All the work, in `unit`; 0 while unknown")
    unit: str | Absent = absent_when_none(description="What done and total count: bytes")
    stats: dict[str, Any] = Field(default_factory=dict)
    kind: str | None = None
    phase: str | None = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None


class IndexTotals(ToolOutput):
    total_files: int
    total_functions: int
    total_classes: int
    last_indexed: str | Absent = absent_when_none(
        json_schema_extra=DATETIME_FORMAT, description="Absent until something was indexed"
    )
    languages: dict[str, int] = Field(default_factory=dict)


class IndexStatusOutput(ToolOutput):
    job: JobView | Absent = absent_when_none(description="The job job_id names; absent without job_id")
    index: IndexTotals
    recent_jobs: list[JobView] = Field(default_factory=list)


class ReindexInput(ToolInput):
    scope: str = Field(default="changed", json_schema_extra=enum_of("full", "changed"))
    directory_path: str | None = Field(default=None, max_length=MAX_PATH_CHARS)
    wait: bool = Field(default=False, description=WAIT)


class CodeSearchInput(ToolInput):
    query: str = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="Code snippet or natural language description"
    )
    language: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    limit: int = Field(default=10, ge=1, le=50)


class CodeHit(ToolOutput):
    function_id: str
    name: str
    signature: str
    file_path: str
    similarity: float
    docstring: str | None = None
    qualified_name: str | None = None
    kind: str | None = None
    language: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    relevance_score: float | None = None


class CodeSearchOutput(ToolOutput):
    results: list[CodeHit]
    total: int = 0
    query_time_ms: int = 0
    search_mode: str = Field(
        default="hybrid", description="hybrid (dense + BM25), or lexical without a model"
    )
    warnings: list[str] = Field(default_factory=list)


class FindDuplicatesInput(ToolInput):
    code: str = Field(min_length=1, description="Function signature or code")
    language: str | None = Field(default=None, max_length=MAX_NAME_CHARS)
    threshold: float = Field(default=0.85, ge=0.7, le=0.95)
    limit: int = Field(default=5, ge=1, le=20)


class Duplicate(ToolOutput):
    function_id: str
    name: str
    signature: str
    file_path: str
    start_line: int
    similarity: float
    recommendation: str
    match_type: str = Field(default="similar", json_schema_extra=enum_of("exact", "renamed", "similar"))
    end_line: int | None = None


class FindDuplicatesOutput(ToolOutput):
    duplicates: list[Duplicate]
    has_duplicates: bool
    analysed_units: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
