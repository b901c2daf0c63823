"""Seed 003 ("cortex-os"): the five tools' inputs and outputs, with the seed's own field names.

Only the rules seed 003 states live here (its kind pattern, its 8,192-character text, its tag and
metadata limits, its id pattern); everything else a write must pass (type-specific metadata,
secrets, numbers a store can hold) is checked by the services, as for every other profile.
Messages are written for the seed's ``details`` strings ("text: Text content cannot be empty").
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from memory_service.core.errors import SecurityError, ValidationError
from memory_service.core.guards import UNSAFE_KEYS, all_keys, clean_tags, nesting_depth
from memory_service.core.schema_base import (
    DATETIME_FORMAT,
    MAX_QUERY_CHARS,
    ToolInput,
    ToolOutput,
)

MAX_KIND_CHARS = 32
KIND_PATTERN = r"^[a-zA-Z0-9._-]+$"
MAX_TEXT_CHARS = 8_192
MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_METADATA_KEYS = 50
MAX_METADATA_DEPTH = 4
MAX_METADATA_BYTES = 8_192
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
ID_PATTERN = r"^[a-zA-Z0-9._:-]+$"
MIN_ID_CHARS = 3
MAX_ID_CHARS = 128
# Where seed 003's tags are kept: the services index ``metadata.tags`` as the record's tags, so a
# caller's own metadata may not use that key for something else.
TAGS_KEY = "tags"


# --------------------------------------------------------------------------- field rules


def seed_text(value: str) -> str:
    """Trimmed, non-empty, at most 8,192 characters (counted after trimming)."""
    text = value.strip()
    if not text:
        raise ValueError("Text content cannot be empty")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"Text content is {len(text)} characters; the limit is {MAX_TEXT_CHARS}")
    return text


def seed_tags(value: list[str]) -> list[str]:
    """Trimmed and unique (the services' own tag rule: at most 32 of at most 64 characters)."""
    try:
        return clean_tags(value, field="tags")
    except ValidationError as exc:  # reported with the other problems of the call
        raise ValueError(exc.message) from None


def seed_metadata(value: dict[str, Any]) -> dict[str, Any]:
    """A plain object of at most 50 keys, 4 levels and 8 KB of JSON, without a ``tags`` key."""
    if TAGS_KEY in value:
        raise ValueError("Metadata cannot hold 'tags': give them in the 'tags' field")
    if len(value) > MAX_METADATA_KEYS:
        raise ValueError(f"Metadata has {len(value)} keys; the limit is {MAX_METADATA_KEYS}")
    depth = nesting_depth(value)
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"Metadata is nested {depth} levels deep; the limit is {MAX_METADATA_DEPTH}")
    try:
        encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        raise ValueError(
            "Metadata must be plain JSON (strings, numbers, booleans, null, lists, objects)"
        ) from None
    size = len(encoded.encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"Metadata is {size} bytes serialized; the limit is {MAX_METADATA_BYTES}")
    return value


def refuse_unsafe_keys(arguments: Any) -> Any:
    """Seed 003's security_error: prototype-pollution keys anywhere in ``metadata``. Checked before
    anything else, so an attack is reported as one whatever else is wrong with the call."""
    metadata = arguments.get("metadata") if isinstance(arguments, dict) else None
    if not isinstance(metadata, dict):
        return arguments
    bad = sorted({k for k in all_keys(metadata) if k.startswith("__") or k in UNSAFE_KEYS})
    if bad:
        raise SecurityError(
            f"Metadata contains unsafe keys: {', '.join(bad)}",
            code="SEC_UNSAFE_KEY",
            details={
                "field": "metadata",
                "keys": bad,
                "problems": [f"metadata.{key}: Unsafe key (prototype pollution)" for key in bad],
            },
            suggestion="Remove or rename keys that start with '__' or are named 'constructor' or "
            "'prototype' (refused at any depth).",
        )
    return arguments


def _cap_limit(value: int) -> int:
    return min(value, MAX_LIMIT)


Kind = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_KIND_CHARS,
        pattern=KIND_PATTERN,
        description="1-32 characters of letters, digits, '.', '_' or '-' (e.g. note, meeting-notes)",
    ),
]
Text = Annotated[
    str,
    AfterValidator(seed_text),
    Field(json_schema_extra={"minLength": 1, "maxLength": MAX_TEXT_CHARS}),
]
Tags = Annotated[
    list[Annotated[str, Field(json_schema_extra={"maxLength": MAX_TAG_CHARS})]],
    AfterValidator(seed_tags),
    Field(json_schema_extra={"maxItems": MAX_TAGS}),
]
Metadata = Annotated[dict[str, Any], AfterValidator(seed_metadata)]
MemoryId = Annotated[
    str,
    Field(
        min_length=MIN_ID_CHARS,
        max_length=MAX_ID_CHARS,
        pattern=ID_PATTERN,
        description="The id memory_store returned",
    ),
]

