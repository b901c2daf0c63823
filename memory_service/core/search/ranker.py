"""Hybrid retrieval and the deterministic re-score: the one code path behind search and explain.

Candidates come from dense (MiniLM cosine) and sparse (BM25) search, each over the memories' own
vectors and over their thread-context vectors, optionally a fuzzy-corrected second lexical query
and one hop of graph expansion (:mod:`.expansion`); reciprocal-rank fusion gives the ``base``
relevance; then :func:`memory_service.core.search.scoring.score` adds recency, kind, scope, citation,
utility, graph and thread components and the query cues (:mod:`memory_service.core.search.cues`: time,
date, speaker) with the weights from settings. memory_search and memory_explain
both call :meth:`Ranker.rank` and :meth:`Ranker.score_candidates`, so their numbers are identical;
what a search answers from the ranked pool is :mod:`.results`' work.

Utility is contextual (seed 002 votes are per memory and problem): a read's problem context is the
plan's ``problem``, else the best-ranked problem among the candidates; each memory then counts its
votes for that problem (all its votes when it has none for it, or without a context).

A plan's ``links`` (memory_search include_problem_links / include_fact_update_links) add the
pool's linked memories (:func:`signals.edge_family`) as candidates marked ``link_only`` and list
them on their anchor's ``linked``; :func:`.results.attach_links` puts them after their anchors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from memory_service.core.models import MemoryRecord, Scope, utcnow
from memory_service.core.ports import PayloadFilter, ScoredPoint
from memory_service.core.records import MEMORIES, Stores, from_payload, thread_of
from memory_service.core.scopes import CallerScope, fixed
from memory_service.core.search import scoring as ranking
from memory_service.core.search.candidates import Candidate, Plan, sort_candidates
from memory_service.core.search.cues import QueryCues
from memory_service.core.search.expansion import GraphReach
from memory_service.core.search.routing import Route
from memory_service.core.search.signals import (
    MAX_VOTES_READ,
    PROBLEM_KIND,
    GraphSignals,
    fuzzy_terms,
    utility_votes,
)
from memory_service.core.ttl import is_expired
from memory_service.settings import RankingSettings, RankingWeights

MODEL_WAIT_SECONDS = 30.0
# The first-round lists, in the order their ranks are noted (a memory found only in context reports
# its context cosine as similarity: the dense list goes first).
SOURCES = ("dense", "context_dense", "sparse", "context_sparse")
# Query embeddings, off the searching thread (one at a time per worker; ONNX Runtime runs them
# without the GIL). Two workers: two sessions' queries embed at once, as they did inline.
_EMBEDDER_THREAD = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embed")


class Ranker:
    def __init__(self, stores: Stores, settings: RankingSettings, scope: Scope | CallerScope) -> None:
        self._stores = stores
        self._settings = settings
        self._scope = fixed(scope)
        self._signals = GraphSignals(stores.graph)
        self._reach = GraphReach(stores, self._signals)

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
        # The query is embedded on another thread (the model runs without the GIL) while the
        # lexical searches run here: the two costs overlap instead of adding up.
        embedding = _EMBEDDER_THREAD.submit(self._stores.embedder.embed_query, query) if plan.dense else None
        # The lists come without payloads and are fused by id first; only the head of the fusion is
        # read and re-scored (reading a payload is most of a search's cost at 100k memories).
        lists: dict[str, list[ScoredPoint]] = {}
        if plan.sparse:
            encoded = self._stores.sparse.encode_query(query)
            lists["sparse"] = vectors.search_sparse(MEMORIES, encoded, plan.pool, flt, payload=False)
            if context:
                lists["context_sparse"] = vectors.search_sparse(
                    MEMORIES, encoded, plan.pool, flt, context=True, payload=False
                )
        if embedding is not None:
            vector = embedding.result()
            lists["dense"] = vectors.search_dense(MEMORIES, vector, plan.pool, flt, payload=False)
            if context:
                lists["context_dense"] = vectors.search_dense(
                    MEMORIES, vector, plan.pool, flt, context=True, payload=False
                )
        if context:
            self._context_views(lists, plan.pool)
        # A list the plan ran counts in the fusion's scale even when empty (as a context view
        # counts only when something in it has context).
        ordered = {source: _by_score(lists[source]) for source in SOURCES if source in lists}
        rankings.update((source, [h.id for h in hits]) for source, hits in ordered.items())
        base = ranking.rrf_fuse(rankings, self._fusion_weights(weights, rankings), self._settings.rrf_k)
        for record in self._read_head(base, self._rescored(plan)):
            found[record.id] = Candidate(record=record)
        for source, hits in ordered.items():
            _note(found, hits, source)
        if plan.fuzzy:
            vocabulary = [t for c in found.values() for t in ranking.terms(c.record.embedding_text())]
            corrected = fuzzy_terms(ranking.terms(query), vocabulary)
            if corrected:
                encoded = self._stores.sparse.encode_query(" ".join(corrected))
                rankings["fuzzy"] = self._collect(
                    found, vectors.search_sparse(MEMORIES, encoded, plan.pool, flt), "fuzzy"
                )
                weights["fuzzy"] = weights["sparse"] * 0.5
                base = ranking.rrf_fuse(
                    rankings, self._fusion_weights(weights, rankings), self._settings.rrf_k
                )
        weights = self._fusion_weights(weights, rankings)
        seeds: set[str] = set()  # each hop starts from hits no earlier hop started from
        hops = plan.hops if self._settings.prf_docs and self._settings.fusion == "rrf" else 0
        for hop in range(hops):
            base = self._feedback_round(query, found, rankings, weights, base, flt, plan, hop + 1, seeds)
        if plan.expand:
            self._reach.expand(found, flt, plan.skip_links)
        if plan.links:
            self._reach.link(found, plan.link_filter or flt, plan.links)
        # RRF over truncated lists: a memory in none of them (reached by graph expansion) has base 0.
        bases: dict[str, float | None] = {cid: base.get(cid, 0.0) for cid in found}
        now = utcnow()  # expired memories are never returned, swept or not (core/ttl.py)
        candidates = [c for c in found.values() if not is_expired(c.record.expires_at, now)]
        parts, votes = self.score_candidates(
            query, candidates, bases, plan.route, problem=plan.problem, weights=plan.weights
        )
        ranked = sort_candidates(candidates)
        if plan.problem is None and (implied := implied_problem(ranked, votes)) is not None:
            rescore = plan.weights or self._settings.resolved_weights()
            _total(candidates, parts, votes, implied, rescore)  # only utility moves
            ranked = sort_candidates(candidates)
        return ranked

    def score_candidates(
        self,
        query: str | None,
        candidates: Sequence[Candidate],
        bases: dict[str, float | None],
        route: Route,
        *,
        problem: str | None = None,
        weights: RankingWeights | None = None,
    ) -> tuple[dict[str, dict[str, float | None]], dict[str, list[tuple[str, float]]]]:
        """Fill ``score`` of each candidate (reads the graph and the vote store, one batch each);
        utility counts the votes cast for ``problem`` (ranking.contextual_utility). Returns the
        other components and the votes, by id, so that a caller can re-score for another problem."""
        parts = self._components(query, candidates, bases, route)
        votes = utility_votes(self._stores.votes, [c.record.id for c in candidates])
        _total(candidates, parts, votes, problem, weights or self._settings.resolved_weights())
        return parts, votes

    def _components(
        self, query: str | None, candidates: Sequence[Candidate], bases: dict[str, float | None], route: Route
    ) -> dict[str, dict[str, float | None]]:
        """Every component but utility (which depends on the read's problem context), by id."""
        cues = QueryCues.of(query)
        ids = [c.record.id for c in candidates]
        graph = self._signals.load(ids)
        now = utcnow()
        known_base = {cid: b for cid, b in bases.items() if b is not None}
        thread_by_id = {c.record.id: thread_of(c.record) for c in candidates}
        threads: dict[str, list[tuple[str, float]]] = {}  # thread -> (id, base) of its candidates
        for cid, thread in thread_by_id.items():
            if thread is not None and cid in known_base:
                threads.setdefault(thread, []).append((cid, known_base[cid]))
        me = self._scope.current()
        parts: dict[str, dict[str, float | None]] = {}
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
                "graph": None if graph.in_degree is None else ranking.graph_proximity(neighbours),
                "thread": None
                if (thread := thread_by_id[rec.id]) is None
                else ranking.thread_support([b for cid, b in threads.get(thread, ()) if cid != rec.id]),
                **cues.components(rec.content, rec.metadata, rec.created_at),
            }
            parts[rec.id] = components
        return parts

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
        fresh = [i for i in sorted(base, key=lambda i: (-base[i], i)) if i not in seeds and i in found]
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

    def _fusion_weights(
        self, weights: dict[str, float], rankings: Mapping[str, list[str]]
    ) -> dict[str, float]:
        """The weights the fusion uses: ``weights``, or one source for single-source profiles."""
        if self._settings.fusion == "rrf":
            return weights
        keep = "dense" if self._settings.fusion == "dense" and "dense" in rankings else "sparse"
        return {keep: 1.0}

    def _rescored(self, plan: Plan) -> int:
        """How many memories of the fused lists are read and re-scored."""
        return max(1, round(plan.pool * self._settings.rescore_factor))

    def _read_head(self, fused: Mapping[str, float], wanted: int) -> list[MemoryRecord]:
        """The best-fused memories, ``wanted`` of them that are not expired (read by id, in chunks,
        until that many are found or the lists run out); a hit whose memory is gone (a context
        pair outliving it) is passed over."""
        order = sorted(fused, key=lambda i: (-fused[i], i))
        now = utcnow()
        records: list[MemoryRecord] = []
        live = start = 0
        while live < wanted and start < len(order):
            chunk = order[start : start + wanted - live]
            start += len(chunk)
            for point in self._stores.vectors.retrieve(MEMORIES, chunk):
                record = from_payload(point.payload)
                records.append(record)
                live += not is_expired(record.expires_at, now)
        return records

    def _context_views(self, lists: dict[str, list[ScoredPoint]], pool: int) -> None:
        """The context lists: memories of threads by their context vectors, the others by their own.

        Memories outside threads have no context vectors; reading them by their own scores here
        (same model, same scale) keeps session turns from gaining an edge by being searched twice.
        A thread's first memory has none either, as its context is itself: its own scores are
        what its context vectors would give. (Stores written before that rule hold a copy of its
        own vectors as its pair, which reads the same.) So a memory is read by its context
        exactly when it has a context pair, and one read of ids tells them apart. A context list
        is kept only when something in it has context, so a store without threads ranks as before.
        """
        own_ids = [h.id for source in ("dense", "sparse") for h in lists.get(source, ())]
        threaded = self._stores.vectors.context_ids(MEMORIES, own_ids) if own_ids else set()
        for own, view in (("dense", "context_dense"), ("sparse", "context_sparse")):
            in_context = lists.pop(view, [])
            if in_context:
                outside = [h for h in lists.get(own, ()) if h.id not in threaded]
                lists[view] = _by_score(in_context + outside)[:pool]

    def _collect(self, found: dict[str, Candidate], hits: list[ScoredPoint], source: str) -> list[str]:
        """A list whose hits carry payloads (the feedback and fuzzy searches): every hit joins."""
        ordered = _by_score(hits)
        for hit in ordered:
            if hit.id not in found:
                found[hit.id] = Candidate(record=from_payload(hit.payload))
        _note(found, ordered, source)
        return [h.id for h in ordered]


