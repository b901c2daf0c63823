"""Which memory holds a dedupe key (core/write/dedupe.py): the check behind an add's
``skipped_dedupe``, made under the keys' write locks by the callers."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from memory_service.core.models import MemoryRecord, MemoryStatus, utcnow
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import MEMORIES, Stores, from_payload
from memory_service.core.scopes import FACETS, facet
from memory_service.core.ttl import EXPIRES_FIELD


def holders_of(stores: Stores, keys: Sequence[str], *, besides: Collection[str] = ()) -> dict[str, str]:
    """:func:`holder_of` for many keys in one read: key -> id of the memory holding it."""
    facets = {facet("dedupe", k): k for k in keys}
    if not facets:
        return {}
    # At most one holder per key (writes of a key are serialised), plus an own half-written one.
    points, _ = stores.vectors.scroll(MEMORIES, _holding(list(facets)), limit=2 * len(facets) + 8)
    found: dict[str, str] = {}
    for point in points:
        if point.id in besides:
            continue
        for value in point.payload.get(FACETS, []):
            if value in facets:
                found.setdefault(facets[value], point.id)
    return found


def holder_of(stores: Stores, key: str, *, besides: str | None = None) -> MemoryRecord | None:
    """The active, unexpired, current memory holding a dedupe key, if any."""
    points, _ = stores.vectors.scroll(MEMORIES, _holding([facet("dedupe", key)]), limit=2)
    return next((from_payload(p.payload) for p in points if p.id != besides), None)


def _holding(dedupe_facets: list[str]) -> PayloadFilter:
    """Active, unexpired, current memories holding one of these dedupe facets (a superseded fact
    no longer holds its key: stating it again is a new fact)."""
    return PayloadFilter(
        equals={"status": MemoryStatus.ACTIVE.value},
        any_of={FACETS: dedupe_facets},
        ranges={EXPIRES_FIELD: (utcnow().timestamp(), None)},
        not_equals={"superseded": "true"},
    )
