"""Pure scoring functions for hybrid search (seed 004 FR-021, FR-024, FR-025; seed 000 components).

Everything here is deterministic and free of I/O so that memory_search and memory_explain, which
both call :func:`score`, report identical numbers, and so each rule is unit-testable on its own.
A component that cannot be derived for a record is ``None``: it contributes nothing to the total
and memory_explain shows it as ``null`` (seed 000: unknown components are null, never omitted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_service.settings import RankingWeights

COMPONENTS = (
    "base",
    "semantic_boost",
    "recency",
    "kind_bonus",
    "scope",
    "citations",
    "utility",
    "graph",
    "thread",
    "time",
    "date",
    "speaker",
)
THREAD_SUPPORT_K = 2

RECENT_DAYS = 7.0
OLD_DAYS = 180.0
OLD_FLOOR = 0.1

_TERM = re.compile(r"[a-z0-9]+")
_STOP_TEXT = (
    "a an and are as at be been but by can could did do does for from had has have he her him his how "
    "i if in into is it its me my of on or our she so than that the their them then there these they "
    "this to was we were what when where which who whom why will with would you your"
)
STOPWORDS = frozenset(_STOP_TEXT.split(" "))


def lexical_similarity(scores: Sequence[float]) -> list[float]:
    """Map raw BM25 scores to [0, 1] for the ``similarity`` field of lexical-only results.

    BM25 has no fixed scale, so scores are divided by the best score of the same query: the top
    hit reads 1.0 and the rest keep their proportions. Empty input gives an empty list.
    """
    top = max(scores, default=0.0)
    if top <= 0:
        return [0.0 for _ in scores]
    return [max(s, 0.0) / top for s in scores]


def rrf_fuse(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int) -> dict[str, float]:
    """Reciprocal-rank fusion, normalised to [0, 1].

    Each source contributes ``weight / (k + rank)`` (rank from 1); the sum is divided by the best
    possible sum (rank 1 in every weighted source), so an id first everywhere reads 1.0. Ranks,
    not raw scores, are fused because cosine and BM25 live on unrelated scales.
    """
    best = sum(w for src, w in weights.items() if src in rankings) / (k + 1)
    fused: dict[str, float] = {}
    for source, ids in rankings.items():
        weight = weights.get(source, 0.0)
        if weight <= 0:
            continue
        for rank, item in enumerate(ids, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    if best <= 0:
        return dict.fromkeys(fused, 0.0)
    return {item: value / best for item, value in fused.items()}


def recency(age_days: float, *, exempt: bool = False) -> float:
    """1.0 within 7 days, decaying logarithmically to 0.1 at 180 days and beyond (seed 004 A-007).

    Accepted ADRs are exempt (FR-025): a standing decision does not grow less true with age.
    """
    if exempt or age_days <= RECENT_DAYS:
        return 1.0
    if age_days >= OLD_DAYS:
        return OLD_FLOOR
    fraction = math.log(age_days / RECENT_DAYS) / math.log(OLD_DAYS / RECENT_DAYS)
    return 1.0 - (1.0 - OLD_FLOOR) * fraction


def is_accepted_adr(memory_type: str, metadata: Mapping[str, Any]) -> bool:
    return (
        memory_type == "design"
        and str(metadata.get("design_type", "")).upper() == "ADR"
        and str(metadata.get("status", "")).lower() == "accepted"
    )


def scope_proximity(
    project: str | None, branch: str | None, my_project: str | None, my_branch: str | None
) -> float:
    """1.0 same branch, 0.5 same project on another branch, 0.2 another project (FR-021)."""
    if project != my_project:
        return 0.2
    return 1.0 if branch == my_branch else 0.5


def kind_bonus(memory_type: str, preferred: Sequence[str]) -> float:
    """1.0 when the query's route prefers this kind (earlier kinds slightly more), else 0.0."""
    if memory_type not in preferred:
        return 0.0
    position = list(preferred).index(memory_type)
    return max(1.0 - 0.1 * position, 0.5)


def citations(in_degree: int, cap: int) -> float:
    """Incoming links on a log scale, saturating at ``cap`` (seed 004 A-008: times referenced)."""
    if in_degree <= 0:
        return 0.0
    return min(math.log1p(in_degree) / math.log1p(cap), 1.0)


def utility(votes: Sequence[float]) -> float | None:
    """Mean utility vote in [-1, 1]; None when nobody has voted (unknown, not neutral)."""
    if not votes:
        return None
    return max(-1.0, min(1.0, sum(votes) / len(votes)))


