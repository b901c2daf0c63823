"""Ranking signals read from the stores for one candidate pool: links, utility votes, fuzzy terms.

Kept apart from :mod:`ranker` so each read is one batched call whose failure degrades a single
component to ``null`` (the graph being down must not fail a search).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memory_service.core.errors import MemoryServiceError
from memory_service.core.ports import GraphStore, VoteStore
from memory_service.core.records import MEMORY_LABEL

# Links that say "this replaced that": not evidence that a memory is cited or related in meaning.
NOT_CITATIONS = ("SUPERSEDES",)
UTILITY_VOTE = "utility_vote"
MAX_VOTES_READ = 500


@dataclass
class GraphFacts:
    """In-degree per memory (None when the graph could not be read) and memory neighbours."""

    in_degree: dict[str, int] | None = None
    neighbours: dict[str, list[str]] = field(default_factory=dict)


class GraphSignals:
    def __init__(self, graph: GraphStore) -> None:
        self._graph = graph

    def load(self, ids: Sequence[str]) -> GraphFacts:
        """Incoming-link counts and memory-to-memory neighbours of ``ids``, in two store reads."""
        if not ids:
            return GraphFacts(in_degree={})
        try:
            degree = self._graph.in_degree(MEMORY_LABEL, ids, NOT_CITATIONS)
            neighbours = self._graph.neighbours(MEMORY_LABEL, ids)
        except MemoryServiceError:
            return GraphFacts()
        return GraphFacts(in_degree=degree, neighbours=neighbours)

    def neighbours_outside(self, ids: Sequence[str], limit: int = 200) -> list[str]:
        """Memories one hop from ``ids`` that are not among them (graph expansion)."""
        facts = self.load(ids)
        inside = set(ids)
        out: dict[str, None] = {}
        for a in ids:
            for b in facts.neighbours.get(a, ()):
                if b not in inside:
                    out.setdefault(b, None)
        return list(out)[:limit]


def utility_votes(votes: VoteStore, ids: Iterable[str]) -> dict[str, list[float]]:
    """Utility votes per memory (memory_feedback writes them), the latest MAX_VOTES_READ per
    memory, in one batched read; none when the store cannot be read (the component goes null)."""
    try:
        return votes.of(list(ids), latest=MAX_VOTES_READ)
    except MemoryServiceError:
        return {}


def fuzzy_terms(query_terms: Sequence[str], vocabulary: Iterable[str], cutoff: float = 0.8) -> list[str]:
    """Spelling corrections: query terms absent from the pool's vocabulary mapped to close words.

    ``["retyr", "logic"]`` with "retry" in the vocabulary gives ``["retry"]``. Only corrections
    are returned, so an empty list means there is nothing to retry with.
    """
    vocab = sorted(set(vocabulary))
    known = set(vocab)
    out: list[str] = []
    for term in query_terms:
        if term in known or len(term) < 4:
            continue
        close = difflib.get_close_matches(term, vocab, n=1, cutoff=cutoff)
        if close:
            out.append(close[0])
    return out