TEXT_HELP = "Trimmed, non-empty, at most 8,192 characters"
TAGS_HELP = "Trimmed and de-duplicated; at most 32 tags of at most 64 characters"
METADATA_HELP = (
    "A plain object: at most 50 keys, 4 levels deep and 8 KB serialized; keys starting with '__', "
    "'constructor' and 'prototype' are refused (security_error); tags go in 'tags', not here"
)


class CortexInput(ToolInput):
    """Seed 003 inputs: unsafe metadata keys are refused before any other rule runs."""

    @model_validator(mode="before")
    @classmethod
    def _security_first(cls, data: Any) -> Any:
        return refuse_unsafe_keys(data)


# --------------------------------------------------------------------------- inputs


class StoreInput(CortexInput):
    kind: Kind
    text: Text = Field(description=TEXT_HELP)
    tags: Tags = Field(default_factory=list, description=TAGS_HELP)
    metadata: Metadata | None = Field(default=None, description=METADATA_HELP)


class RetrieveInput(CortexInput):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to search for")
    limit: Annotated[int, AfterValidator(_cap_limit)] = Field(
        default=DEFAULT_LIMIT, ge=1, description="A positive integer, default 10; above 100 reads as 100"
    )
    kind: Kind | None = Field(default=None, description="Only memories of this kind")
    tags: Tags = Field(default_factory=list, description="Only memories carrying one of these tags")

    @model_validator(mode="after")
    def _query_says_something(self) -> RetrieveInput:
        if not self.query.strip():
            raise ValueError("Query cannot be empty")
        return self


class UpdateInput(CortexInput):
    id: MemoryId
    text: Text | None = Field(default=None, description=f"Replacement text. {TEXT_HELP}")
    tags: Tags | None = Field(default=None, description=f"Replacement tags. {TAGS_HELP}")
    metadata: Metadata | None = Field(default=None, description=f"Replacement metadata. {METADATA_HELP}")

    @model_validator(mode="after")
    def _something_to_change(self) -> UpdateInput:
        if self.text is None and self.tags is None and self.metadata is None:
            raise ValueError("At least one of text, tags or metadata must be provided")
        return self


class DeleteInput(CortexInput):
    id: MemoryId


class StatsInput(CortexInput):
    includeDetails: bool = Field(default=False, description="Add backend diagnostics under 'details'")


class RawArguments(BaseModel):
    """What the registry hands the handlers: the arguments as sent. The seed's rules run in the
    handler (``parse``), so that every problem of a call is listed in ``details``."""

    model_config = ConfigDict(extra="allow")

    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


# --------------------------------------------------------------------------- outputs

ISO_TIME = {**DATETIME_FORMAT, "description": "ISO-8601 UTC with milliseconds"}


class StoreData(ToolOutput):
    stored: bool = Field(description="True: the text is stored under 'id' (an identical store reuses it)")
    id: str
    kind: str
    tags: list[str]
    textLength: int = Field(description="Characters of the stored text")
    metadataKeys: int = Field(description="Top-level metadata keys stored")
    redactedPreview: str = Field(description="The stored text's start: secrets and personal data masked")


class RetrieveFilters(ToolOutput):
    kind: str | None
    tags: list[str]


class RetrieveResult(ToolOutput):
    id: str
    kind: str
    text: str
    score: float = Field(description="The engine's relevance score; results come best first")
    tags: list[str]
    createdAt: str = Field(json_schema_extra=ISO_TIME)


class RetrieveData(ToolOutput):
    query: str
    filters: RetrieveFilters
    results: list[RetrieveResult]
    totalFound: int


class UpdateChanges(ToolOutput):
    text: bool
    tags: bool
    metadata: bool


class UpdateSnapshot(ToolOutput):
    textPreview: str
    textLength: int
    metadataKeys: int


class UpdateData(ToolOutput):
    id: str
    updated: bool = Field(description="False when the memory already held what was sent")
    changes: UpdateChanges = Field(description="Which parts changed")
    data: UpdateSnapshot
    updatedAt: str = Field(json_schema_extra=ISO_TIME)


class DeleteData(ToolOutput):
    id: str
    deleted: bool
    deletedAt: str = Field(json_schema_extra=ISO_TIME)


class StatsDetails(ToolOutput):
    storageBackend: str
    indexedFields: list[str]
    averageItemSize: float = Field(description="totalSize / totalItems")


class StatsData(ToolOutput):
    totalItems: int = Field(description="Active memories")
    totalSize: int = Field(description="Bytes (UTF-8) of their text")
    itemsByKind: dict[str, int]
    lastActivity: str | None = Field(
        json_schema_extra=ISO_TIME, description="The latest store, update or delete; null when none"
    )
    details: StatsDetails | None = Field(
        default=None, exclude_if=lambda v: v is None, description="Only with includeDetails: true"
    )
