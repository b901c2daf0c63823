"""The payload filter every memory read starts from: active, unexpired, not superseded, in scope,
of the asked types, tags and labels (memory_search, memory_explain, suggestions, export); and
:func:`passes`, the same filter evaluated in Python for records read by id."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from memory_service.core.errors import ValidationError
from memory_service.core.models import MemoryStatus, MemoryType, utcnow
from memory_service.core.ports import PayloadFilter
from memory_service.core.scopes import FACETS, facet, filter_parts
from memory_service.core.ttl import EXPIRES_FIELD


def search_filter(
    memory_types: Sequence[str] | None,
    time_range: Any = None,
    *,
    include_superseded: bool = False,
    scope: dict[str, list[str]] | None = None,
    hide_expired: bool = True,
    tags: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
) -> PayloadFilter:
    """Active, unexpired records, of the given types, created in the time range, not superseded
    (by default), in the scope given (field → accepted values, core/scopes.py; None: any), with
    one of ``tags`` and one of ``labels`` (records.MemoryRecord.label) when given."""
    scoped, also_any = filter_parts(scope or {})
    if tags:
        also_any += ((FACETS, [facet("tag", t) for t in dict.fromkeys(tags)]),)
    if labels:
        also_any += ((FACETS, [facet("kind", k) for k in dict.fromkeys(labels)]),)
    any_of: dict[str, Sequence[Any]] = dict(scoped)
    if memory_types:
        allowed = [t.value for t in MemoryType]
        bad = [t for t in memory_types if t not in allowed]
        if bad:
            raise ValidationError(
                f"Invalid memory type '{bad[0]}'. Must be one of: {', '.join(allowed)}",
                code="VAL_INVALID_TYPE",
                details={"field": "memory_types", "provided": bad, "allowed": allowed},
                suggestion="Use one of the valid memory types listed in the allowed values.",
            )
        any_of["type"] = list(dict.fromkeys(memory_types))
    # Expired records are never returned, even before the sweep soft-deletes them (core/ttl.py).
    ranges: dict[str, tuple[float | None, float | None]] = {}
    if hide_expired:
        ranges[EXPIRES_FIELD] = (utcnow().timestamp(), None)
    if time_range is not None and (time_range.start or time_range.end):
        start = time_range.start.timestamp() if time_range.start else None
        end = time_range.end.timestamp() if time_range.end else None
        ranges["created_at_ts"] = (start, end)
    # A flat, indexed copy of metadata.superseded (records.to_payload): a condition on an
    # unindexed nested field made every filtered vector search load payloads (~20x slower).
    not_equals = {} if include_superseded else {"superseded": "true"}
    return PayloadFilter(
        equals={"status": MemoryStatus.ACTIVE.value},
        any_of=any_of,
        ranges=ranges,
        not_equals=not_equals,
        also_any=also_any,
    )


def passes(payload: dict[str, Any], flt: PayloadFilter) -> bool:
    """The payload filter evaluated in Python, for records fetched by id rather than searched."""

    def get(key: str) -> Any:
        value: Any = payload
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def holds(value: Any, accepted: Collection[Any]) -> bool:
        """``in``, element-wise on a list field (ports.PayloadFilter)."""
        if isinstance(value, list):
            return any(v in accepted for v in value)
        return value in accepted

    if any(not holds(get(k), [v]) for k, v in flt.equals.items()):
        return False
    if any(not holds(get(k), vs) for k, vs in flt.any_of.items()):
        return False
    if any(not holds(get(k), vs) for k, vs in flt.also_any):
        return False
    if any(holds(get(k), [v]) for k, v in flt.not_equals.items()):
        return False
    for k, (lo, hi) in flt.ranges.items():
        value = get(k)
        if (
            not isinstance(value, int | float)
            or (lo is not None and value < lo)
            or (hi is not None and value > hi)
        ):
            return False
    return True
