"""Seed 004's knowledge items as memories: kinds and types, the per-kind data checks, how data is
written out as text, and how a memory reads back as a hit; error codes in the seed's words.
Pure functions: profiles/find_store/mapping.py runs them against the services."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pydantic

from memory_service.core.errors import MemoryServiceError, ValidationError
from memory_service.core.limits import clip_text, fit_to_budget
from memory_service.core.models import MemoryType
from memory_service.core.search.schemas import Suggestion
from memory_service.core.search.scoring import terms
from memory_service.core.validation import translate
from memory_service.profiles.chunking import chunk_section
from memory_service.profiles.find_store.schemas import (
    KIND_DATA,
    MAX_KEY_CHARS,
    KindData,
    StoreItem,
    required_fields,
    tags_of,
)

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- kinds <-> types

DECISION_TYPE = MemoryType.DESIGN.value
ADR = "ADR"


def memory_type_of(kind: str) -> str:
    """The memory type a kind is stored as: itself, except a decision (a design memory)."""
    return DECISION_TYPE if kind == "decision" else kind


def kind_of(memory_type: str) -> str:
    """The kind a memory reads back as: a design memory is a decision; a memory another profile
    stored with a type outside the nine (a fact, a requirement) keeps its type."""
    return "decision" if memory_type == DECISION_TYPE else memory_type


# --------------------------------------------------------------------------- error codes


# Our input codes by what they say, in seed 004's style (FR-053: ``error_code`` is an enum; FR-054
# names the five it must support). A field absent or blank is MISSING_FIELDS; the seed names no
# code for a field present but wrong, unknown or over its count, so those have their own.
_MISSING = frozenset({"VAL_MISSING_FIELD", "VAL_EMPTY", "VAL_EMPTY_QUERY"})
_UNKNOWN = frozenset({"VAL_UNKNOWN_FIELD"})
_TOO_MANY = frozenset({"VAL_TOO_MANY_ITEMS", "VAL_TOO_MANY_TAGS"})
# Refused because of what is stored, not how the call is written: a conflict.
_STORED_STATE = frozenset({"VAL_IMMUTABLE_CONTENT", "VAL_IMMUTABLE_RECORD"})


def seed_code(code: str) -> str:
    """Our precise code as one of seed 004's error codes (FR-054), or a documented extra.

    A field present but malformed (a wrong type, a value outside its enum or bounds, a bad format
    or rule) is INVALID_FIELDS; a field the tool does not take, UNKNOWN_FIELDS; a list over its
    maximum (more than 100 items), TOO_MANY_ITEMS. UNAUTHORIZED would come from the HTTP
    transport's bearer-token check (AUTH_*), which answers before any tool runs, so a tool sees it
    only if that check ever moves into the call. No rate limiter exists yet: RATE_LIMIT is kept
    for the RATE_* codes one would raise.
    """
    if code == "VAL_INVALID_SCOPE":
        return "INVALID_SCOPE"
    if code in _MISSING:
        return "MISSING_FIELDS"
    if code in _UNKNOWN:
        return "UNKNOWN_FIELDS"
    if code in _TOO_MANY:
        return "TOO_MANY_ITEMS"
    if code in _STORED_STATE or code.startswith("CON_"):
        return "CONFLICT"
    if code.startswith(("VAL_", "SEC_")):
        return "INVALID_FIELDS"
    if code.startswith("AUTH_"):
        return "UNAUTHORIZED"
    if code.startswith("RATE_"):
        return "RATE_LIMIT"
    if code.startswith("NF_"):
        return "NOT_FOUND"
    if code.startswith("SVC_"):
        return "UNAVAILABLE"
    return "INTERNAL"


SEED_ERROR_TOKENS = 2000  # the JSON of one error, estimated (a few KB of English, as seed 001's envelope)


def seed_error(error: MemoryServiceError) -> dict[str, Any]:
    """``{error_code, human_hint, fix, details}`` for an error (FR-053, FR-055): the hint says
    what went wrong and what to do; ``fix`` names the fields and what each expects."""
    envelope = error.to_envelope()["error"]  # clipped, secrets masked
    hint = envelope["message"].rstrip(".")
    if envelope["suggestion"]:
        hint = f"{hint}. {envelope['suggestion']}"
    payload = {
        "error_code": seed_code(error.code),
        "human_hint": hint,
        "fix": _fix(envelope["details"], envelope["suggestion"]),
        "details": {"code": error.code, **envelope["details"]},
    }
    # The hint, fix and details repeat what the envelope clipped (a long unknown field's name up
    # to five times): the longest strings are cut further, so an error stays a few KB.
    fitted, cut = fit_to_budget(payload, SEED_ERROR_TOKENS)
    if cut:  # the seed's four fields only, without the budget's note
        fitted.pop("truncated", None)
        fitted.pop("truncation_note", None)
    return fitted


def _fix(details: dict[str, Any], action: str) -> dict[str, Any]:
    """The structured part of an answer to an error: which fields, what they expect, what to do."""
    fix: dict[str, Any] = {}
    fields = details.get("missing") or [e["field"] for e in details.get("errors", []) if "field" in e]
    if not fields and details.get("field"):
        fields = [details["field"]]
    if fields:
        fix["fields"] = fields
    expected = details.get("expected")
    if isinstance(expected, dict):
        fix["expected"] = expected
    elif details.get("allowed") and details.get("field"):
        fix["expected"] = {details["field"]: "one of " + ", ".join(map(str, details["allowed"]))}
    elif details.get("bounds") and details.get("field"):
        fix["expected"] = {details["field"]: details["bounds"]}
    elif isinstance(expected, str) and details.get("field"):
        fix["expected"] = {details["field"]: expected}
    if details.get("memory_id"):
        fix["memory_id"] = details["memory_id"]
    if action:
        fix["action"] = action
    return fix


# --------------------------------------------------------------------------- data checks


def check_data(kind: str, data: dict[str, Any], *, field: str) -> KindData:
    """The kind's data, validated (FR-008..016, FR-052). Every missing required field is named at
    once (VAL_MISSING_FIELD with details.missing and details.expected); other problems are
    reported as any input problem is."""
    reserved = [name for name in CHUNK_FIELDS if name in data] if kind == "section" else []
    if reserved:
        raise ValidationError(
            f"Field '{field}.{reserved[0]}' is set only by the server, on a long section's chunks",
            code="VAL_IMMUTABLE_FIELD",
            details={"field": f"{field}.{reserved[0]}", "reserved": list(CHUNK_FIELDS)},
            suggestion=f"Remove {', '.join(reserved)} from the section's data: a section over 3 KB is "
            "split into chunks that carry these fields.",
        )
    missing = missing_fields(kind, data)
    if missing:
        needs = required_fields(kind)
        expected = {f"{field}.{name}": what for name, what in needs.items() if name in missing}
        names = [f"{field}.{name}" for name in missing]
        raise ValidationError(
            f"A {kind} item is missing required data field{'s' if len(names) > 1 else ''}: "
            f"{', '.join(missing)}",
            code="VAL_MISSING_FIELD",
            details={"field": names[0], "kind": kind, "missing": names, "expected": expected},
            suggestion=f"Add {', '.join(missing)} to the item's data; a {kind} needs {', '.join(needs)}.",
        )
    model = KIND_DATA[kind]
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise translate(exc, model, field_prefix=f"{field}.") from None


def missing_fields(kind: str, data: dict[str, Any]) -> list[str]:
    """The required data fields absent or null (a section's body: both bodies blank)."""
    out = []
    for name in required_fields(kind):
        if name == "body_md|body_text":
            if not any(isinstance(data.get(b), str) and data[b].strip() for b in ("body_md", "body_text")):
                out.append(name)
        elif data.get(name) is None:
            out.append(name)
    return out


# --------------------------------------------------------------------------- rendering


# What the chunker writes on a long section's chunks: never a section's data (a rewrite of the
# section deletes the memories its previous version listed in next_chunk_ids).
CHUNK_FIELDS = ("heading_path", "chunk_index", "chunk_count", "section_key", "next_chunk_ids", "body_format")
# Data fields kept in content only: long text that metadata (32 KB at most) need not repeat.
CONTENT_ONLY = {"section": ("body_md", "body_text"), "ddl": ("ddl_sql",)}
# Data fields kept in metadata only: a decision's status moves on its own (an accepted decision may
# still become superseded or deprecated, core/write/rules.py, while its content may not).
METADATA_ONLY = {"decision": ("status",)}
_LABELS = {"pr_id": "PR", "ddl_sql": "SQL", "subject_ref": "Subject", "external_id": "External id"}


def title_of(kind: str, data: dict[str, Any]) -> str:
    """The line that heads an item's content and names it in hits."""
    given = data.get("title")
    if isinstance(given, str) and given.strip():
        title = given.strip()
    elif kind == "runbook":
        title = f"Runbook: {data['service']}"
    elif kind == "change":
        title = f"{str(data['change_type']).capitalize()} change: {_first_line(data['summary'])}"
    elif kind == "todo":
        title = f"Todo ({data['todo_type']}): {_first_line(data['text'])}"
    elif kind == "release_note":
        title = f"Release {data['version']}"
    elif kind == "ddl":
        title = f"DDL: {data['entity']}"
    elif kind == "pr_context":
        title = f"PR {data['pr_id']} ({data['repo']})"
    else:
        title = kind
    if kind == "decision":
        title = f"ADR: {title}"
    elif kind == "issue":
        title = f"{data['external_id']}: {title}"
    return title[:200]


def render_text(kind: str, data: dict[str, Any]) -> str:
    """An item's data as text: its title, then each field as ``Label: value`` (required fields in
    the seed's order, then the others), lists as bullets. What search embeds and matches."""
    lines = [title_of(kind, data)]
    order = [n for n in KIND_DATA[kind].model_fields if n in data] + sorted(
        n for n in data if n not in KIND_DATA[kind].model_fields
    )
    for name in order:
        value = data[name]
        if value is None or name == "title" or (isinstance(value, str | list | dict) and not value):
            continue
        if name in METADATA_ONLY.get(kind, ()):
            continue
        lines.append(_field_text(name, value))
    return "\n".join(lines)


def _field_text(name: str, value: Any) -> str:
    label = _LABELS.get(name, name.replace("_", " ").capitalize())
    if isinstance(value, list):
        return f"{label}:\n" + "\n".join(f"- {_inline(v)}" for v in value)
    text = _inline(value) if not isinstance(value, str) else value
    return f"{label}:\n{text}" if "\n" in text or len(text) > 120 else f"{label}: {text}"


def _inline(value: Any) -> str:
    """A value on one line: text as it is, an object as ``key: value; ...``, the rest as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_inline(v)}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False, default=str)


def _first_line(value: Any) -> str:
    text = str(value).strip()
    return text.splitlines()[0][:120] if text else ""


@dataclass
class Draft:
    """One memory about to be stored for an item (a chunked section makes several)."""

    memory_type: str
    content: str
    metadata: dict[str, Any]
    idempotency_key: str | None


def drafts_for(item: StoreItem, data: KindData) -> list[Draft]:
    """The memories an item becomes: one, or one per chunk of a long section."""
    values = data.model_dump(mode="json")
    base = {k: v for k, v in values.items() if k not in CONTENT_ONLY.get(item.kind, ())}
    base = {k: v for k, v in base.items() if v is not None}
    if item.kind == "decision":
        base["design_type"] = ADR  # core/services/write_rules: accepted ADRs are read-only
    if item.tags is not None:
        base["tags"] = tags_of(item.tags)
    if item.source is not None:
        base["source"] = item.source
    memory_type = memory_type_of(item.kind)
    if item.kind != "section":
        return [Draft(memory_type, render_text(item.kind, values), base, item.idempotency_key)]
    markdown = bool((values.get("body_md") or "").strip())
    body = values["body_md"] if markdown else values["body_text"]
    chunks = chunk_section(body, markdown=markdown)
    if len(chunks) == 1:
        return [Draft(memory_type, body.strip(), base, item.idempotency_key)]
    key = section_key(values["title"], body, item.idempotency_key)
    return [
        Draft(
            memory_type,
            chunk.text,
            {
                **base,
                "heading_path": chunk.path,
                "chunk_index": i,
                "chunk_count": len(chunks),
                "section_key": key,
                "body_format": "markdown" if markdown else "text",
            },
            # An unkeyed section's chunks are keyed by the section: a chunk repeating another
            # (boilerplate) is still its own memory, and storing the section again is skipped.
            chunk_key(item.idempotency_key or key, i),
        )
        for i, chunk in enumerate(chunks)
    ]


def section_key(title: str, body: str, idempotency_key: str | None) -> str:
    """What a section's chunks share: from its idempotency key, else from its title and body."""
    basis = f"key:{idempotency_key}" if idempotency_key else f"text:{title}\n{body}"
    return "sec-" + hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def chunk_key(key: str | None, index: int) -> str | None:
    """Chunk ``i``'s idempotency key: ``<key>#<i>``. The first chunk keeps the item's own key, so a
    section that grows past 3 KB (or shrinks under it) stays the same memory."""
    if key is None or index == 0:
        return key
    own = f"{key}#{index}"
    if len(own) <= MAX_KEY_CHARS:
        return own
    return f"{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()}#{index}"


# --------------------------------------------------------------------------- reading hits

SNIPPET_CHARS = 300
STRATEGY = {  # a route in the seed's words (FR-023)
    "change_first": "logs-first (issues, PRs, changes)",
    "code_first": "runbooks and sections (files, symbols, stack traces)",
    "design_first": "specs, ADRs and examples (implement, design, why)",
    "general": "general (dense + lexical)",
}


def snippet(content: str, query: str, limit: int = SNIPPET_CHARS) -> str:
    """At most ``limit`` characters: the start of the content, or the text around the first query
    term when that term appears further in."""
    text = " ".join(content.split())
    if len(text) <= limit:
        return text
    lowered = text.lower()
    spots = [i for i in (lowered.find(t) for t in terms(query)) if i >= 0]
    first = min(spots, default=0)
    if first + 40 <= limit:
        return text[: limit - 1].rstrip() + "…"
    start = text.rfind(" ", 0, max(first - limit // 4, 0)) + 1
    body = text[start : start + limit - 2].rstrip()
    return "…" + body + ("…" if start + limit - 2 < len(text) else "")


def hit_title(record_title: str | None, metadata: dict[str, Any]) -> str | None:
    """A chunk's title says where in its document it sits: ``Document > Heading > Subheading``."""
    given = metadata.get("heading_path")  # a list the chunker wrote, or whatever another tool kept
    path = [p for p in given if isinstance(p, str)] if isinstance(given, list) else []
    if not path or not record_title:
        return record_title
    if path[0].strip().lower() == record_title.strip().lower():
        path = path[1:]
    return " > ".join([record_title, *path])


def citations(metadata: dict[str, Any]) -> list[str]:
    """What an item cites, as short strings: its source, PRs, commits, issues and links."""
    out: list[str] = []
    source = metadata.get("source")
    if isinstance(source, str) and source.strip():
        out.append(source.strip())
    elif isinstance(source, dict):
        ref = next((source[k] for k in ("url", "uri", "ref", "path") if isinstance(source.get(k), str)), None)
        out.append(ref or "; ".join(f"{k}={_inline(v)}" for k, v in source.items() if v not in (None, "")))
    repo = metadata.get("repo")
    for key in ("pr_id", "pr", "pr_number"):
        if metadata.get(key) not in (None, ""):
            out.append(f"{repo}#{metadata[key]}" if isinstance(repo, str) and repo else f"PR {metadata[key]}")
    for key in ("pr_ids", "linked_prs", "linked_pr_ids"):
        out.extend(f"PR {p}" for p in _strings(metadata.get(key)))
    for key in ("commit", "commit_sha"):
        if isinstance(metadata.get(key), str) and metadata[key]:
            out.append(f"commit {metadata[key]}")
    if metadata.get("tracker") and metadata.get("external_id"):
        out.append(f"{metadata['tracker']}:{metadata['external_id']}")
    for key in ("url", "supersedes"):
        if isinstance(metadata.get(key), str) and metadata[key]:
            out.append(metadata[key] if key == "url" else f"supersedes {metadata[key]}")
    for key in ("evidence", "references", "links", "citations"):
        out.extend(_strings(metadata.get(key)))
    return [clip_text(c, 200) for c in dict.fromkeys(c for c in out if c)][:10]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str | int) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) if isinstance(v, str | int) else _inline(v) for v in value if v not in (None, "")]
    return []


def suggestion_text(suggestion: Suggestion) -> str:
    """A search suggestion in memory.find's words (types, time_range, mode)."""
    args = suggestion.arguments or {}
    if suggestion.kind == "broaden_types":
        return "Drop the 'types' filter: other kinds may answer this"
    if suggestion.kind == "broaden_time":
        return "Drop the 'time_range' filter: older or newer items may answer this"
    if suggestion.kind == "deep_mode":
        return "Try mode 'deep': it adds fuzzy term matching and linked items"
    if suggestion.kind == "related_terms" and args.get("query"):
        return f"{suggestion.message}; try the query '{args['query']}'"
    if suggestion.kind == "rephrase":
        return "Nothing matched: describe the topic in other words, or store the knowledge with memory.store"
    return suggestion.message
