"""What a search handles: a :class:`Candidate` (a memory found for a query, with where it came
from and how it scored) and the :class:`Plan` of a query (which sources, how wide); shared by the
ranker (:mod:`.ranker`), the graph reach of the pool (:mod:`.expansion`), the results
(:mod:`.results`), memory_explain and the suggestions."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_service.core.models import MemoryRecord
from memory_service.core.ports import PayloadFilter
from memory_service.core.search import scoring as ranking
from memory_service.core.search.routing import GENERAL, Route
from memory_service.settings import RankingWeights


@dataclass
class Candidate:
    """A record found for a query, with where it came from and how it scored."""

    record: MemoryRecord
    similarity: float | None = None  # dense cosine, 0..1; None when not embedded / lexical search
    lexical: float = 0.0  # BM25 score normalised by the query's best, 0..1
    ranks: dict[str, int] = field(default_factory=dict)  # source -> 1-based rank
    score: ranking.Score | None = None
    matches: list[str] = field(default_factory=list)
    confidence: float = 0.0
    linked: list[str] = field(default_factory=list)  # memories a linked read attaches after this one
    link_only: bool = False  # reached only as a link (a linked read): never a result on its own
    via_link: bool = False  # placed in the results as a link (attach_links)

    @property
    def route_used(self) -> str:
        """How the hit was found, in seed 004's terms (FR-029): semantic, fts or graph."""
        if self.via_link:
            return "graph"
        if {"dense", "context_dense", "hop"} & self.ranks.keys():
            return "semantic"
        if {"sparse", "context_sparse", "fuzzy"} & self.ranks.keys():
            return "fts"
        return "graph"


@dataclass(frozen=True)
class Plan:
    """What to run for one query: which sources, how wide, which kinds the route favours."""

    dense: bool = True
    sparse: bool = True
    fuzzy: bool = False
    expand: bool = False
    hops: int = 0  # pseudo-relevance-feedback rounds (seed 002 semantic_hops), each from the new top
    pool: int = 50
    route: Route = GENERAL
    links: frozenset[str] = frozenset()  # link families attached after their anchors (signals.py)
    skip_links: frozenset[str] = frozenset()  # link families graph expansion must not follow
    link_filter: PayloadFilter | None = None  # what a linked memory must pass (default: the read's)
    problem: str | None = None  # the read's problem context for utility (None: implied by the pool)
    weights: RankingWeights | None = None  # the re-score's weights (None: the settings'), e.g. FR-024


def sort_candidates(candidates: list[Candidate]) -> list[Candidate]:
    """Best first: by total score, ties by base relevance, then by id."""

    def key(c: Candidate) -> tuple[float, float, str]:
        assert c.score is not None
        return (-c.score.total, -(c.score.components["base"] or 0.0), c.record.id)

    return sorted(candidates, key=key)
