"""Seed 002 ("Memory Interface JSON Schemas v1"): the read / write / update requests, exactly.

The three request models publish the seed's JSON schemas (every name, const, enum, bound,
default and required list; tests/unit/profiles/test_interface_v1_rules.py compares them key by key
with the seed's own JSON). Where the seed is silent we only bound what must be bounded (string
lengths, list sizes) and refuse unknown fields, like every other tool.

``update`` is a ``oneOf`` discriminated by ``update.type``. The published schema says so; the
request that is validated first takes ``update`` as an object and :func:`parse_update` picks the
branch by its ``type``, so an error names the seed's field (``update.vote``), not pydantic's
union branch (``update.utility_vote.vote``).

Responses are ours (the seed gives none): each names its ``op`` and ``repo_id`` and keeps to the
seed's vocabulary (kind, text, scope, confidence, links, evidence_refs).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field
from pydantic.json_schema import JsonDict

from memory_service.core.errors import ValidationError
from memory_service.core.models import SEED_002_KINDS
from memory_service.core.schema_base import MAX_QUERY_CHARS, NonBlank, ToolInput, ToolOutput
from memory_service.core.scopes import GLOBAL_PROJECT, WILDCARD
from memory_service.core.validation import validate_input

Kind = Literal["problem", "solution", "failed_tactic", "fact", "preference", "change"]
MemoryScope = Literal["repo", "global"]
ReadMode = Literal["ambient", "targeted"]
UpdateMode = Literal["dry_run", "commit"]
KINDS: tuple[str, ...] = SEED_002_KINDS

# Bounds the seed leaves open, no wider than the services' own (feedback_schemas.py): a request
# this layer accepts is never refused further down for its size.
MAX_RATIONALE_CHARS = 2000
MAX_EVIDENCE_REFS = 20
MAX_REF_CHARS = 2000
MAX_RELATED = 20
MAX_REPO_ID_CHARS = 200  # a scope level's bound (core/scopes.py): repo_id becomes scope.project
UNIQUE: JsonDict = {"uniqueItems": True}


def _unique(values: list[Any] | None) -> list[Any] | None:
    """The seed's ``uniqueItems``: a repeated entry is refused, not silently merged."""
    if values is not None:
        seen: set[Any] = set()
        for value in values:
            if value in seen:
                raise ValueError(f"{value!r} is listed twice; list each entry once (uniqueItems)")
            seen.add(value)
    return values


def _repo_id(value: str) -> str:
    """A repository id names one repository's memory: never blank, never a pattern, never the
    project global-scope memories are stored under."""
    text = value.strip()
    if not text:
        raise ValueError("repo_id must contain text, not only whitespace")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError("repo_id must not contain control characters")
    if text in (WILDCARD, GLOBAL_PROJECT):
        raise ValueError(
            f"repo_id {text!r} is reserved ({'every repository' if text == WILDCARD else 'global scope'}); "
            "name the repository, and use memory.scope='global' or include_global for global memories"
        )
    return text


RepoId = Annotated[str, Field(min_length=1, max_length=MAX_REPO_ID_CHARS), AfterValidator(_repo_id)]
Ref = Annotated[NonBlank, Field(min_length=1, max_length=MAX_REF_CHARS)]
EvidenceRefs = Annotated[
    list[Ref] | None,
    Field(max_length=MAX_EVIDENCE_REFS, json_schema_extra=UNIQUE),
    AfterValidator(_unique),
]
Rationale = Annotated[str | None, Field(max_length=MAX_RATIONALE_CHARS)]


# --------------------------------------------------------------------------- memory.read


class Expand(ToolInput):
    """How far a read reaches beyond its direct hits."""

    semantic_hops: int = Field(
        default=2,
        ge=0,
        le=3,
        description="Max similarity-association hops (rounds searching from the best hits)",
    )
    include_problem_links: bool = Field(
        default=True, description="Include linked problem / solution / failed_tactic records"
    )
    include_fact_update_links: bool = Field(
        default=True,
        description="Include linked fact-update chain neighbours (change, older and newer facts)",
    )


