"""Hybrid retrieval and the deterministic re-score: the one code path behind search and explain.

Candidates come from dense (MiniLM cosine) and sparse (BM25) search, each over the memories' own
vectors and over their thread-context vectors (:mod:`.threads`), optionally a fuzzy-corrected
second lexical query and one hop of graph expansion; reciprocal-rank fusion gives the ``base``
relevance; then :func:`memory_service.core.ranking.score` adds recency, kind, scope, citation,
utility, graph and thread components with the weights from settings. memory_search and memory_explain
both call :meth:`Ranker.rank` and :meth:`Ranker.score_records`, so their numbers are identical.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_service.core import ranking
from memory_service.core.models import MemoryRecord, Scope, utcnow
from memory_service.core.ports import PayloadFilter, ScoredPoint
from memory_service.core.records import MEMORIES, THREAD_FIELD, Stores, from_payload, thread_of
from memory_service.core.routing import GENERAL, Route
from memory_service.core.scopes import CallerScope, fixed
from memory_service.core.services.signals import GraphSignals, fuzzy_terms, utility_votes
from memory_service.core.ttl import is_expired
from memory_service.settings import RankingSettings

MODEL_WAIT_SECONDS = 30.0


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

    @property
    def route_used(self) -> str:
        """How the hit was found, in seed 004's terms (FR-029): semantic, fts or graph."""
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


