"""What a search answers, from the ranker's candidates (memory_search; seed 002's ambient pack).

:func:`pack_results` takes the ranked pool (:meth:`.ranker.Ranker.rank`) through the steps between
ranking and the answer, in order: the hits (no ``link_only`` candidate is a hit on its own),
diversified by kind for an ambient read; those at or above ``min_similarity``, up to ``limit``;
each followed by its linked memories on a linked read (:func:`attach_links`); packed into the
token budget (:func:`pack`); annotated with term matches and confidence (:func:`annotate`, which
memory_explain uses too); and shown as :class:`SearchResult` s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memory_service.core.search import scoring as ranking
from memory_service.core.search.candidates import Candidate, Plan, sort_candidates
from memory_service.core.search.schemas import MemorySearchInput, SearchResult
from memory_service.core.ttl import stale_mark

AMBIENT_TOKEN_BUDGET = 2000


@dataclass
class Packed:
    """A search's answer before its envelope: the results and what the envelope says of them."""

    ranked: list[Candidate]  # the hits (by kind on an ambient read), before the floor: suggestions
    kept: list[Candidate]  # the results, as candidates
    results: list[SearchResult]
    pack_tokens: int | None = None  # the tokens the pack holds, when packed into a budget
    warnings: list[str] = field(default_factory=list)


def pack_results(query: str, found: list[Candidate], req: MemorySearchInput, plan: Plan) -> Packed:
    """The answer to ``req`` from ``found``, the ranker's pool best first (see the module's doc)."""
    ranked = [c for c in found if not c.link_only]  # a memory reached only as a link is no hit
    if req.read == "ambient":
        ranked = diversify(ranked, req.limit)
    lexical = not plan.dense
    kept = [c for c in ranked if _similarity(c, lexical) >= req.min_similarity][: req.limit]
    if plan.links:
        kept = attach_links(kept, found, req.limit)
    budget = req.token_budget or (AMBIENT_TOKEN_BUDGET if req.read == "ambient" else None)
    pack_tokens = None
    warnings: list[str] = []
    if budget is not None:
        kept, pack_tokens, dropped = pack(kept, budget)
        if dropped:
            warnings.append(f"{dropped} results left out to stay within a {budget}-token budget")
    annotate(query, kept)
    results = [_result(c, lexical) for c in kept]
    return Packed(ranked, kept, results, pack_tokens, warnings)


def attach_links(kept: Sequence[Candidate], ranked: Sequence[Candidate], limit: int) -> list[Candidate]:
    """The results of a linked read: each kept candidate followed by the memories linked to it
    (best-ranked first) that are not listed yet, marked ``via_link``; at most ``limit`` in all
    (links count toward it, so the lowest-ranked results give way to the top ones' links)."""
    by_id = {c.record.id: c for c in ranked}
    listed = {c.record.id for c in kept}
    out: list[Candidate] = []
    for cand in kept:
        out.append(cand)
        links = sort_candidates([by_id[i] for i in cand.linked if i in by_id and i not in listed])
        for link in links:
            link.via_link = True
            listed.add(link.record.id)
            out.append(link)
    return out[:limit]


def annotate(query: str | None, candidates: Sequence[Candidate]) -> None:
    """Fill ``matches`` and ``confidence`` of the candidates a caller returns (not the whole pool:
    term matching every candidate would cost more than the search)."""
    asked = max(len(ranking.terms(query or "")), 1)
    for cand in candidates:
        cand.matches = ranking.matched_terms(query, cand.record.embedding_text()) if query else []
        base = (cand.score.components.get("base") if cand.score else None) or 0.0
        cand.confidence = ranking.confidence(cand.similarity, len(cand.matches) / asked, base)


def estimate_tokens(cand: Candidate) -> int:
    """About 4 characters a token for the text an agent reads, plus a fixed cost for the fields."""
    record = cand.record
    return -(-(len(record.content) + len(record.title or "")) // 4) + 40


def pack(ranked: list[Candidate], budget: int) -> tuple[list[Candidate], int, int]:
    """Take results in rank order while they fit the budget (seed 002's ambient pack).

    A result too large for what is left is skipped and smaller later ones may still fit.
    Returns (kept, tokens used, how many were left out).
    """
    kept: list[Candidate] = []
    used = 0
    for cand in ranked:
        cost = estimate_tokens(cand)
        if used + cost <= budget:
            kept.append(cand)
            used += cost
    return kept, used, len(ranked) - len(kept)


def diversify(ranked: list[Candidate], limit: int) -> list[Candidate]:
    """Ambient packs mix kinds: at most a third of the pack (2 at least) from one kind, order kept;
    the rest follow, so nothing is lost when one kind is all there is."""
    cap = max(2, -(-limit // 3))
    taken: dict[str, int] = {}
    first, rest = [], []
    for cand in ranked:
        kind = cand.record.type
        if taken.get(kind, 0) < cap:
            taken[kind] = taken.get(kind, 0) + 1
            first.append(cand)
        else:
            rest.append(cand)
    return first + rest


def _similarity(cand: Candidate, lexical: bool) -> float:
    if lexical:
        return cand.lexical
    return cand.similarity if cand.similarity is not None else 0.0


def _result(cand: Candidate, lexical: bool) -> SearchResult:
    record = cand.record
    assert cand.score is not None
    return SearchResult(
        memory_id=record.id,
        type=record.type,
        content=record.content,
        similarity=round(_similarity(cand, lexical), 4),
        relevance_score=round(cand.score.total, 4),
        metadata=record.metadata,
        title=record.title,
        created_at=record.created_at.isoformat(),
        route_used=cand.route_used,
        confidence=cand.confidence,
        stale=stale_mark(record),
    )
