"""Seed 004 ("cortex-find-store") shapes: memory.find and memory.store, and the nine kinds' data.

The tool inputs publish the seed's parameter names exactly (FR-002, FR-003). Each kind's ``data``
model requires exactly the fields FR-008..FR-016 list, with their types and enums; any other data
field is allowed and kept (``extra="allow"``), so an agent can record more than the seed names.
These are shapes only: the store and find orchestration is in :mod:`.find_store`, and the
storage, ranking and governance behind it are the services every profile shares.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memory_service.core.memory.schemas import TtlPolicyName
from memory_service.core.models import StaleMark
from memory_service.core.schema_base import (
    DATETIME_FORMAT,
    MAX_QUERY_CHARS,
    UUID_FORMAT,
    NonBlank,
    ToolInput,
    ToolOutput,
    UtcDatetime,
    enum_of,
)
from memory_service.core.scopes import ScopeInput
from memory_service.core.search.schemas import SearchMode

Kind = Literal[
    "section", "runbook", "change", "issue", "decision", "todo", "release_note", "ddl", "pr_context"
]
KINDS: tuple[str, ...] = get_args(Kind)
StoreStatus = Literal["inserted", "updated", "skipped_dedupe"]
MAX_ITEMS = 100
MAX_KEY_CHARS = 200  # MemoryAddInput.idempotency_key's bound (chunks past the first get a short key)
MAX_TAG_CHARS = 64  # guards.clean_tags' bounds
MAX_TAGS = 32
# error_code (FR-053): the seed's five (FR-054) and what it names no code for (docs/profiles.md).
ERROR_CODES = (
    "MISSING_FIELDS",
    "INVALID_FIELDS",
    "UNKNOWN_FIELDS",
    "TOO_MANY_ITEMS",
    "INVALID_SCOPE",
    "CONFLICT",
    "UNAUTHORIZED",
    "RATE_LIMIT",
    "NOT_FOUND",
    "UNAVAILABLE",
    "INTERNAL",
)

# --------------------------------------------------------------------------- the nine kinds' data


class KindData(BaseModel):
    """Base of the per-kind data: unknown fields are kept; ids and versions given as numbers
    become strings (``"pr_id": 42``), since agents write them either way."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True, coerce_numbers_to_str=True)


def _lower(value: Any) -> Any:
    """Enum values are matched case-insensitively and stored in the seed's (lower-case) spelling."""
    return value.strip().lower() if isinstance(value, str) else value


def _present(value: Any) -> Any:
    """A JSON field the seed requires (``subject_ref``, ``rationale``) must hold something."""
    if value is None or (isinstance(value, str | list | dict) and not value):
        raise ValueError("must not be null or empty")
    return value


class SectionData(KindData):
    """FR-008: a documentation fragment; ``body_md`` or ``body_text`` (long bodies are chunked)."""

    title: NonBlank = Field(description="string")
    body_md: str | None = Field(default=None, description="string (markdown): this or body_text")
    body_text: str | None = Field(default=None, description="string (plain text): this or body_md")

    @model_validator(mode="after")
    def _has_body(self) -> SectionData:
        if not (self.body_md or "").strip() and not (self.body_text or "").strip():
            raise ValueError("give body_md or body_text: a section needs a body")
        return self


class RunbookData(KindData):
    """FR-009: an operational procedure of a service."""

    service: NonBlank = Field(description="string")
    steps: list[Any] = Field(description="array of steps (strings or objects)")


class ChangeData(KindData):
    """FR-010: a code, schema, config, runbook or infra change."""

    change_type: Literal["code", "schema", "config", "runbook", "infra"] = Field(
        description="one of code, schema, config, runbook, infra"
    )
    subject_ref: Any = Field(description="JSON: what changed (a path, a table, {'file': ...})")
    summary: NonBlank = Field(description="string")

    _change_type = field_validator("change_type", mode="before")(_lower)
    _subject = field_validator("subject_ref")(_present)


class IssueData(KindData):
    """FR-011: a record synchronised from an external tracker."""

    tracker: NonBlank = Field(description="string, e.g. github or jira")
    external_id: NonBlank = Field(description="string, the tracker's id, e.g. GH-123")
    title: NonBlank = Field(description="string")
    status: NonBlank = Field(description="string, e.g. open or closed")


class DecisionData(KindData):
    """FR-012: an architecture decision record (stored as a design memory of design_type ADR)."""

    component: NonBlank = Field(description="string")
    status: Literal["proposed", "accepted", "deprecated", "superseded"] = Field(
        description="one of proposed, accepted, deprecated, superseded"
    )
    title: NonBlank = Field(description="string")
    rationale: Any = Field(description="JSON: why (text or a structured object)")
    alternatives: list[Any] = Field(description="array of the alternatives considered")

    _status = field_validator("status", mode="before")(_lower)
    _rationale = field_validator("rationale")(_present)


