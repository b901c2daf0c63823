"""Pure scoring rules of core/search/scoring.py and core/search/routing.py (no engines needed)."""

from __future__ import annotations

import math

import pytest

from memory_service.core.search import scoring as ranking
from memory_service.core.search.routing import route_for
from memory_service.core.search.signals import fuzzy_terms
from memory_service.settings import RANKING_PROFILES, RankingSettings, RankingWeights


def test_rrf_first_everywhere_reads_one_and_ranks_by_agreement() -> None:
    fused = ranking.rrf_fuse({"dense": ["a", "b", "c"], "sparse": ["a", "c"]}, {"dense": 1, "sparse": 1}, 60)
    assert fused["a"] == pytest.approx(1.0)
    assert fused["c"] > fused["b"]  # found by both sources beats found by one
    assert all(0 < v <= 1 for v in fused.values())


def test_rrf_weights_and_missing_sources() -> None:
    only_dense = ranking.rrf_fuse({"dense": ["a", "b"]}, {"dense": 1.0, "sparse": 1.0}, 60)
    assert only_dense["a"] == pytest.approx(1.0)  # the best possible sum counts present sources only
    lexical_heavy = ranking.rrf_fuse(
        {"dense": ["a", "b"], "sparse": ["b", "a"]}, {"dense": 1, "sparse": 3}, 60
    )
    assert lexical_heavy["b"] > lexical_heavy["a"]
    assert ranking.rrf_fuse({}, {"dense": 1}, 60) == {}


@pytest.mark.parametrize(
    ("age", "expected"),
    [(0, 1.0), (7, 1.0), (180, 0.1), (400, 0.1), (math.sqrt(7 * 180), 0.55)],
)
def test_recency_decays_logarithmically_from_7_to_180_days(age: float, expected: float) -> None:
    assert ranking.recency(age) == pytest.approx(expected, abs=1e-9)


def test_recency_is_monotonic_and_accepted_adrs_are_exempt() -> None:
    values = [ranking.recency(d) for d in range(0, 200, 5)]
    assert values == sorted(values, reverse=True)
    assert ranking.recency(365, exempt=True) == 1.0
    assert ranking.is_accepted_adr("design", {"design_type": "ADR", "status": "accepted"})
    assert not ranking.is_accepted_adr("design", {"design_type": "ADR", "status": "proposed"})
    assert not ranking.is_accepted_adr("session", {"design_type": "ADR", "status": "accepted"})


def test_scope_proximity_follows_fr_021() -> None:
    assert ranking.scope_proximity("p", "main", "p", "main") == 1.0
    assert ranking.scope_proximity("p", "feature", "p", "main") == 0.5
    assert ranking.scope_proximity("q", "main", "p", "main") == 0.2


def test_kind_bonus_citations_utility_graph() -> None:
    assert ranking.kind_bonus("design", ("design", "requirements")) == 1.0
    assert ranking.kind_bonus("requirements", ("design", "requirements")) == pytest.approx(0.9)
    assert ranking.kind_bonus("session", ("design",)) == 0.0
    assert ranking.citations(0, 10) == 0.0
    assert 0 < ranking.citations(2, 10) < ranking.citations(5, 10) < ranking.citations(10, 10) == 1.0
    assert ranking.citations(50, 10) == 1.0
    assert ranking.utility([]) is None
    assert ranking.utility([1, -0.5]) == pytest.approx(0.25)
    assert ranking.graph_proximity([]) == 0.0
    assert ranking.graph_proximity([0.2, 0.7]) == 0.7


def test_thread_support_is_the_mean_of_the_best_other_matches() -> None:
    assert ranking.thread_support([]) == 0.0  # alone in its thread
    assert ranking.thread_support([0.8]) == pytest.approx(0.4)  # a missing second counts 0
    assert ranking.thread_support([0.2, 0.9, 0.5]) == pytest.approx(0.7)  # the two best
    assert ranking.thread_support([0.9, 0.5], k=1) == pytest.approx(0.9)