class ReadRequest(ToolInput):
    """Seed 002's memory.read.request."""

    op: Literal["read"] = Field(description="Must be 'read'")
    repo_id: RepoId = Field(description="The repository whose memory is read")
    mode: ReadMode = Field(description="ambient: a startup pack; targeted: an explicit mid-task lookup")
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Natural-language query")
    include_global: bool = Field(
        default=True, description="Also search global-scope memories (written with scope 'global')"
    )
    kinds: Annotated[list[Kind] | None, AfterValidator(_unique)] = Field(
        default=None,
        json_schema_extra=UNIQUE,
        description="Only these kinds (default: every memory of the repository, whichever profile stored it)",
    )
    limit: int = Field(default=20, ge=1, le=100, description="Max records returned before final packing")
    expand: Expand | None = Field(default=None, description="Expansion beyond the direct hits")


class ResultLinks(ToolOutput):
    problem_id: str | None = Field(
        default=None, description="The problem a solution / failed tactic addresses"
    )
    related_memory_ids: list[str] = Field(default_factory=list)
    superseded_by: str | None = Field(default=None, description="A fact's replacement (fact_update_link)")
    superseded_by_change: str | None = Field(default=None, description="The change that replaced the fact")


class ReadResult(ToolOutput):
    memory_id: str
    kind: str = Field(
        description="One of the six seed-002 kinds, or, in a read without `kinds`, the kind another "
        "profile stored it as (design, requirements, note, section...)"
    )
    text: str
    scope: MemoryScope
    score: float = Field(description="The ranking's score (higher is better)")
    match_confidence: float | None = Field(default=None, description="0-1: how sure this hit is a match")
    confidence: float | None = Field(default=None, description="The write-time confidence")
    rationale: str | None = None
    evidence_refs: list[str] = Field(default_factory=list)
    links: ResultLinks = Field(default_factory=ResultLinks)
    linked_via: str | None = Field(
        default=None,
        description="Set when the record was reached through a link, not by the query: problem_link "
        "(expand.include_problem_links), fact_update_link (expand.include_fact_update_links) or graph",
    )
    superseded: bool = Field(default=False, description="A fact replaced through fact_update_link")
    created_at: str | None = None


class AppliedRead(ToolOutput):
    """The read as run: the seed's defaults filled in."""

    include_global: bool
    kinds: list[str] | None = Field(description="The kinds filter, or null: every kind")
    limit: int
    semantic_hops: int
    include_problem_links: bool
    include_fact_update_links: bool


class ReadOutput(ToolOutput):
    op: Literal["read"] = "read"
    repo_id: str
    mode: str
    results: list[ReadResult]
    total: int
    applied: AppliedRead
    search_mode: str = Field(default="semantic", description="semantic, or lexical without the model")
    model_status: str = "ready"
    warnings: list[str] = Field(default_factory=list)
    query_time_ms: int = 0


# --------------------------------------------------------------------------- memory.write


class WriteLinks(ToolInput):
    problem_id: str | None = Field(
        default=None, description="The problem memory this addresses: required for solution and failed_tactic"
    )
    related_memory_ids: Annotated[list[str] | None, AfterValidator(_unique)] = Field(
        default=None,
        max_length=MAX_RELATED,
        json_schema_extra=UNIQUE,
        description="Other associated memories",
    )


class WriteMemory(ToolInput):
    text: NonBlank = Field(min_length=1, max_length=100_000, description="The memory's immutable content")
    scope: MemoryScope = Field(description="repo: this repository only; global: every repository")
    kind: Kind
    confidence: float = Field(ge=0, le=1, description="Write-time confidence, for audit and debugging")
    rationale: Rationale = Field(default=None, description="Why this memory is written")
    links: WriteLinks | None = None
    evidence_refs: EvidenceRefs = Field(
        default=None, description="Evidence pointers (commit, PR, file, log); a 'change' needs at least one"
    )


class WriteRequest(ToolInput):
    """Seed 002's memory.write.request."""

    op: Literal["write"] = Field(description="Must be 'write'")
    repo_id: RepoId = Field(description="The repository the memory is stored for")
    memory: WriteMemory


class WriteOutput(ToolOutput):
    op: Literal["write"] = "write"
    repo_id: str
    memory_id: str
    kind: str
    scope: MemoryScope
    status: str = Field(
        json_schema_extra={"enum": ["created", "skipped_dedupe"]},
        description="created, or skipped_dedupe: the same memory exists (memory_id is its id), "
        "nothing written",
    )
    confidence: float
    links: ResultLinks = Field(default_factory=ResultLinks)
    evidence_refs: list[str] = Field(default_factory=list)
    redacted_preview: str | None = Field(default=None, description="The stored text's start, secrets masked")
    secrets_redacted: dict[str, int] = Field(default_factory=dict)
    conflicts: list[dict[str, Any]] = Field(
        default_factory=list, description="Existing memories that look alike (id and similarity)"
    )