class TodoData(KindData):
    """FR-013: a cross-session task. ``scope`` here is the todo's level, not the item's scope."""

    scope: Literal["user", "project", "service", "branch"] = Field(
        description="one of user, project, service, branch"
    )
    todo_type: Literal["feature", "bugfix", "ops", "doc"] = Field(
        description="one of feature, bugfix, ops, doc"
    )
    text: NonBlank = Field(description="string")

    _enums = field_validator("scope", "todo_type", mode="before")(_lower)


class ReleaseNoteData(KindData):
    """FR-014: a release's notes."""

    version: NonBlank = Field(description="string, e.g. 1.4.0")
    highlights: list[Any] = Field(description="array of highlights")


class DdlData(KindData):
    """FR-015: a schema definition of an entity."""

    entity: NonBlank = Field(description="string, the table or entity")
    ddl_sql: NonBlank = Field(description="string, the SQL")


class PrContextData(KindData):
    """FR-016: a pull request's analysis; expires 30 days after ``merged_at`` (PR30d)."""

    pr_id: NonBlank = Field(description="string")
    repo: NonBlank = Field(description="string")
    files: list[Any] = Field(description="array (JSON) of the files changed")
    findings: list[Any] = Field(description="array (JSON) of the findings")


KIND_DATA: dict[str, type[KindData]] = {
    "section": SectionData,
    "runbook": RunbookData,
    "change": ChangeData,
    "issue": IssueData,
    "decision": DecisionData,
    "todo": TodoData,
    "release_note": ReleaseNoteData,
    "ddl": DdlData,
    "pr_context": PrContextData,
}


def required_fields(kind: str) -> dict[str, str]:
    """The fields a kind's data must hold, each with what it expects (for errors and the schema).
    A section's body is required as one of two fields, which its validator checks."""
    model = KIND_DATA[kind]
    fields = {name: f.description or "" for name, f in model.model_fields.items() if f.is_required()}
    if kind == "section":
        fields["body_md|body_text"] = "string: body_md (markdown) or body_text (plain)"
    return fields


def _data_help() -> str:
    per_kind = "; ".join(f"{kind}: {', '.join(required_fields(kind))}" for kind in KINDS)
    return (
        f"The kind's fields (other fields are kept too). Required per kind: {per_kind}. "
        "decision.status: proposed|accepted|deprecated|superseded (accepted: read-only); "
        "change.change_type: code|schema|config|runbook|infra; todo.scope: user|project|service|"
        "branch; todo.todo_type: feature|bugfix|ops|doc. A section body over 3 KB is split at "
        "its headings into 1-3 KB chunks"
    )


# --------------------------------------------------------------------------- memory.store


Tags = list[str] | dict[str, Any]
Source = str | dict[str, Any]


class StoreItemSchema(ToolInput):
    """One item of memory.store, as published (FR-003); each item is validated on its own."""

    kind: Kind = Field(description="One of the nine knowledge types")
    scope: ScopeInput = Field(
        description="Where the item belongs: levels given override the server's (git remote, branch, "
        "MEMORY_* settings); {} stores it in the caller's scope. A tenant needs an org"
    )
    data: dict[str, Any] = Field(description=_data_help())
    tags: Tags | None = Field(
        default=None,
        description=f"Labels: a list of strings, or an object whose keys (key:value for non-true "
        f"values) become tags; at most {MAX_TAGS} of at most {MAX_TAG_CHARS} characters",
    )
    source: Source | None = Field(
        default=None, description="Where it came from: text or an object ({actor, tool, url...})"
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_KEY_CHARS,
        description="Storing again with this key answers skipped_dedupe when nothing changed, or "
        "updates the stored item (updated); without a key, the same kind, scope, source and content "
        "count as the same item",
    )
    ttl_policy: TtlPolicyName | None = Field(
        default=None,
        description="PR30d (30 days after data.merged_at), BRANCH90d (90 days) or NONE; default: "
        "change and todo BRANCH90d, pr_context PR30d, others NONE",
    )


def tags_of(tags: Tags | None) -> list[str]:
    """Tags as a list: an object's keys become tags (``key:value`` for a value other than true)."""
    if tags is None:
        return []
    if isinstance(tags, list):
        return [t.strip() for t in tags if t.strip()]
    out = []
    for key, value in tags.items():
        if value is True:
            out.append(str(key))
        elif value not in (None, False, "", [], {}):
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            out.append(f"{key}:{text}")
    return out


class StoreItem(StoreItemSchema):
    """What each item validates against: the published shape, with the tags' bounds checked here
    (where the caller's field names apply) rather than on the stored metadata."""

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: Tags | None) -> Tags | None:
        tags = tags_of(value)
        long = [t for t in tags if len(t) > MAX_TAG_CHARS]
        if long:
            raise ValueError(f"tag '{long[0][:40]}...' is over {MAX_TAG_CHARS} characters")
        if len(set(tags)) > MAX_TAGS:
            raise ValueError(f"at most {MAX_TAGS} tags")
        return value


