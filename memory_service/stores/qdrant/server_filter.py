"""Record ids and payload filters in qdrant-client's terms (used by :mod:`.server`).

The translation mirrors :mod:`.edge_filter` condition for condition, so both adapters
answer a :class:`PayloadFilter` alike; it is repeated here rather than shared because the two
engines take different model classes (and this module must not import the embedded binding).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qdrant_client import models

from memory_service.core.ports import PayloadFilter


def _eq(key: str, value: Any) -> models.Condition:
    """Equality: numbers via a closed range so 2 matches 2.0 (MatchValue is exact on type)."""
    if value is None:
        return models.IsNullCondition(is_null=models.PayloadField(key=key))
    if isinstance(value, bool | str):
        return models.FieldCondition(key=key, match=models.MatchValue(value=value))
    if isinstance(value, int | float):
        return models.FieldCondition(key=key, range=models.Range(gte=float(value), lte=float(value)))
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _any(key: str, values: Sequence[Any]) -> models.Condition:
    if not values or all(isinstance(v, str) for v in values):
        return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))  # [] = nothing
    return models.Filter(should=[_eq(key, v) for v in values])  # numbers: 2 must match 2.0


def to_filter(flt: PayloadFilter | None) -> models.Filter | None:
    """The conjunction as a qdrant Filter (None when it has no condition)."""
    if flt is None:
        return None
    must = [_eq(k, v) for k, v in flt.equals.items()] + [_any(k, v) for k, v in flt.any_of.items()]
    must += [_any(k, v) for k, v in flt.also_any]
    must += [
        models.FieldCondition(key=k, range=models.Range(gte=lo, lte=hi)) for k, (lo, hi) in flt.ranges.items()
    ]
    must_not = [_eq(k, v) for k, v in flt.not_equals.items()]
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)