def _by_score(hits: Sequence[ScoredPoint]) -> list[ScoredPoint]:
    """Best first; equal scores by id, not by where the engine stored the points: the same
    memories rank the same in any store holding them (an import, a restore, another backend)."""
    return sorted(hits, key=lambda h: (-h.score, h.id))


def _note(found: Mapping[str, Candidate], ordered: Sequence[ScoredPoint], source: str) -> None:
    """Record each found candidate's rank in ``source`` (a list best first) and what it measured."""
    top = max((h.score for h in ordered), default=0.0)
    for rank, hit in enumerate(ordered, start=1):
        cand = found.get(hit.id)
        if cand is None:  # below the re-scored head
            continue
        cand.ranks[source] = rank
        if source == "dense" or (source == "context_dense" and cand.similarity is None):
            # A memory found only in context reports its context cosine as similarity.
            cand.similarity = min(max(hit.score, 0.0), 1.0)
        elif source == "sparse" and top > 0:
            cand.lexical = max(hit.score, 0.0) / top


def _total(
    candidates: Sequence[Candidate],
    parts: Mapping[str, dict[str, float | None]],
    votes: Mapping[str, Sequence[tuple[str, float]]],
    problem: str | None,
    weights: RankingWeights,
) -> None:
    """Each candidate's score: its components plus its utility for the ``problem`` context."""
    for cand in candidates:
        rid = cand.record.id
        utility = ranking.contextual_utility(votes.get(rid, ()), problem, latest=MAX_VOTES_READ)
        cand.score = ranking.score({**parts[rid], "utility": utility}, weights)


def implied_problem(
    ranked: Sequence[Candidate], votes: Mapping[str, Sequence[tuple[str, float]]]
) -> str | None:
    """A read's problem context when it names none: the best-ranked problem found by the search
    itself (not a link), when some candidate has votes cast for it (else nothing would move)."""
    problem = next((c.record.id for c in ranked if c.record.type == PROBLEM_KIND and not c.link_only), None)
    if problem is None or not any(pid == problem for cast in votes.values() for pid, _ in cast):
        return None
    return problem