class Ranker:
    def __init__(self, stores: Stores, settings: RankingSettings, scope: Scope | CallerScope) -> None:
        self._stores = stores
        self._settings = settings
        self._scope = fixed(scope)
        self._signals = GraphSignals(stores.graph)

    @property
    def stores(self) -> Stores:
        return self._stores

    @property
    def scope(self) -> Scope:
        """The caller's scope: what reads default to, and what scope proximity is measured from."""
        return self._scope.current()

    @property
    def settings(self) -> RankingSettings:
        return self._settings

    def model_ready(self) -> bool:
        return self._stores.embedder.wait_ready(MODEL_WAIT_SECONDS)

    def rank(self, query: str, flt: PayloadFilter, plan: Plan) -> list[Candidate]:
        """Retrieve, fuse and re-score; best first, ties broken by base relevance then id."""
        found: dict[str, Candidate] = {}
        rankings: dict[str, list[str]] = {}
        weights = {"dense": self._settings.dense_weight, "sparse": self._settings.sparse_weight}
        weights["sparse"] *= plan.route.sparse_boost
        weights["context_dense"] = weights["dense"] * self._settings.context_weight
        weights["context_sparse"] = weights["sparse"] * self._settings.context_weight
        vectors = self._stores.vectors
        context = self._settings.context_weight > 0 and vectors.has_context(MEMORIES)
        if plan.dense:
            vector = self._stores.embedder.embed_query(query)
            hits = vectors.search_dense(MEMORIES, vector, plan.pool, flt)
            rankings["dense"] = self._collect(found, hits, "dense")
            if context:
                in_context = vectors.search_dense(MEMORIES, vector, plan.pool, flt, context=True)
                self._context_view(found, rankings, "context_dense", hits, in_context, plan.pool)
        if plan.sparse:
            encoded = self._stores.sparse.encode_query(query)
            sparse_hits = vectors.search_sparse(MEMORIES, encoded, plan.pool, flt)
            rankings["sparse"] = self._collect(found, sparse_hits, "sparse")
            if context:
                in_context = vectors.search_sparse(MEMORIES, encoded, plan.pool, flt, context=True)
                self._context_view(found, rankings, "context_sparse", sparse_hits, in_context, plan.pool)
        if plan.fuzzy:
            vocabulary = [t for c in found.values() for t in ranking.terms(c.record.embedding_text())]
            corrected = fuzzy_terms(ranking.terms(query), vocabulary)
            if corrected:
                encoded = self._stores.sparse.encode_query(" ".join(corrected))
                rankings["fuzzy"] = self._collect(
                    found, vectors.search_sparse(MEMORIES, encoded, plan.pool, flt), "fuzzy"
                )
                weights["fuzzy"] = weights["sparse"] * 0.5
        if self._settings.fusion != "rrf":  # single-source profiles (bench baselines)
            keep = "dense" if self._settings.fusion == "dense" and "dense" in rankings else "sparse"
            weights = {keep: 1.0}
        base = ranking.rrf_fuse(rankings, weights, self._settings.rrf_k)
        seeds: set[str] = set()  # each hop starts from hits no earlier hop started from
        hops = plan.hops if self._settings.prf_docs and self._settings.fusion == "rrf" else 0
        for hop in range(hops):
            base = self._feedback_round(query, found, rankings, weights, base, flt, plan, hop + 1, seeds)
        if plan.expand:
            self._expand(found, flt)
        # RRF over truncated lists: a memory in none of them (reached by graph expansion) has base 0.
        bases: dict[str, float | None] = {cid: base.get(cid, 0.0) for cid in found}
        now = utcnow()  # expired memories are never returned, swept or not (core/ttl.py)
        candidates = [c for c in found.values() if not is_expired(c.record.expires_at, now)]
        self.score_candidates(query, candidates, bases, plan.route)
        return sort_candidates(candidates)

    def score_candidates(
        self, query: str | None, candidates: Sequence[Candidate], bases: dict[str, float | None], route: Route
    ) -> None:
        """Fill ``score`` of each candidate (reads the graph and the audit log, one batch each)."""
        ids = [c.record.id for c in candidates]
        graph = self._signals.load(ids)
        votes = utility_votes(self._stores.votes, ids)
        now = utcnow()
        known_base = {cid: b for cid, b in bases.items() if b is not None}
        thread_by_id = {c.record.id: thread_of(c.record) for c in candidates}
        threads: dict[str, list[tuple[str, float]]] = {}  # thread -> (id, base) of its candidates
        for cid, thread in thread_by_id.items():
            if thread is not None and cid in known_base:
                threads.setdefault(thread, []).append((cid, known_base[cid]))
        me = self._scope.current()
        for cand in candidates:
            rec = cand.record
            age = max((now - rec.updated_at).total_seconds() / 86400.0, 0.0)
            neighbours = [known_base[n] for n in graph.neighbours.get(rec.id, ()) if n in known_base]
            components: dict[str, float | None] = {
                "base": bases.get(rec.id),
                "semantic_boost": cand.similarity,
                "recency": ranking.recency(age, exempt=ranking.is_accepted_adr(rec.type, rec.metadata)),
                "kind_bonus": ranking.kind_bonus(rec.type, route.preferred_kinds),
                "scope": ranking.scope_proximity(rec.scope.project, rec.scope.branch, me.project, me.branch),
                "citations": None
                if graph.in_degree is None
                else ranking.citations(graph.in_degree.get(rec.id, 0), self._settings.citation_cap),
                "utility": ranking.utility(votes.get(rec.id, [])),
                "graph": None if graph.in_degree is None else ranking.graph_proximity(neighbours),
                "thread": None
                if (thread := thread_by_id[rec.id]) is None
                else ranking.thread_support([b for cid, b in threads.get(thread, ()) if cid != rec.id]),
            }
            cand.score = ranking.score(components, self._settings.resolved_weights())

    @staticmethod
    def annotate(query: str | None, candidates: Sequence[Candidate]) -> None:
        """Fill ``matches`` and ``confidence`` of the candidates a caller returns (not the whole pool:
        term matching every candidate would cost more than the search)."""
        asked = max(len(ranking.terms(query or "")), 1)
        for cand in candidates:
            cand.matches = ranking.matched_terms(query, cand.record.embedding_text()) if query else []
            base = (cand.score.components.get("base") if cand.score else None) or 0.0
            cand.confidence = ranking.confidence(cand.similarity, len(cand.matches) / asked, base)

    def _feedback_round(
        self,
        query: str,
        found: dict[str, Candidate],
        rankings: dict[str, list[str]],
        weights: dict[str, float],
        base: dict[str, float],
        flt: PayloadFilter,
        plan: Plan,
        hop: int,
        seeds: set[str],
    ) -> dict[str, float]:
        """One similarity hop (seed 002 ``semantic_hops``): search again from the best first-round hits.

        Pseudo-relevance feedback: the query plus the top hits' distinctive terms (lexical) and the
        query plus the best hit's text (dense) find memories that answer the question in words the
        question does not use. The new lists join the fusion at ``prf_weight``.
        """
        fresh = [i for i in sorted(base, key=lambda i: (-base[i], i)) if i not in seeds]
        top = fresh[: self._settings.prf_docs]
        if not top:
            return base
        seeds.update(top)
        texts = [found[i].record.embedding_text() for i in top]
        extra = ranking.expansion_terms(query, texts, self._settings.prf_terms)
        vectors = self._stores.vectors
        # Hop lists only re-order the head: a shorter list halves their payload cost.
        hop_pool = max(plan.pool // 2, 10)
        if extra and plan.sparse:
            encoded = self._stores.sparse.encode_query(f"{query} {' '.join(extra)}")
            rankings[f"sparse_hop{hop}"] = self._collect(
                found, vectors.search_sparse(MEMORIES, encoded, hop_pool, flt), "hop"
            )
            weights[f"sparse_hop{hop}"] = weights.get("sparse", 1.0) * self._settings.prf_weight
        if plan.dense and texts:
            vector = self._stores.embedder.embed_query(f"{query} {texts[0]}")
            rankings[f"dense_hop{hop}"] = self._collect(
                found, vectors.search_dense(MEMORIES, vector, hop_pool, flt), "hop"
            )
            weights[f"dense_hop{hop}"] = weights.get("dense", 1.0) * self._settings.prf_weight
        return ranking.rrf_fuse(rankings, weights, self._settings.rrf_k)

    def _context_view(
        self,
        found: dict[str, Candidate],
        rankings: dict[str, list[str]],
        source: str,
        own: list[ScoredPoint],
        in_context: list[ScoredPoint],
        pool: int,
    ) -> None:
        """The context list: memories of threads by their context vectors, the others by their own.

        Memories outside threads have no context vectors; reading them by their own scores here
        (same model, same scale) keeps session turns from gaining an edge by being searched twice.
        Added only when something in it has context, so a store without threads ranks as before.
        """
        if not in_context:
            return
        outside = [h for h in own if not h.payload.get(THREAD_FIELD)]
        merged = sorted(in_context + outside, key=lambda h: (-h.score, h.id))[:pool]
        rankings[source] = self._collect(found, merged, source)

    def _collect(self, found: dict[str, Candidate], hits: list[ScoredPoint], source: str) -> list[str]:
        top = max((h.score for h in hits), default=0.0)
        ids = []
        # Equal scores rank by id, not by where the engine stored the points: the same memories
        # rank the same in any store holding them (an import, a restore, another backend).
        for rank, hit in enumerate(sorted(hits, key=lambda h: (-h.score, h.id)), start=1):
            cand = found.get(hit.id)
            if cand is None:
                cand = found[hit.id] = Candidate(record=from_payload(hit.payload))
            cand.ranks[source] = rank
            if source == "dense" or (source == "context_dense" and cand.similarity is None):
                # A memory found only in context reports its context cosine as similarity.
                cand.similarity = min(max(hit.score, 0.0), 1.0)
            elif source == "sparse" and top > 0:
                cand.lexical = max(hit.score, 0.0) / top
            ids.append(hit.id)
        return ids

    def _expand(self, found: dict[str, Candidate], flt: PayloadFilter) -> None:
        """Add memories one hop away in the graph (deep mode) that pass the same filter."""
        linked = self._signals.neighbours_outside(list(found))
        for point in self._stores.vectors.retrieve(MEMORIES, linked) if linked else []:
            if passes(point.payload, flt):
                found.setdefault(point.id, Candidate(record=from_payload(point.payload)))


def passes(payload: dict[str, Any], flt: PayloadFilter) -> bool:
    """The payload filter evaluated in Python, for records fetched by id rather than searched."""

    def get(key: str) -> Any:
        value: Any = payload
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    if any(get(k) != v for k, v in flt.equals.items()):
        return False
    if any(get(k) not in vs for k, vs in flt.any_of.items()):
        return False
    if any(get(k) == v for k, v in flt.not_equals.items()):
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


def sort_candidates(candidates: list[Candidate]) -> list[Candidate]:
    def key(c: Candidate) -> tuple[float, float, str]:
        assert c.score is not None
        return (-c.score.total, -(c.score.components["base"] or 0.0), c.record.id)

    return sorted(candidates, key=key)
