"""Inputs and outputs of the seed-001 memory tools, as pydantic models.

The published JSON schemas are generated from these models (see ``tools/schema.py``) and hold
every name, type, enum, bound, default and required list that seed 001 gives; where seed 001 is
silent we may add optional fields or bounds (``docs/tools.md`` lists them). Unknown fields are
refused (``extra="forbid"``) so that a misspelt argument is an error, not silently ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic.json_schema import JsonDict

from memory_service.core.models import MemoryType, SeedMemoryType
from memory_service.core.schema_base import (
    UUID_FORMAT,
    NonBlank,
    ToolInput,
    ToolOutput,
    enum_of,
)
from memory_service.core.scopes import ScopeInput

UUID_ITEMS: JsonDict = {"items": {"type": "string", "format": "uuid"}}


TtlPolicyName = Literal["PR30d", "BRANCH90d", "NONE"]


# --------------------------------------------------------------------------- memory_add


class RelationshipInput(ToolInput):
    type: str = Field(min_length=1, max_length=64)
    target_id: str = Field(json_schema_extra=UUID_FORMAT)


# The types memory_add accepts beyond the eight its published enum lists (seed 001's).
MORE_TYPES = [t.value for t in MemoryType if t.value not in set(SeedMemoryType)]


class MemoryAddSchema(ToolInput):
    """The published memory_add input, seed-exact: the ``type`` enum lists seed 001's eight."""

    type: SeedMemoryType = Field(
        description=f"Seed 001 types; also accepted: {', '.join(MORE_TYPES)} (solution and "
        "failed_tactic need metadata.problem_id of a problem memory)"
    )
    content: NonBlank = Field(min_length=1, max_length=100_000)
    metadata: dict[str, Any] | None = Field(default=None, description="Type-specific metadata")
    relationships: list[RelationshipInput] | None = None
    scope: ScopeInput | None = Field(
        default=None,
        description="Where the memory belongs (seed 004): levels given here override the server's "
        "(git remote/root/branch, MEMORY_* settings); branch null makes it project-wide",
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="A store with a key an active memory of this project already holds writes nothing "
        "and answers skipped_dedupe with that memory's id; without a key, the same type, scope, "
        "metadata.source and (normalised) content count as the same store",
    )
    ttl_policy: TtlPolicyName | None = Field(
        default=None,
        description="PR30d (30 days after metadata.pr_merged_at/pr_closed_at), BRANCH90d (90 days) or "
        "NONE; default by type (change, test_history, todo: BRANCH90d; pr_context: PR30d; others NONE)",
    )


class MemoryAddInput(MemoryAddSchema):
    """What memory_add and each memory_bulk_add item validate: every accepted type."""

    type: MemoryType  # type: ignore[assignment]


class ConflictItem(ToolOutput):
    memory_id: str
    similarity: float


class MemoryAddOutput(ToolOutput):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)
    status: str = Field(
        json_schema_extra=enum_of("created", "skipped_dedupe"),
        description="created, or skipped_dedupe: an active memory is this store already (memory_id is "
        "its id) and nothing was written",
    )
    conflicts: list[ConflictItem] = Field(default_factory=list)
    redacted_preview: str | None = Field(
        default=None, description="The stored text's start, with secrets and personal data masked"
    )
    secrets_redacted: dict[str, int] = Field(
        default_factory=dict, description="Secrets masked before storing, counted by kind"
    )
    scope: dict[str, Any] | None = Field(default=None, description="The scope the memory was stored with")
    expires_at: str | None = Field(default=None, description="When the memory expires (its TTL policy)")
    warnings: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- memory_update

EXPECTED_VERSION_HELP = (
    "Optional optimistic check: the version you last read (memory_get). If the memory has changed "
    "since, nothing is written and CON_VERSION_MISMATCH is returned"
)


class MemoryUpdateInput(ToolInput):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)
    content: NonBlank | None = Field(default=None, min_length=1, max_length=100_000)
    metadata: dict[str, Any] | None = None
    expected_version: int | None = Field(default=None, ge=1, description=EXPECTED_VERSION_HELP)
    archived: bool | None = Field(
        default=None,
        description="true archives (hidden from search, restorable), false restores; given alone "
        "(without content or metadata). memory_get still shows an archived memory",
    )

    @model_validator(mode="after")
    def _something_to_change(self) -> MemoryUpdateInput:
        if self.archived is not None and (self.content is not None or self.metadata is not None):
            raise ValueError(
                "give 'archived' on its own: archiving or restoring does not edit content or metadata "
                "(make two calls)"
            )
        if self.content is None and self.metadata is None and self.archived is None:
            raise ValueError("nothing to update: give 'content' and/or 'metadata', or 'archived'")
        return self


class MemoryUpdateOutput(ToolOutput):
    memory_id: str
    status: str = Field(json_schema_extra=enum_of("updated"))
    updated_fields: list[str]


# --------------------------------------------------------------------------- memory_delete / get


class MemoryIdInput(ToolInput):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)


class MemoryDeleteInput(MemoryIdInput):
    expected_version: int | None = Field(default=None, ge=1, description=EXPECTED_VERSION_HELP)


class MemoryDeleteOutput(ToolOutput):
    status: str = Field(json_schema_extra=enum_of("deleted"))
    relationships_removed: int
    warnings: list[str] = Field(default_factory=list)


class MemoryGetInput(ToolInput):
    memory_id: str = Field(json_schema_extra=UUID_FORMAT)
    include_relationships: bool = False


class MemoryGetOutput(ToolOutput):
    memory: dict[str, Any] = Field(description="Full memory object with all fields")
    relationships: list[dict[str, Any]] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    truncated: bool = False


# --------------------------------------------------------------------------- memory_bulk_add


class BulkItemSchema(ToolInput):
    """Published shape of one bulk item; each item is validated on its own (partial success)."""

    type: str
    content: str
    metadata: dict[str, Any] | None = None
    relationships: list[RelationshipInput] | None = None
    scope: ScopeInput | None = None
    idempotency_key: str | None = None
    ttl_policy: TtlPolicyName | None = None


class MemoryBulkAddInput(ToolInput):
    memories: list[BulkItemSchema] = Field(max_length=100)


class MemoryBulkAddRequest(ToolInput):
    """What is validated for the whole call: a list of at most 100 objects."""

    memories: list[dict[str, Any]] = Field(max_length=100)


class BulkError(ToolOutput):
    index: int
    error: str
    code: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class BulkSkipped(ToolOutput):
    index: int
    memory_id: str
    status: str = Field(default="skipped_dedupe", json_schema_extra=enum_of("skipped_dedupe"))


class MemoryBulkAddOutput(ToolOutput):
    created: int
    memory_ids: list[str] = Field(json_schema_extra=UUID_ITEMS)
    errors: list[BulkError] = Field(default_factory=list)
    skipped: list[BulkSkipped] = Field(
        default_factory=list,
        description="Items that repeat an active memory (or an earlier item): nothing written for them",
    )
    warnings: list[str] = Field(default_factory=list)