# --------------------------------------------------------------------------- memory.update


class ArchiveState(ToolInput):
    type: Literal["archive_state"]
    archived: bool = Field(description="true hides the memory from reads; false restores it")
    rationale: Rationale = None


class UtilityVote(ToolInput):
    type: Literal["utility_vote"]
    problem_id: str = Field(description="The problem memory in whose context the memory helped (or not)")
    vote: float = Field(ge=-1, le=1, description="1: it solved it, 0: neutral, -1: it misled")
    rationale: Rationale = None
    evidence_refs: EvidenceRefs = None


class FactUpdateLink(ToolInput):
    type: Literal["fact_update_link"]
    old_fact_id: str = Field(description="The fact that no longer holds")
    new_fact_id: str = Field(description="Its replacement fact")
    rationale: Rationale = None
    evidence_refs: EvidenceRefs = None


UpdateBody = ArchiveState | UtilityVote | FactUpdateLink
UPDATE_TYPES: dict[str, type[ArchiveState] | type[UtilityVote] | type[FactUpdateLink]] = {
    "archive_state": ArchiveState,
    "utility_vote": UtilityVote,
    "fact_update_link": FactUpdateLink,
}


def _one_of(schema: JsonDict) -> None:
    """Publish the union as the seed writes it: an object that is one of three shapes (pydantic's
    discriminator mapping points into $defs, which the published schema inlines)."""
    schema.pop("discriminator", None)
    schema["type"] = "object"


class UpdateRequestSchema(ToolInput):
    """Seed 002's memory.update.request."""

    op: Literal["update"] = Field(description="Must be 'update'")
    repo_id: RepoId = Field(description="The repository the operation is for")
    memory_id: str = Field(description="The target memory (with fact_update_link: the change)")
    mode: UpdateMode = Field(description="dry_run validates and previews; commit persists")
    update: Annotated[UpdateBody, Field(discriminator="type", json_schema_extra=_one_of)]


class UpdateRequest(UpdateRequestSchema):
    """What is validated first: ``update`` is any object; :func:`parse_update` checks its branch."""

    update: dict[str, Any]  # type: ignore[assignment]


def parse_update(raw: dict[str, Any]) -> UpdateBody:
    """The ``update`` object as the branch its ``type`` names, with errors on ``update.*`` fields.

    Raises:
        ValidationError: no or an unknown ``type`` (VAL_MISSING_FIELD / VAL_INVALID_ENUM), or the
            branch's own checks (missing, unknown or out-of-range fields).
    """
    allowed = list(UPDATE_TYPES)
    kind = raw.get("type")
    if kind is None:
        raise ValidationError(
            "Field 'update.type' is required but was not provided",
            code="VAL_MISSING_FIELD",
            details={"field": "update.type", "allowed": allowed},
            suggestion=f"Give update.type: one of {', '.join(allowed)}, with that operation's fields.",
        )
    model = UPDATE_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise ValidationError(
            f"Invalid value for 'update.type' '{str(kind)[:80]}'. Must be one of: {', '.join(allowed)}",
            code="VAL_INVALID_ENUM",
            details={"field": "update.type", "provided": kind, "allowed": allowed},
            suggestion="Use update.type 'archive_state' with {archived}, 'utility_vote' with {problem_id, "
            "vote} or 'fact_update_link' with {old_fact_id, new_fact_id}.",
        )
    return validate_input(model, raw, field_prefix="update.")


class UpdateOutput(ToolOutput):
    op: Literal["update"] = "update"
    repo_id: str
    memory_id: str
    mode: str
    type: str = Field(json_schema_extra={"enum": list(UPDATE_TYPES)})
    status: str = Field(
        json_schema_extra={"enum": ["dry_run", "committed", "unchanged"]},
        description="dry_run: validated, nothing written; committed: persisted; unchanged: nothing to do",
    )
    effects: list[str] = Field(default_factory=list, description="What was (or would be) done")
    result: dict[str, Any] = Field(default_factory=dict, description="The operation's own answer")
