"""Record ids and payload filters in qdrant-edge's terms (used by :mod:`.edge`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import qdrant_edge as qe

from memory_service.core.ports import PayloadFilter


def _eq(key: str, value: Any) -> Any:
    """Equality: numbers via a closed range so 2 matches 2.0 (MatchValue takes only str/int/bool)."""
    if value is None:
        return qe.IsNullCondition(key)
    if isinstance(value, bool):  # the binding reads a Python bool as the integer 1/0, a numpy one as bool
        return qe.FieldCondition(key, match=qe.MatchValue(np.bool_(value)))  # type: ignore[arg-type]
    if isinstance(value, int | float):
        return qe.FieldCondition(key, range=qe.RangeFloat(gte=float(value), lte=float(value)))
    return qe.FieldCondition(key, match=qe.MatchValue(value))


def _any(key: str, values: Sequence[Any]) -> Any:
    if not values or all(isinstance(v, str) for v in values):
        return qe.FieldCondition(key, match=qe.MatchAny(list(values)))  # [] matches nothing
    return qe.Filter(should=[_eq(key, v) for v in values])  # mixed types: MatchAny refuses them


def to_filter(flt: PayloadFilter | None) -> qe.Filter | None:
    if flt is None:
        return None
    must = [_eq(k, v) for k, v in flt.equals.items()] + [_any(k, v) for k, v in flt.any_of.items()]
    must += [_any(k, v) for k, v in flt.also_any]
    must += [qe.FieldCondition(k, range=qe.RangeFloat(gte=lo, lte=hi)) for k, (lo, hi) in flt.ranges.items()]
    must_not = [_eq(k, v) for k, v in flt.not_equals.items()]
    if not must and not must_not:
        return None
    return qe.Filter(must=must or None, must_not=must_not or None)
