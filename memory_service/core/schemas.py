"""Inputs and outputs of the seed-001 memory tools, as pydantic models.

The published JSON schemas are generated from these models (see ``tools/schema.py``) and hold
every name, type, enum, bound, default and required list that seed 001 gives; where seed 001 is
silent we may add optional fields or bounds (``docs/tools.md`` lists them). Unknown fields are
refused (``extra="forbid"``) so that a misspelt argument is an error, not silently ignored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import JsonDict

from memory_service.core.models import MemoryType

UUID_FORMAT: JsonDict = {"format": "uuid"}
DATETIME_FORMAT: JsonDict = {"format": "date-time"}
UUID_ITEMS: JsonDict = {"items": {"type": "string", "format": "uuid"}}


def _enum(*values: str) -> JsonDict:
    return {"enum": list(values)}


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Output(BaseModel):
    model_config = ConfigDict(extra="allow")


# --------------------------------------------------------------------------- memory_add


class RelationshipInput(_Input):
    type: str = Field(min_length=1, max_length=64)
    target_id: str = Field(json_schema_extra=UUID_FORMAT)


class MemoryAddInput(_Input):
    type: MemoryType
    content: str = Field(min_length=1, max_length=100_000)
    metadata: dict[str, Any] | None = Field(default=None, description="Type-specific metadata")
    relationships: list[RelationshipInput] | None = None


class ConflictItem(_Output):
    memory_id: str
    similarity: float


class MemoryAddOutput(_Output):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)
    status: str = Field(json_schema_extra=_enum("created"))
    conflicts: list[ConflictItem] = Field(default_factory=list)


# --------------------------------------------------------------------------- memory_update


class MemoryUpdateInput(_Input):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)
    content: str | None = Field(default=None, min_length=1, max_length=100_000)
    metadata: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _something_to_change(self) -> MemoryUpdateInput:
        if self.content is None and self.metadata is None:
            raise ValueError("nothing to update: give 'content' and/or 'metadata'")
        return self


class MemoryUpdateOutput(_Output):
    memory_id: str
    status: str = Field(json_schema_extra=_enum("updated"))
    updated_fields: list[str]


# --------------------------------------------------------------------------- memory_delete / get


class MemoryIdInput(_Input):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)


class MemoryDeleteOutput(_Output):
    status: str = Field(json_schema_extra=_enum("deleted"))
    relationships_removed: int
    warnings: list[str] = Field(default_factory=list)


class MemoryGetInput(_Input):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)
    include_relationships: bool = False


class MemoryGetOutput(_Output):
    memory: dict[str, Any] = Field(description="Full memory object with all fields")
    relationships: list[dict[str, Any]] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    truncated: bool = False


# --------------------------------------------------------------------------- memory_bulk_add


class BulkItemSchema(_Input):
    """Published shape of one bulk item; each item is validated on its own (partial success)."""

    type: str
    content: str
    metadata: dict[str, Any] | None = None
    relationships: list[RelationshipInput] | None = None


class MemoryBulkAddInput(_Input):
    memories: list[BulkItemSchema] = Field(max_length=100)


class MemoryBulkAddRequest(_Input):
    """What is validated for the whole call: a list of at most 100 objects."""

    memories: list[dict[str, Any]] = Field(max_length=100)


class BulkError(_Output):
    index: int
    error: str
    code: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class MemoryBulkAddOutput(_Output):
    created: int
    memory_ids: list[str] = Field(json_schema_extra=UUID_ITEMS)
    errors: list[BulkError] = Field(default_factory=list)


# --------------------------------------------------------------------------- memory_search


class TimeRange(_Input):
    start: datetime | None = Field(default=None, json_schema_extra=DATETIME_FORMAT)
    end: datetime | None = Field(default=None, json_schema_extra=DATETIME_FORMAT)

    @field_validator("start", "end")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        if v is not None and v.tzinfo is None:
            from datetime import UTC

            return v.replace(tzinfo=UTC)
        return v

    @model_validator(mode="after")
    def _ordered(self) -> TimeRange:
        if self.start and self.end and self.start > self.end:
            raise ValueError("time_range.start is after time_range.end")
        return self


class MemorySearchInput(_Input):
    query: str = Field(min_length=1)
    memory_types: list[str] | None = None
    time_range: TimeRange | None = None
    limit: int = Field(default=10, ge=1, le=100)
    min_similarity: float = Field(default=0, ge=0, le=1)


class SearchResult(_Output):
    memory_id: str
    type: str
    content: str
    similarity: float
    relevance_score: float
    metadata: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None
    created_at: str | None = None


class MemorySearchOutput(_Output):
    results: list[SearchResult]
    total: int
    query_time_ms: int
    search_mode: str = Field(
        default="semantic", description="semantic (dense + lexical) or lexical (no embedding model loaded)"
    )
    model_status: str = Field(default="ready", description="ready, or why the embedding model is unavailable")
    warnings: list[str] = Field(default_factory=list)
    truncated: bool = False