class StoreInput(ToolInput):
    items: list[StoreItemSchema] = Field(
        min_length=1, max_length=MAX_ITEMS, description="1-100 knowledge items; partial success"
    )


class StoreRequest(ToolInput):
    """What the call validates as a whole: 1-100 items; each is validated on its own after."""

    items: list[Any] = Field(min_length=1, max_length=MAX_ITEMS)


class StoredItem(ToolOutput):
    index: int = Field(description="Position in the request's items")
    id: str = Field(
        json_schema_extra=UUID_FORMAT, description="The item's id (a chunked section: its first chunk's)"
    )
    kind: Kind
    status: StoreStatus
    chunk_ids: list[str] = Field(
        default_factory=list, description="A section split into chunks: every chunk's id, in order"
    )
    expires_at: str | None = Field(default=None, description="When the item expires (its TTL policy)")


class StoreError(ToolOutput):
    index: int = Field(description="Position in the request's items")
    error_code: str = Field(
        json_schema_extra=enum_of(*ERROR_CODES),
        description="MISSING_FIELDS, INVALID_FIELDS (wrong type, value or format), UNKNOWN_FIELDS, "
        "TOO_MANY_ITEMS, INVALID_SCOPE, CONFLICT (also NOT_FOUND, UNAVAILABLE, INTERNAL)",
    )
    human_hint: str
    fix: dict[str, Any] = Field(default_factory=dict, description="What to change: fields, expected, action")
    details: dict[str, Any] = Field(default_factory=dict, description="code: the precise error code")


class StoreOutput(ToolOutput):
    stored: list[StoredItem]
    errors: list[StoreError] = Field(default_factory=list)


# --------------------------------------------------------------------------- memory.find


class FindTimeRange(ToolInput):
    since: UtcDatetime | None = Field(
        default=None, json_schema_extra=DATETIME_FORMAT, description="Inclusive"
    )
    until: UtcDatetime | None = Field(
        default=None, json_schema_extra=DATETIME_FORMAT, description="Inclusive"
    )

    @model_validator(mode="after")
    def _ordered(self) -> FindTimeRange:
        if self.since and self.until and self.since > self.until:
            raise ValueError("time_range.since is after time_range.until")
        return self


class FindInput(ToolInput):
    query: NonBlank = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for")
    scope: ScopeInput | None = Field(
        default=None,
        description="Default: the caller's org, project and branch (branch isolation). Widen or move "
        "it: {'branch': 'main'} reads main, {'branch': '*'} every branch, {'project': '*'} every project",
    )
    types: list[Kind] | None = Field(default=None, description="Only these knowledge types")
    top_k: int = Field(default=20, ge=1, le=100, description="Maximum hits")
    mode: SearchMode = Field(
        default="auto",
        description="auto (routes by query shape: issue/PR ids, code, design questions), fast (lexical "
        "only, cached) or deep (adds fuzzy terms and linked items)",
    )
    time_range: FindTimeRange | None = Field(default=None, description="Items created in this range")


class Hit(ToolOutput):
    kind: str = Field(
        description="One of the nine kinds, or the type another profile stored it as (fact, requirements...)"
    )
    id: str = Field(json_schema_extra=UUID_FORMAT)
    snippet: str = Field(description="The start of the item, or the text around the first query term")
    score: float = Field(description="Relevance: the re-scored rank, higher is better")
    title: str | None = None
    tags: list[str] = Field(default_factory=list)
    last_verified: str | None = Field(
        default=None, description="data.last_verified_at when given, else when the item last changed"
    )
    route_used: str | None = Field(default=None, description="fts, semantic or graph")
    confidence: float | None = Field(default=None, description="0-1: how sure this hit is a match")
    citations: list[str] = Field(default_factory=list, description="Sources, PRs, issues, links it cites")
    scope: dict[str, Any] = Field(default_factory=dict, description="Where the item belongs")
    stale: StaleMark | None = Field(
        default=None,
        description="Set when the item may no longer hold (FR-043): data.last_verified_at over 90 days "
        "ago (a runbook to re-verify: store it again with a new last_verified_at), or code it cites "
        "changed",
    )


class FindDebug(ToolOutput):
    mode: str
    route: str = Field(description="change_first, code_first, design_first or general")
    strategy: str = Field(description="The route in the seed's words, e.g. logs-first")
    query_time_ms: int
    total: int
    search_mode: str = Field(description="semantic (dense + lexical) or lexical (no embedding model)")
    model_status: str
    cached: bool = False
    warnings: list[str] = Field(default_factory=list)


class FindOutput(ToolOutput):
    hits: list[Hit]
    suggestions: list[str] = Field(default_factory=list, description="Given when fewer than 3 good hits")
    debug: FindDebug
