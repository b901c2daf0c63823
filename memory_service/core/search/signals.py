"""Ranking signals read from the stores for one candidate pool: links, utility votes, fuzzy terms.

Kept apart from :mod:`ranker` so each read is one batched call whose failure degrades a single
component to ``null`` (the graph being down must not fail a search).

Linked reads (memory_search ``include_problem_links`` / ``include_fact_update_links``) sort the
pool's memory-to-memory edges into two families with :func:`edge_family`: a problem with its
solutions and failed tactics, and the fact-update chain memory_supersede writes. Either end of
such an edge brings the other (a problem its fixes and dead ends, a fix its problem).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memory_service.core.errors import MemoryServiceError
from memory_service.core.models import PROBLEM_LINKED_KINDS
from memory_service.core.ports import GraphEdge, GraphStore, VoteStore
from memory_service.core.records import MEMORY_LABEL

# Links that say "this replaced that": not evidence that a memory is cited or related in meaning.
NOT_CITATIONS = ("SUPERSEDES",)
UTILITY_VOTE = "utility_vote"
MAX_VOTES_READ = 500
MAX_LINKED = 200  # memories one hop away read for one pool (graph expansion, linked reads)

# Link families of a linked read, and what makes an edge one of them.
PROBLEM_LINKS = "problem"
FACT_UPDATE_LINKS = "fact_update"
PROBLEM_KIND = "problem"
# memory_add's edge from a solution / failed tactic to its problem (kinds.PROBLEM_EDGE).
PROBLEM_LINK_EDGES = ("SOLVES", "FAILED_FOR")
# memory_supersede's chain (supersede.py): new fact and change SUPERSEDE the old fact, the change
# INTRODUCES the new one.
FACT_UPDATE_EDGES = ("SUPERSEDES", "INTRODUCES")
FACT_UPDATE_KINDS = ("fact", "change")


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

    def edges(self, ids: Sequence[str]) -> list[GraphEdge] | None:
        """Every memory-to-memory edge touching ``ids``, with its type, in one read; None when the
        graph cannot be read (the linked read then adds nothing, as expansion does)."""
        if not ids:
            return []
        try:
            return self._graph.edges_between(MEMORY_LABEL, {MEMORY_LABEL: list(ids)})
        except MemoryServiceError:
            return None


def edge_family(edge: GraphEdge, kinds: Mapping[str, str]) -> str | None:
    """The link family of a memory-to-memory edge (``kinds``: memory id -> type), None for others.

    PROBLEM_LINKS: an edge into a problem from a solution or failed tactic (whatever its type: a
    relationship to the problem links them too), or a SOLVES / FAILED_FOR edge into a problem.
    FACT_UPDATE_LINKS: a SUPERSEDES / INTRODUCES edge between facts and changes.
    """
    source, target = kinds.get(edge.source_id), kinds.get(edge.target_id)
    if target == PROBLEM_KIND and (edge.type in PROBLEM_LINK_EDGES or source in PROBLEM_LINKED_KINDS):
        return PROBLEM_LINKS
    if edge.type in FACT_UPDATE_EDGES and source in FACT_UPDATE_KINDS and target in FACT_UPDATE_KINDS:
        return FACT_UPDATE_LINKS
    return None


def utility_votes(votes: VoteStore, ids: Iterable[str]) -> dict[str, list[tuple[str, float]]]:
    """Utility votes per memory as (problem_id, vote), oldest first (memory_feedback writes them;
    ranking.contextual_utility keeps the latest MAX_VOTES_READ it uses), in one batched read;
    none when the store cannot be read (the component goes null)."""
    try:
        cast = votes.all_of(list(ids))
    except MemoryServiceError:
        return {}
    out: dict[str, list[tuple[str, float]]] = {}
    for vote in cast:
        out.setdefault(vote.memory_id, []).append((vote.problem_id, vote.vote))
    return out


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
