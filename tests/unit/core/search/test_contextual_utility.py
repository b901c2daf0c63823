"""Pure parts of contextual utility, linked reads, two-project reads and archive inputs.

No engines: candidates are built from records in memory, votes are plain (problem, vote) pairs.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from memory_service.core.memory import supersede
from memory_service.core.memory.archive_schemas import ArchiveOutput
from memory_service.core.memory.schemas import MemoryUpdateInput
from memory_service.core.models import MemoryRecord, utcnow
from memory_service.core.ports import GraphEdge, PayloadFilter
from memory_service.core.scopes import FACETS, GLOBAL_PROJECT, facet
from memory_service.core.search import scoring as ranking
from memory_service.core.search.candidates import Candidate
from memory_service.core.search.filter import passes
from memory_service.core.search.ranker import implied_problem
from memory_service.core.search.results import attach_links
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.core.search.service import link_options, with_projects
from memory_service.core.search.signals import (
    FACT_UPDATE_EDGES,
    FACT_UPDATE_LINKS,
    PROBLEM_LINK_EDGES,
    PROBLEM_LINKS,
    edge_family,
)
from memory_service.core.write import kinds
from memory_service.settings import RankingWeights

P1, P2 = "problem-1", "problem-2"


def _cand(cid: str, kind: str, total: float, **extra: Any) -> Candidate:
    now = utcnow()
    record = MemoryRecord(id=cid, type=kind, content=cid, content_hash="h", created_at=now, updated_at=now)
    return Candidate(record=record, score=ranking.Score(total=total, components={"base": total}), **extra)


# --------------------------------------------------------------------------- contextual utility


def test_utility_counts_the_votes_cast_for_the_problem_at_hand() -> None:
    votes = [(P1, 1.0), (P2, -1.0), (P1, 0.5)]
    assert ranking.contextual_utility(votes, P1) == pytest.approx(0.75)
    assert ranking.contextual_utility(votes, P2) == pytest.approx(-1.0)


def test_utility_falls_back_to_every_vote_without_context_or_without_votes_for_it() -> None:
    votes = [(P1, 1.0), (P2, -0.5)]
    assert ranking.contextual_utility(votes, None) == pytest.approx(0.25)
    assert ranking.contextual_utility(votes, "problem-3") == pytest.approx(0.25)
    assert ranking.contextual_utility([], P1) is None  # unknown, not neutral
    assert ranking.contextual_utility([], None) is None


def test_utility_keeps_only_the_latest_votes_it_uses() -> None:
    votes = [(P1, -1.0), (P2, 1.0), (P1, 1.0), (P1, 1.0)]
    assert ranking.contextual_utility(votes, P1, latest=2) == pytest.approx(1.0)
    assert ranking.contextual_utility(votes, None, latest=3) == pytest.approx(1.0)


def test_the_context_swaps_the_order_of_two_memories_voted_for_different_problems() -> None:
    weights = RankingWeights(
        base=1, semantic=0, recency=0, kind=0, scope=0, citations=0, utility=0.5, graph=0
    )
    a_votes, b_votes = [(P1, 1.0), (P2, -1.0)], [(P1, -1.0), (P2, 1.0)]

    def totals(problem: str | None) -> tuple[float, float]:
        a = ranking.score({"base": 0.5, "utility": ranking.contextual_utility(a_votes, problem)}, weights)
        b = ranking.score({"base": 0.5, "utility": ranking.contextual_utility(b_votes, problem)}, weights)
        return a.total, b.total

    a1, b1 = totals(P1)
    a2, b2 = totals(P2)
    assert a1 > b1 and b2 > a2
    assert totals(None)[0] == totals(None)[1]  # without context both are neutral overall


def test_the_implied_context_is_the_best_ranked_problem_found_when_it_has_votes() -> None:
    ranked = [
        _cand("fix", "solution", 0.9),
        _cand("linked-problem", "problem", 0.8, link_only=True),
        _cand(P1, "problem", 0.7),
        _cand(P2, "problem", 0.6),
    ]
    assert implied_problem(ranked, {"fix": [(P1, 1.0)]}) == P1
    assert implied_problem(ranked, {"fix": [(P2, 1.0)]}) is None  # P1 leads: P2's votes do not apply
    assert implied_problem(ranked, {}) is None
    assert implied_problem(ranked[:2], {"fix": [("linked-problem", 1.0)]}) is None  # links never lead


# --------------------------------------------------------------------------- linked reads


def test_edge_families() -> None:
    kinds_by_id = {
        "p": "problem", "s": "solution", "t": "failed_tactic", "c": "code_pattern",
        "old": "fact", "new": "fact", "chg": "change", "d": "design",
    }  # fmt: skip

    def family(kind: str, source: str, target: str) -> str | None:
        return edge_family(GraphEdge(kind, "Memory", source, "Memory", target), kinds_by_id)

    assert family("SOLVES", "s", "p") == PROBLEM_LINKS
    assert family("FAILED_FOR", "t", "p") == PROBLEM_LINKS
    assert family("RELATES_TO", "s", "p") == PROBLEM_LINKS  # linked by a relationship to the problem
    assert family("SOLVES", "c", "p") == PROBLEM_LINKS
    assert family("RELATES_TO", "c", "p") is None
    assert family("SOLVES", "p", "s") is None  # out of a problem: not a fix of it
    assert family("SUPERSEDES", "new", "old") == FACT_UPDATE_LINKS
    assert family("SUPERSEDES", "chg", "old") == FACT_UPDATE_LINKS
    assert family("INTRODUCES", "chg", "new") == FACT_UPDATE_LINKS
    assert family("SUPERSEDES", "d", "old") is None
    assert family("IMPLEMENTS", "new", "old") is None


def test_link_edge_types_are_the_ones_the_writers_use() -> None:
    assert set(PROBLEM_LINK_EDGES) == set(kinds.PROBLEM_EDGE.values())
    assert set(FACT_UPDATE_EDGES) == {supersede.SUPERSEDES, supersede.INTRODUCES}


def test_links_follow_their_anchor_and_count_toward_the_limit() -> None:
    problem = _cand("p", "problem", 0.9, linked=["s1", "s2", "x"])
    other = _cand("o", "design", 0.8)
    low = _cand("l", "design", 0.1)
    s1 = _cand("s1", "solution", 0.2, link_only=True)
    s2 = _cand("s2", "solution", 0.3, link_only=True)
    ranked = [problem, other, s2, s1, low]  # "x" expired: not ranked, so not attached
    out = attach_links([problem, other, low], ranked, limit=4)
    assert [c.record.id for c in out] == ["p", "s2", "s1", "o"]  # best link first; "l" gives way
    assert [c.route_used for c in out[1:3]] == ["graph", "graph"]


def test_a_link_already_listed_is_not_repeated() -> None:
    problem = _cand("p", "problem", 0.9, linked=["s"])
    fix = _cand("s", "solution", 0.95, ranks={"dense": 1})
    out = attach_links([fix, problem], [fix, problem], limit=10)
    assert [c.record.id for c in out] == ["s", "p"]
    assert out[0].route_used == "semantic"


@pytest.mark.parametrize(
    ("problem_links", "fact_links", "links", "skip"),
    [
        (None, None, set(), set()),
        (True, None, {PROBLEM_LINKS}, set()),
        (True, False, {PROBLEM_LINKS}, {FACT_UPDATE_LINKS}),
        (False, False, set(), {PROBLEM_LINKS, FACT_UPDATE_LINKS}),
    ],
)
def test_link_options(
    problem_links: bool | None, fact_links: bool | None, links: set[str], skip: set[str]
) -> None:
    req = MemorySearchInput(
        query="q", include_problem_links=problem_links, include_fact_update_links=fact_links
    )
    options = link_options(req, {"project": ["app"]})
    assert options["links"] == links and options["skip_links"] == skip
    link_filter = options["link_filter"]
    if not links:
        assert link_filter is None
    else:  # the read's scope, active records, any kind, superseded facts too
        assert link_filter.any_of == {"project": ["app"]} and link_filter.not_equals == {}


def test_payload_filter_in_python_holds_list_fields_and_also_any() -> None:
    payload = {"status": "active", "project": "app", FACETS: [facet("org", "acme"), facet("tag", "db")]}
    assert passes(payload, PayloadFilter(equals={"status": "active"}, any_of={"project": ["app", "_global"]}))
    assert passes(payload, PayloadFilter(also_any=((FACETS, [facet("tag", "db"), facet("tag", "x")]),)))
    assert not passes(payload, PayloadFilter(also_any=((FACETS, [facet("tag", "x")]),)))
    assert not passes(payload, PayloadFilter(equals={"status": "archived"}))
    assert not passes(payload, PayloadFilter(not_equals={FACETS: facet("org", "acme")}))


# --------------------------------------------------------------------------- two-project reads


def test_extra_projects_are_or_ed_into_the_project_condition() -> None:
    scope = {"project": ["app"], "branch": ["main", ""]}
    wider = with_projects(scope, [GLOBAL_PROJECT, "app", ""])
    assert wider == {"project": ["app", GLOBAL_PROJECT], "branch": ["main", ""]}
    assert scope["project"] == ["app"]  # the caller's conditions are not changed in place
    assert with_projects({"branch": ["main", ""]}, [GLOBAL_PROJECT]) == {
        "branch": ["main", ""]
    }  # all projects
    assert with_projects(scope, ()) is scope


# --------------------------------------------------------------------------- inputs and outputs


def test_update_takes_archived_alone() -> None:
    assert MemoryUpdateInput(memory_id="m", archived=True).archived is True
    assert MemoryUpdateInput(memory_id="m", archived=False, expected_version=2).archived is False
    with pytest.raises(ValidationError, match="on its own"):
        MemoryUpdateInput(memory_id="m", archived=True, content="new text")
    with pytest.raises(ValidationError, match="nothing to update"):
        MemoryUpdateInput(memory_id="m")


def test_search_input_new_fields_default_to_todays_behaviour() -> None:
    req = MemorySearchInput(query="q")
    assert (
        req.problem_id is None and req.include_problem_links is None and req.include_fact_update_links is None
    )
    with pytest.raises(ValidationError):
        MemorySearchInput(query="q", include_problem_links="sometimes")  # type: ignore[arg-type]


def test_archive_output_states() -> None:
    out = ArchiveOutput(memory_id="m", archived=True, status="dry_run", previous_archived=False)
    assert out.model_dump() == {
        "memory_id": "m",
        "archived": True,
        "status": "dry_run",
        "previous_archived": False,
    }
    with pytest.raises(ValidationError):
        ArchiveOutput(memory_id="m", archived=True, status="deleted", previous_archived=False)  # type: ignore[arg-type]
