"""Pure logic of normalize_memory's deduplication: grouping, edge re-pointing, merged metadata."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from memory_service.core.maintenance.normalize.dedupe import (
    chained,
    find_groups,
    merged_metadata,
    repoint,
)
from memory_service.core.maintenance.normalize.repair import chain_edges
from memory_service.core.maintenance.normalize.statement_match import same_numbers, same_statement
from memory_service.core.models import MemoryRecord, Scope, content_hash
from memory_service.core.ports import GraphEdge

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(
    i: int, content: str, kind: str = "design", meta: dict[str, Any] | None = None, **kw: Any
) -> MemoryRecord:
    return MemoryRecord(
        id=f"m{i}", type=kind, content=content, metadata=meta or {}, content_hash=content_hash(content),
        created_at=T0 + timedelta(seconds=i), updated_at=T0, scope=kw.pop("scope", Scope(project="p")), **kw,
    )  # fmt: skip


def test_exact_and_near_duplicates_group_around_the_oldest() -> None:
    a, b, c = "Use WAL mode for SQLite.", "use WAL mode for sqlite", "Keep one connection."
    records = [rec(3, a), rec(1, a), rec(2, b), rec(4, c)]
    vectors = {"m1": [1.0, 0.0], "m2": [0.99, 0.14], "m3": [1.0, 0.0], "m4": [0.0, 1.0]}
    groups = find_groups(records, vectors, 0.95)
    assert len(groups) == 1 and groups[0].survivor.id == "m1"
    assert [(r.id, k) for r, _, k in groups[0].absorbed] == [("m2", "near"), ("m3", "exact")]


def test_no_chains_of_similarity_and_no_merge_across_type_scope_or_chain() -> None:
    # m1~m2 and m2~m3 but m1 and m3 differ: only m2 joins m1; m3 stays on its own.
    vectors = {"m1": [1.0, 0.0], "m2": [0.97, 0.24], "m3": [0.87, 0.49]}
    texts = ["Cache search results.", "Cache the search results", "The search results cache."]
    groups = find_groups([rec(i + 1, t) for i, t in enumerate(texts)], vectors, 0.95)
    assert [(g.survivor.id, [r.id for r, _, _ in g.absorbed]) for g in groups] == [("m1", ["m2"])]
    apart = [
        rec(1, "same"),
        rec(2, "same", kind="requirements"),
        rec(3, "same", scope=Scope(project="p", branch="dev")),
        rec(4, "same", kind="fact", meta={"superseded": True, "superseded_by": "m5"}),
        rec(5, "same", kind="fact"),
        rec(6, "same", kind="fact"),
    ]
    assert chained(apart) == {"m4", "m5"}
    groups = find_groups(apart, {}, 0.95)
    assert [(g.survivor.id, [r.id for r, _, _ in g.absorbed]) for g in groups] == []  # m6 alone now


def test_seed_002_records_are_never_merged() -> None:
    """A problem, solution or failed tactic is an immutable record, never deleted, whichever
    tool touches it: normalization leaves its repeats alone, as it merges other kinds'."""
    for kind in ("problem", "solution", "failed_tactic", "fact", "preference", "change"):
        records = [rec(1, "Build fails on CI.", kind=kind), rec(2, "Build fails on CI.", kind=kind)]
        assert find_groups(records, {}, 0.95) == [], kind
    records = [rec(1, "Build fails on CI.", kind="session"), rec(2, "Build fails on CI.", kind="session")]
    assert [(g.survivor.id, [r.id for r, _, _ in g.absorbed]) for g in find_groups(records, {}, 0.95)] == [
        ("m1", ["m2"])
    ]


def test_repoint_moves_edges_without_self_loops_or_overwriting_the_survivor() -> None:
    edges = [
        GraphEdge("RELATES_TO", "Memory", "a", "Memory", "x", {"w": 1}),
        GraphEdge("RELATES_TO", "Memory", "a", "Memory", "s"),  # would be a self-loop
        GraphEdge("CITES", "Memory", "b", "Function", "f"),
        GraphEdge("DEPENDS_ON", "Memory", "y", "Memory", "b"),
        GraphEdge("CITES", "Memory", "a", "Function", "f"),  # the same edge twice once moved
    ]
    own = [GraphEdge("RELATES_TO", "Memory", "s", "Memory", "x", {"w": 9})]
    moved = repoint(edges, {"a", "b"}, "s", own)
    keys = {(e.type, e.source_id, e.target_id) for e in moved}
    assert keys == {("CITES", "s", "f"), ("DEPENDS_ON", "y", "s")}


