"""Finding a requirement or a component memory by what a user calls it, for the trace tools."""

from __future__ import annotations

import difflib
import uuid
from collections.abc import Iterable

from memory_service.core.errors import NotFoundError
from memory_service.core.models import MemoryRecord, MemoryType, utcnow
from memory_service.core.ports import VectorStore
from memory_service.core.records import MEMORIES, from_payload
from memory_service.core.ttl import is_expired
from memory_service.core.write.linking import MemoryCatalog

EXCERPT_CHARS = 240


def load_records(vectors: VectorStore, ids: Iterable[str]) -> dict[str, MemoryRecord]:
    """Active memories by id; unknown, deleted and expired (TTL) ids are left out."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    records = (from_payload(p.payload) for p in vectors.retrieve(MEMORIES, wanted))
    now = utcnow()
    return {r.id: r for r in records if r.is_active and not is_expired(r.expires_at, now)}


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def find_requirement(vectors: VectorStore, key: str) -> MemoryRecord:
    """The requirement memory a REQ id (its latest, when several carry it) or memory id names.

    Raises:
        NotFoundError: NF_REQUIREMENT, with the closest known ids as the suggestion.
    """
    catalog = MemoryCatalog.load(vectors)
    record = _find(vectors, key, MemoryType.REQUIREMENTS, catalog.requirement(key), catalog)
    if record is None:
        raise _not_found(
            key, "NF_REQUIREMENT", "requirement", "requirement_id", key.upper(), sorted(catalog.requirements),
            "A requirement is a memory of type requirements with metadata.requirement_id (memory_add); "
            "its memory id works too.",
        )  # fmt: skip
    return record


def find_component(vectors: VectorStore, key: str) -> tuple[MemoryRecord, MemoryCatalog]:
    """The component memory a component_id, name or memory id names, and the catalog it was in.

    Raises:
        NotFoundError: NF_COMPONENT, with the closest known names as the suggestion.
    """
    catalog = MemoryCatalog.load(vectors)
    record = _find(vectors, key, MemoryType.COMPONENT, catalog.component(key), catalog)
    if record is None:
        raise _not_found(
            key, "NF_COMPONENT", "component", "component_id", key.lower(), sorted(catalog.components),
            "A component is a memory of type component with metadata.component_id or name (memory_add); "
            "its memory id works too.",
        )  # fmt: skip
    return record, catalog


def _find(
    vectors: VectorStore, key: str, memory_type: str, named: list[str], catalog: MemoryCatalog
) -> MemoryRecord | None:
    """By memory id first, else the latest memory carrying the name."""
    record = _by_memory_id(vectors, key, memory_type)
    if record is None and named:
        record = catalog.records[named[-1]]
    return record


def _not_found(
    key: str, code: str, what: str, field: str, normalised: str, known: list[str], how: str
) -> NotFoundError:
    return NotFoundError(
        f"No {what} '{key}'",
        code=code,
        details={"field": field, "provided": key, "known": known[:20]},
        suggestion=_suggest(normalised, known, f"{what}s" if what != "requirement" else "requirement ids")
        + how,
    )


def _by_memory_id(vectors: VectorStore, key: str, memory_type: str) -> MemoryRecord | None:
    try:
        mid = str(uuid.UUID(key.strip()))
    except ValueError:
        return None
    record = load_records(vectors, [mid]).get(mid)
    return record if record is not None and record.type == memory_type else None


def _suggest(key: str, known: list[str], what: str) -> str:
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.5)
    if close:
        return f"Did you mean {', '.join(close)}? "
    if known:
        return f"Known {what}: {', '.join(known[:10])}. "
    return f"No {what} are stored yet. "
