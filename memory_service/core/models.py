"""Domain models: memory records, their scope, relationships.

Pure pydantic, no storage logic. Every record carries its scope, content hash, version, status,
timestamps and actor from day one (ROADMAP: no migration when governance features arrive).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def utcnow() -> datetime:
    """Timezone-aware now, the only clock the core reads."""
    return datetime.now(UTC)


def content_hash(text: str) -> str:
    """SHA-256 of the content, hex: the dedupe key of seed 004 (FR-032)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SeedMemoryType(StrEnum):
    """The eight memory types of seed 001: the ``type`` enum memory_add publishes, seed-exact."""

    REQUIREMENTS = "requirements"
    DESIGN = "design"
    CODE_PATTERN = "code_pattern"
    COMPONENT = "component"
    FUNCTION = "function"
    TEST_HISTORY = "test_history"
    SESSION = "session"
    USER_PREFERENCE = "user_preference"


class MemoryType(StrEnum):
    """Every accepted type: seed 001's eight, seed 002's kinds (problem ... change), seed 004's
    knowledge types (a seed-004 ``decision`` is a ``design`` with ``metadata.design_type`` ADR) and
    ``note``, where seed 003's free-form kinds that are none of these are kept (the kind itself is
    the record's ``label``).

    ``solution`` and ``failed_tactic`` must link to a ``problem`` (seed 002: links.problem_id).
    """

    REQUIREMENTS = "requirements"
    DESIGN = "design"
    CODE_PATTERN = "code_pattern"
    COMPONENT = "component"
    FUNCTION = "function"
    TEST_HISTORY = "test_history"
    SESSION = "session"
    USER_PREFERENCE = "user_preference"
    PROBLEM = "problem"
    SOLUTION = "solution"
    FAILED_TACTIC = "failed_tactic"
    FACT = "fact"
    PREFERENCE = "preference"
    CHANGE = "change"
    SECTION = "section"
    RUNBOOK = "runbook"
    ISSUE = "issue"
    TODO = "todo"
    RELEASE_NOTE = "release_note"
    DDL = "ddl"
    PR_CONTEXT = "pr_context"
    NOTE = "note"


SEED_002_KINDS = ("problem", "solution", "failed_tactic", "fact", "preference", "change")
PROBLEM_LINKED_KINDS = ("solution", "failed_tactic")


class MemoryStatus(StrEnum):
    """Lifecycle of a record; deleted records stay stored (soft delete)."""

    ACTIVE = "active"
    DELETED = "deleted"
    # Hidden from reads like a deleted record, but restorable (seed 002 ``archive_state``).
    ARCHIVED = "archived"


class Scope(BaseModel):
    """Where a memory belongs: the six levels of seed 004 (FR-017); unknown levels stay None."""

    model_config = ConfigDict(frozen=True)

    org: str | None = None
    project: str | None = None
    service: str | None = None
    branch: str | None = None
    sprint: str | None = None
    tenant: str | None = None


class Relationship(BaseModel):
    """A typed, directed edge between two entities (memories, files, functions...)."""

    type: str
    source_id: str
    target_id: str
    properties: dict[str, Any] = Field(default_factory=dict)


class StaleMark(BaseModel):
    """Why a memory may no longer match the code it cites: set when the indexer finds a cited
    function, class or file changed or gone; cleared by the next memory_update."""

    reason: str = Field(
        description="What changed, in words, e.g. 'function charge (shop/billing.py) changed'"
    )
    code_ids: list[str] = Field(description="The cited code units or file paths that changed or vanished")
    at: datetime


class MemoryRecord(BaseModel):
    """A stored memory: content + type-specific metadata + bookkeeping."""

    id: str
    type: str
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None
    tags: list[str] = Field(default_factory=list)
    # The kind a compatibility profile stored it as when ``type`` cannot say it (seed 003's
    # free-form kinds, kept as type ``note``); None: the type is the kind.
    label: str | None = None
    scope: Scope = Field(default_factory=Scope)
    content_hash: str
    version: int = 1
    status: MemoryStatus = MemoryStatus.ACTIVE
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None
    actor: str = "agent"
    # Lifecycle (seed 004 FR-041): the TTL policy and when the record expires (None: never, or not
    # yet known, e.g. PR30d before the PR is merged). Expired records are never returned.
    ttl_policy: str = "NONE"
    expires_at: datetime | None = None
    # What makes two stores the same one (core/write/dedupe.py): the caller's idempotency key, or the
    # synthesised {kind, scope, source, SHA-256 of the normalised content}.
    dedupe_key: str | None = None
    embedding_model: str | None = None
    # True while the record has no dense vector (no model was loaded when it was written);
    # it is still found by lexical search, and an embedding refresh fills it in later.
    embedding_pending: bool = False
    # Set when code this memory cites changed or vanished; None while it is fresh.
    stale: StaleMark | None = None
    # Edges removed by a soft delete, kept so that nothing is lost and a restore can replay them.
    removed_relationships: list[Relationship] = Field(default_factory=list)

    @property
    def is_active(self) -> bool:
        return self.status is MemoryStatus.ACTIVE

    def embedding_text(self) -> str:
        """The text that is embedded: see :func:`embedding_text`."""
        return embedding_text(self.title, self.content)


def embedding_text(title: str | None, content: str) -> str:
    """The text a memory's vectors come from: title (when not already the first line) and content."""
    if title and not content.startswith(title):
        return f"{title}\n{content}"
    return content


def derive_title(content: str, metadata: dict[str, Any]) -> str:
    """A short title: metadata's title/name if given, else the first line of the content."""
    for key in ("title", "name", "pattern_name", "test_name", "component_name", "key"):
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    first_line = content.strip().splitlines()[0] if content.strip() else ""
    return first_line[:120]
