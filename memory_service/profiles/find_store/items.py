"""Seed 004's knowledge items as memories: kinds and types, the per-kind data checks, and how data
is written out as text (how a memory reads back as a hit: hits.py; error codes in the seed's
words: seed_errors.py). Pure functions: profiles/find_store/mapping.py runs them against the
services."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import pydantic

from memory_service.core.errors import ValidationError
from memory_service.core.models import MemoryType
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
        return f"{label}:\n" + "\n".join(f"- {inline(v)}" for v in value)
    text = inline(value) if not isinstance(value, str) else value
    return f"{label}:\n{text}" if "\n" in text or len(text) > 120 else f"{label}: {text}"


def inline(value: Any) -> str:
    """A value on one line: text as it is, an object as ``key: value; ...``, the rest as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "; ".join(f"{k}: {inline(v)}" for k, v in value.items())
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
        base["design_type"] = ADR  # core/write/rules.py: accepted ADRs are read-only
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
