"""Suggestions for low-recall searches (seed 004 FR-030: fewer than 3 good results).

Each suggestion says what to try and carries ready-made memory_search arguments, so an agent can
act on it without re-deriving the request: widen the filters (other types, any time), search
deeper, or add related terms that the index actually holds (taken from the weak hits' text).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from memory_service.core.errors import MemoryServiceError
from memory_service.core.records import MEMORIES, Stores
from memory_service.core.search.candidates import Candidate
from memory_service.core.search.filter import search_filter
from memory_service.core.search.schemas import MemorySearchInput, Suggestion
from memory_service.core.search.scoring import terms

RELATED_FROM_TOP = 10
RELATED_TERMS = 5


def suggestions_for(
    req: MemorySearchInput, ranked: Sequence[Candidate], good: int, stores: Stores
) -> list[Suggestion]:
    base: dict[str, Any] = req.model_dump(mode="json", exclude_defaults=True)
    out: list[Suggestion] = []
    if req.memory_types:
        others = _other_types(req, stores)
        found = ", ".join(f"{t} ({n})" for t, n in others.most_common(5))
        out.append(
            Suggestion(
                kind="broaden_types",
                message="Search all memory types"
                + (
                    f": other types also match ({found})" if found else " (the type filter may be too narrow)"
                ),
                arguments={k: v for k, v in base.items() if k != "memory_types"},
            )
        )
    if req.time_range is not None:
        out.append(
            Suggestion(
                kind="broaden_time",
                message="Drop the time_range filter: older or newer memories may answer this",
                arguments={k: v for k, v in base.items() if k != "time_range"},
            )
        )
    if req.mode != "deep":
        out.append(
            Suggestion(
                kind="deep_mode",
                message="Try mode='deep': adds fuzzy term matching and linked memories (graph expansion)",
                arguments={**base, "mode": "deep"},
            )
        )
    related = related_terms(req.query, ranked)
    if related:
        out.append(
            Suggestion(
                kind="related_terms",
                message=f"Related terms found in the index: {', '.join(related)}",
                arguments={**base, "query": f"{req.query} {' '.join(related[:2])}"},
            )
        )
    if not ranked:
        out.append(
            Suggestion(
                kind="rephrase",
                message="Nothing matched: describe the topic in other words, or store the knowledge with "
                "memory_add once you have it",
            )
        )
    return out


def related_terms(query: str, ranked: Sequence[Candidate]) -> list[str]:
    """Terms shared by several of the best hits that the query does not use, most common first."""
    asked = set(terms(query))
    counts: Counter[str] = Counter()
    for cand in ranked[:RELATED_FROM_TOP]:
        counts.update(t for t in terms(cand.record.embedding_text()) if t not in asked and not t.isdigit())
    shared = [t for t, n in counts.most_common() if n >= 2]
    return (shared or [t for t, _ in counts.most_common()])[:RELATED_TERMS]


def _other_types(req: MemorySearchInput, stores: Stores) -> Counter[str]:
    """Types of lexical matches outside the requested ones (one cheap BM25 query, no filter)."""
    try:
        hits = stores.vectors.search_sparse(
            MEMORIES, stores.sparse.encode_query(req.query), 20, search_filter(None, req.time_range)
        )
    except MemoryServiceError:
        return Counter()
    wanted = set(req.memory_types or ())
    return Counter(str(h.payload.get("type")) for h in hits if h.payload.get("type") not in wanted)