def test_merged_metadata_records_what_was_absorbed() -> None:
    survivor = rec(1, "a", meta={"tags": ["x"], "rationale": "own", "merged_from": [{"id": "m0"}]})
    other = rec(2, "a", meta={"tags": ["y", "x"], "rationale": "theirs", "status": "accepted",
                              "session_id": "s1", "superseded": True})  # fmt: skip
    meta = merged_metadata(survivor, [(other, 1.0, "exact")])
    assert meta["tags"] == ["x", "y"] and meta["rationale"] == "own" and meta["status"] == "accepted"
    assert "session_id" not in meta and "superseded" not in meta
    assert [m["id"] for m in meta["merged_from"]] == ["m0", "m2"]
    assert meta["merged_from"][1]["content_hash"] == content_hash("a")


def test_chain_edges_come_from_the_superseded_facts_metadata() -> None:
    old = rec(
        1, "v1", kind="fact", meta={"superseded": True, "superseded_by": "m2", "superseded_by_change": "m3"}
    )
    edges = {(e.type, e.source_id, e.target_id) for e in chain_edges([old, rec(2, "v2", kind="fact")])}
    assert edges == {("SUPERSEDES", "m2", "m1"), ("SUPERSEDES", "m3", "m1"), ("INTRODUCES", "m3", "m2")}


def test_near_duplicates_must_state_the_same_numbers() -> None:
    assert same_numbers("The limit is 100 per minute.", "The limit is 100/minute.")
    assert not same_numbers("The limit is 100 per minute.", "The limit is 1000 per minute.")
    assert same_numbers("Retries three times.", "Retries 3 times.")  # one states none: the model decides
    vectors = {"m1": [1.0, 0.0], "m2": [1.0, 0.01]}
    groups = find_groups([rec(1, "Port 8080 is used."), rec(2, "Port 9090 is used.")], vectors, 0.95)
    assert groups == []


# Pairs all-MiniLM-L6-v2 scores at 0.94-0.98: a statement and its opposite must never merge.
OPPOSITES = [
    ("The API must be idempotent.", "The API must not be idempotent."),
    ("Prefer tabs over spaces.", "Prefer spaces over tabs."),
    ("Retry failed payments automatically.", "Retry failed payments manually."),
    ("Deploy on Fridays is allowed.", "Deploy on Fridays is forbidden."),
    ("Always run migrations before deploying.", "Never run migrations before deploying."),
    ("Run the linter before the tests.", "Run the linter after the tests."),
    ("The cache is enabled in production.", "The cache is disabled in production."),
]
REWORDINGS = [
    ("Orders over 1000 EUR need an approval before capture.",
     "Orders over 1000 EUR need approval before they are captured."),
    ("Use WAL mode for SQLite.", "use WAL mode for sqlite"),
    ("The indexer skips generated files", "The indexer skips the generated files."),
    ("Sessions share one store through a daemon.", "Sessions share one store through the daemon!"),
]  # fmt: skip


def test_a_statement_and_its_opposite_are_not_the_same_statement() -> None:
    for a, b in OPPOSITES:
        assert not same_statement(a, b), (a, b)
        assert not same_statement(b, a), (b, a)


def test_rewordings_are_the_same_statement() -> None:
    for a, b in REWORDINGS:
        assert same_statement(a, b), (a, b)


def test_near_opposites_are_never_grouped() -> None:
    a, b = OPPOSITES[0]
    records = [rec(1, a), rec(2, b)]
    vectors = {"m1": [1.0, 0.0], "m2": [0.999, 0.04]}  # as close as the model puts them
    assert find_groups(records, vectors, 0.95) == []
    c, d = REWORDINGS[0]
    records = [rec(3, c), rec(4, d)]
    groups = find_groups(records, {"m3": [1.0, 0.0], "m4": [0.999, 0.04]}, 0.95)
    assert [(g.survivor.id, [r.id for r, _, _ in g.absorbed]) for g in groups] == [("m3", ["m4"])]