def test_score_keeps_every_component_and_skips_unknown_ones() -> None:
    weights = RankingWeights(base=0.5, recency=0.2, kind=0.1, scope=0.1, citations=0.1, utility=0.5, graph=0)
    out = ranking.score({"base": 1.0, "recency": 0.5, "utility": None}, weights)
    assert set(out.components) == set(ranking.COMPONENTS)
    assert out.components["utility"] is None and out.components["scope"] is None
    assert out.total == pytest.approx(0.5 + 0.1)


def test_seed004_profile_is_the_fr_024_formula() -> None:
    w = RankingSettings(profile="seed004").resolved_weights()
    assert (w.base, w.recency, w.scope, w.citations) == (0.4, 0.3, 0.2, 0.1)
    assert w.kind == w.utility == w.graph == w.thread == 0
    assert RankingSettings().resolved_weights() == RANKING_PROFILES["default"]
    custom = RankingWeights(base=1, recency=0, kind=0, scope=0, citations=0, utility=0, graph=0)
    assert RankingSettings(weights=custom).resolved_weights() == custom


def test_terms_and_matches() -> None:
    assert ranking.terms("Why do the Retries fail?") == ["retries", "fail"]
    assert ranking.matched_terms("retries payment webhook", "Payment retry logic") == ["retries", "payment"]


def test_confidence_is_bounded_and_grows_with_evidence() -> None:
    low = ranking.confidence(0.1, 0.0, 0.1)
    high = ranking.confidence(0.8, 1.0, 1.0)
    assert 0 <= low < high <= 1
    assert 0 <= ranking.confidence(None, 0.5, 0.5) <= 1


@pytest.mark.parametrize(
    ("query", "route"),
    [
        ("what happened in PR-45", "change_first"),
        ("fix for #123", "change_first"),
        ("JIRA-881 regression", "change_first"),
        ("commit 3f2a9c1d broke it", "change_first"),
        ("parse_request raises", "code_first"),
        ("src/app/main.py", "code_first"),
        ("KeyError in the loader", "code_first"),
        ('File "x.py", line 3, in <module>', "code_first"),
        ("why did we choose sqlite", "design_first"),
        ("how should we implement retries", "design_first"),
        ("utf-8 decoding of names", "general"),
        ("what does the user like for breakfast", "general"),
    ],
)
def test_auto_routing_by_query_shape(query: str, route: str) -> None:
    assert route_for(query).name == route


def test_fuzzy_terms_corrects_only_unknown_words() -> None:
    assert fuzzy_terms(["retyr", "logic"], ["retry", "logic", "payment"]) == ["retry"]
    assert fuzzy_terms(["logic"], ["logic"]) == []
    assert fuzzy_terms(["zzzzzz"], ["retry"]) == []


def test_expansion_terms_prefers_terms_shared_by_more_hits() -> None:
    texts = ["Caroline adopted a dog named Rex", "Rex the dog loves the beach", "beach trip with Rex"]
    assert ranking.expansion_terms("what dog did caroline adopt", texts, 3) == ["rex", "beach", "adopted"]
    assert ranking.expansion_terms("anything", [], 5) == []


def test_ambient_packs_cap_each_kind_but_keep_everything() -> None:
    from datetime import UTC, datetime

    from memory_service.core.models import MemoryRecord
    from memory_service.core.search.candidates import Candidate
    from memory_service.core.search.results import diversify

    now = datetime.now(UTC)

    def cand(i: int, kind: str) -> Candidate:
        record = MemoryRecord(
            id=str(i), type=kind, content=str(i), content_hash="h", created_at=now, updated_at=now
        )
        return Candidate(record=record)

    ranked = [cand(0, "session"), cand(1, "session"), cand(2, "session"), cand(3, "fact"), cand(4, "session")]
    out = diversify(ranked, limit=4)
    assert [c.record.id for c in out] == ["0", "1", "3", "2", "4"]
