"""memory_explain input and output, exactly as seed 000's contract lays them out.

Differences from the contract, both forced by this service: ``ids`` name our memory ids (UUID
strings; integers, as the contract types ids, are taken but name no memory here, so each is a
non-fatal ``INVALID_ARGUMENT``), and ``kind`` is the memory type. Every field the contract shows is always
present: unknown numbers are ``null``, missing arrays are ``[]`` (seed 000, deterministic rules).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from memory_service.core.schema_base import MAX_QUERY_CHARS, ToolInput, ToolOutput


def _explain_id(value: Any) -> str | int:
    """A memory id as given: a string, or an integer as seed 000 types ids (never a bool)."""
    if isinstance(value, str):
        if len(value) > MAX_QUERY_CHARS:
            raise PydanticCustomError(
                "string_too_long",
                "String should have at most {max_length} characters",
                {"max_length": MAX_QUERY_CHARS},
            )
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise PydanticCustomError("string_type", "Input should be a memory id: a UUID string (or an integer)")


# One entry of ids: validated as itself (a str | int union would name its member in error paths).
ExplainId = Annotated[
    str | int,
    PlainValidator(_explain_id),
    WithJsonSchema({"type": ["string", "integer"], "format": "uuid"}),
]


class MemoryExplainInput(ToolInput):
    query: str | None = Field(default=None, max_length=10_000, description="Explain how this query ranks")
    ids: list[ExplainId] | None = Field(
        default=None,
        max_length=100,
        description="Memory ids (UUIDs) to explain; deduped in first-seen order. Integers (seed 000's "
        "type) are accepted and reported in errors: memory ids here are UUIDs",
    )
    project: str | None = Field(default=None, max_length=200, description="Only memories of this project")
    include_pack_context: bool = False
    limit: int = Field(default=10, ge=1, le=100, description="Query-derived items only (not explicit ids)")


class Retrieval(ToolOutput):
    source: Literal["query", "id_lookup", "query+id_lookup"]
    rank: int | None = Field(description="Position among the query's results; null for id lookups alone")


class ScoreView(ToolOutput):
    total: float | None
    components: dict[str, float | None] = Field(
        description="base, recency, kind_bonus, scope, citations, utility, graph: null when not derivable"
    )


class Matches(ToolOutput):
    query_terms: list[str] = Field(default_factory=list)
    project_match: bool


class PackContext(ToolOutput):
    """Where the item would sit in a context pack built from this request, and what it would cost."""

    in_pack: bool
    pack_position: int | None
    token_estimate: int
    snippet: str
    relationships: list[dict[str, Any]]


class ExplainItem(ToolOutput):
    id: str
    kind: str
    title: str | None
    created_at: str
    project: str | None
    retrieval: Retrieval
    score: ScoreView
    matches: Matches
    pack_context: PackContext | None = None


class ExplainError(ToolOutput):
    code: Literal["INVALID_ARGUMENT", "NOT_FOUND", "PROJECT_MISMATCH"]
    message: str
    field: str | None = None


class ExplainMetadata(ToolOutput):
    query: str | None
    project: str | None
    requested_ids_count: int
    returned_items_count: int
    include_pack_context: bool


class MemoryExplainOutput(ToolOutput):
    items: list[ExplainItem] = Field(default_factory=list)
    missing_ids: list[str] = Field(default_factory=list)
    errors: list[ExplainError] = Field(default_factory=list)
    metadata: ExplainMetadata