def contextual_utility(
    votes: Sequence[tuple[str, float]], problem: str | None, *, latest: int = 500
) -> float | None:
    """A memory's utility for one read: the mean of its votes cast for the read's ``problem``.

    Votes are ``(problem_id, vote)`` pairs, oldest first (seed 002: a vote says how useful the
    memory was for one problem, so a fix that helped with one problem and misled on another ranks
    by the problem at hand). Without a problem context, or with none of its votes cast for that
    problem, every vote counts. Only the ``latest`` of the votes used count; None when none.
    """
    if problem is not None:
        own = [vote for pid, vote in votes if pid == problem]
        if own:
            return utility(own[-latest:])
    return utility([vote for _, vote in votes][-latest:])


def graph_proximity(neighbour_bases: Sequence[float]) -> float:
    """How strongly linked memories also match: the best base relevance among linked candidates.

    A memory whose neighbours (e.g. the problem a solution solves) match the query is likely
    relevant even when its own wording differs.
    """
    return max(neighbour_bases, default=0.0)


def thread_support(other_bases: Sequence[float], k: int = THREAD_SUPPORT_K) -> float:
    """How well the rest of a memory's thread matches: the mean ``base`` of the ``k`` best other
    candidates of the same thread (missing ones count 0). A reply inside an exchange that matches
    the query is likelier to be the answer than a lone hit in an unrelated conversation; a memory
    alone in its thread gets 0, as a memory outside threads gets nothing (its value is None)."""
    best = sorted(other_bases, reverse=True)[:k]
    return sum(best) / k


@dataclass(frozen=True)
class Score:
    total: float
    components: dict[str, float | None]


def score(components: Mapping[str, float | None], weights: RankingWeights) -> Score:
    """The weighted sum of the known components; every name in COMPONENTS is present in the output."""
    by_name = {
        "base": weights.base,
        "semantic_boost": weights.semantic,
        "recency": weights.recency,
        "kind_bonus": weights.kind,
        "scope": weights.scope,
        "citations": weights.citations,
        "utility": weights.utility,
        "graph": weights.graph,
        "thread": weights.thread,
        "time": weights.time,
        "date": weights.date,
        "speaker": weights.speaker,
    }
    full: dict[str, float | None] = {}
    total = 0.0
    for name in COMPONENTS:
        value = components.get(name)
        full[name] = None if value is None else round(value, 6)
        if value is not None:
            total += by_name[name] * value
    return Score(total=round(total, 6), components=full)


def terms(text: str) -> list[str]:
    """Lower-case word terms without stopwords, in first-seen order (for matches and suggestions)."""
    seen: dict[str, None] = {}
    for term in _TERM.findall(text.lower()):
        if term not in STOPWORDS and len(term) > 1:
            seen.setdefault(term, None)
    return list(seen)


def stem(word: str) -> str:
    """A light English suffix strip ("retries" -> "retry", "cached" -> "cach"), enough to match
    inflections in explanations; BM25 itself uses the Snowball stemmer."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            return word[: -len(suffix)]
    return word


def matched_terms(query: str, text: str) -> list[str]:
    """Query terms found in the text, exactly or by stem ("retries" matches "retry")."""
    words = set(terms(text))
    stems = {stem(w) for w in words}
    return [t for t in terms(query) if t in words or stem(t) in stems]


def expansion_terms(query: str, texts: Sequence[str], limit: int) -> list[str]:
    """Terms the top hits share that the query lacks, for a feedback round (RM3-style, unweighted).

    Ordered by how many of the texts hold the term, then by total count, then alphabetically, so
    the choice is deterministic; numbers and very short words are left out.
    """
    asked = set(terms(query))
    docs: dict[str, int] = {}
    counts: dict[str, int] = {}
    for text in texts:
        words = [
            w for w in _TERM.findall(text.lower()) if w not in STOPWORDS and len(w) > 2 and not w.isdigit()
        ]
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        for word in set(words):
            docs[word] = docs.get(word, 0) + 1
    ranked = sorted((w for w in docs if w not in asked), key=lambda w: (-docs[w], -counts[w], w))
    return ranked[:limit]


def confidence(similarity: float | None, coverage: float, base: float) -> float:
    """A 0-1 reading of how sure a hit is, for agents deciding whether to trust it.

    Blends the dense cosine (MiniLM cosines above ~0.6 are strong matches, below ~0.2 noise), the
    share of query terms the hit contains, and the fused rank; without a dense score the lexical
    evidence carries the weight.
    """
    if similarity is None:
        return round(min(1.0, 0.6 * coverage + 0.4 * base), 4)
    semantic = min(max((similarity - 0.2) / 0.45, 0.0), 1.0)
    return round(min(1.0, 0.55 * semantic + 0.3 * coverage + 0.15 * base), 4)
