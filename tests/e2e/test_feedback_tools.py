"""Seed 002 kinds, memory_feedback and memory_supersede through the MCP client."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _add(client: Client, kind: str, content: str, **extra: Any) -> str:
    out = await call_ok(client, "memory_add", {"type": kind, "content": content, **extra})
    return str(out["memory_id"])


@pytest.fixture(scope="module")
async def problem(client: Client) -> str:
    return await _add(client, "problem", "Integration tests hang when the graph store lock is held.")


async def test_seed_002_kinds_are_accepted_and_searchable(client: Client, problem: str) -> None:
    fact = await _add(client, "fact", "The vector store keeps one shard per collection.")
    pref = await _add(client, "preference", "Prefer small commits with one concern each.")
    change = await _add(client, "change", "Moved audit to SQLite.", metadata={"change_type": "Schema"})
    got = await call_ok(client, "memory_get", {"memory_id": change})
    assert got["memory"]["type"] == "change" and got["memory"]["metadata"]["change_type"] == "schema"
    found = await call_ok(
        client, "memory_search", {"query": "shard per collection", "memory_types": ["fact"]}
    )
    assert [r["memory_id"] for r in found["results"]] == [fact]
    assert pref and problem


async def test_solution_must_link_to_a_problem(client: Client, problem: str) -> None:
    error = await call_error(client, "memory_add", {"type": "solution", "content": "Release the lock."})
    assert error["code"] == "VAL_PROBLEM_LINK_REQUIRED" and error["details"]["field"] == "metadata.problem_id"
    assert "problem_id" in error["suggestion"]
    not_problem = await _add(client, "session", "A session note, not a problem.")
    wrong = await call_error(
        client,
        "memory_add",
        {"type": "failed_tactic", "content": "x", "metadata": {"problem_id": not_problem}},
    )
    assert wrong["code"] == "VAL_PROBLEM_LINK_INVALID" and wrong["details"]["found_type"] == "session"
    missing = await call_error(
        client,
        "memory_add",
        {"type": "solution", "content": "x", "metadata": {"problem_id": str(uuid.uuid4())}},
    )
    assert missing["code"] == "NF_PROBLEM"
    bad = await call_error(
        client, "memory_add", {"type": "solution", "content": "x", "metadata": {"problem_id": "7"}}
    )
    assert bad["code"] == "VAL_INVALID_UUID" and bad["details"]["field"] == "metadata.problem_id"
    ok = await _add(
        client, "solution", "Release the graph lock in teardown.", metadata={"problem_id": problem}
    )
    rels = await call_ok(client, "memory_get", {"memory_id": ok, "include_relationships": True})
    assert {(r["type"], r["other_id"]) for r in rels["relationships"]} == {("SOLVES", problem)}
    by_rel = await call_ok(
        client,
        "memory_add",
        {"type": "failed_tactic", "content": "Sleeping 5 s before teardown did not help.",
         "relationships": [{"type": "FAILED_FOR", "target_id": problem}]},
    )  # fmt: skip
    assert by_rel["status"] == "created"
    bulk = await call_ok(
        client,
        "memory_bulk_add",
        {
            "memories": [
                {"type": "solution", "content": "no link"},
                {"type": "problem", "content": "new problem"},
            ]
        },
    )
    assert bulk["created"] == 1 and bulk["errors"][0]["code"] == "VAL_PROBLEM_LINK_REQUIRED"


async def test_feedback_votes_are_appended_and_lift_ranking(client: Client, problem: str) -> None:
    good = await _add(
        client, "solution", "Use a per-test data directory for the graph.", metadata={"problem_id": problem}
    )
    dry = await call_ok(
        client, "memory_feedback", {"memory_id": good, "problem_id": problem, "vote": 1, "mode": "dry_run"}
    )
    assert dry["status"] == "dry_run" and dry["votes_count"] == 1
    explained = await call_ok(client, "memory_explain", {"ids": [good]})
    assert explained["items"][0]["score"]["components"]["utility"] is None  # dry run recorded nothing
    for vote in (1, 0.5):
        out = await call_ok(
            client, "memory_feedback", {"memory_id": good, "problem_id": problem, "vote": vote}
        )
    assert out["status"] == "recorded" and out["votes_count"] == 2 and out["mean_vote"] == 0.75
    explained = await call_ok(client, "memory_explain", {"ids": [good]})
    assert explained["items"][0]["score"]["components"]["utility"] == 0.75


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"memory_id": "x", "problem_id": "PROBLEM", "vote": 1}, "VAL_INVALID_UUID", "memory_id"),
        ({"memory_id": "SELF", "problem_id": "PROBLEM", "vote": 1.5}, "VAL_OUT_OF_RANGE", "vote"),
        ({"memory_id": "SELF", "problem_id": "PROBLEM"}, "VAL_MISSING_FIELD", "vote"),
        (
            {"memory_id": "SELF", "problem_id": "PROBLEM", "vote": 1, "mode": "maybe"},
            "VAL_INVALID_ENUM",
            "mode",
        ),
        ({"memory_id": "SELF", "problem_id": "SELF", "vote": 1}, "VAL_PROBLEM_LINK_INVALID", "problem_id"),
        ({"memory_id": "UNKNOWN", "problem_id": "PROBLEM", "vote": 1}, "NF_MEMORY", "memory_id"),
        ({"memory_id": "SELF", "problem_id": "UNKNOWN", "vote": 1}, "NF_MEMORY", "problem_id"),
    ],
)
async def test_feedback_bad_inputs(
    client: Client, problem: str, args: dict[str, Any], code: str, field: str
) -> None:
    me = await _add(client, "code_pattern", f"Pattern for feedback test {code} {field}.")
    names = {"PROBLEM": problem, "SELF": me, "UNKNOWN": str(uuid.uuid4())}
    resolved = {k: names.get(v, v) if isinstance(v, str) else v for k, v in args.items()}
    error = await call_error(client, "memory_feedback", resolved)
    assert error["code"] == code, error
    assert error["details"]["field"] == field


async def test_supersede_hides_the_old_fact_and_keeps_the_chain(client: Client) -> None:
    old = await _add(client, "fact", "Search results are cached in Redis for five minutes.")
    new_fact = {"content": "Search results are cached in SQLite."}
    change = {"content": "Replaced Redis with the SQLite cache.", "metadata": {"change_type": "infra"}}
    args = {"old_fact_id": old, "new_fact": new_fact, "change": change}
    dry = await call_ok(client, "memory_supersede", {**args, "mode": "dry_run"})
    assert dry["status"] == "dry_run" and dry["new_fact_id"] is None and dry["chain"][0] == old
    still = await call_ok(client, "memory_search", {"query": "search results cached redis"})
    assert old in [r["memory_id"] for r in still["results"]]
    out = await call_ok(client, "memory_supersede", {**args, "rationale": "Redis was dropped"})
    assert out["status"] == "committed" and out["chain"] == [old, out["new_fact_id"]]
    found = await call_ok(client, "memory_search", {"query": "search results cached redis"})
    ids = [r["memory_id"] for r in found["results"]]
    assert old not in ids and out["new_fact_id"] in ids
    shown = await call_ok(
        client, "memory_search", {"query": "search results cached redis", "include_superseded": True}
    )
    assert old in [r["memory_id"] for r in shown["results"]]
    got = await call_ok(client, "memory_get", {"memory_id": old, "include_relationships": True})
    assert got["memory"]["metadata"]["superseded_by"] == out["new_fact_id"]
    incoming = {(r["type"], r["other_id"]) for r in got["relationships"] if r["direction"] == "incoming"}
    assert incoming == {("SUPERSEDES", out["new_fact_id"]), ("SUPERSEDES", out["change_id"])}
    change = await call_ok(
        client, "memory_get", {"memory_id": out["change_id"], "include_relationships": True}
    )
    assert ("INTRODUCES", out["new_fact_id"]) in {(r["type"], r["other_id"]) for r in change["relationships"]}
    again = await call_error(
        client,
        "memory_supersede",
        {"old_fact_id": old, "new_fact_id": out["new_fact_id"], "change_id": out["change_id"]},
    )
    assert again["code"] == "CON_ALREADY_SUPERSEDED"
    newer = await _add(client, "fact", "Search results are cached in SQLite for one minute.")
    second = await call_ok(
        client,
        "memory_supersede",
        {
            "old_fact_id": out["new_fact_id"],
            "new_fact_id": newer,
            "change": {"content": "Shorter cache TTL."},
        },
    )
    assert second["chain"] == [old, out["new_fact_id"], newer]


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({}, "VAL_MISSING_FIELD", "old_fact_id"),
        ({"old_fact_id": "FACT"}, "VAL_INVALID_VALUE", "arguments"),
        ({"old_fact_id": "FACT", "new_fact_id": "FACT2", "change_id": "FACT2", "new_fact": {"content": "x"}},
         "VAL_INVALID_VALUE", "arguments"),
        ({"old_fact_id": "NOTFACT", "new_fact_id": "FACT2", "change": {"content": "c"}}, "VAL_SUPERSEDE_KIND",
         "old_fact_id"),
        ({"old_fact_id": "FACT", "new_fact_id": "FACT", "change": {"content": "c"}}, "VAL_SUPERSEDE_SELF",
         "new_fact_id"),
        ({"old_fact_id": "FACT", "new_fact_id": "FACT2", "change_id": "FACT2"}, "VAL_SUPERSEDE_KIND",
         "change_id"),
        ({"old_fact_id": "UNKNOWN", "new_fact_id": "FACT2", "change": {"content": "c"}}, "NF_MEMORY",
         "old_fact_id"),
        ({"old_fact_id": "FACT", "new_fact": {"content": ""}, "change": {"content": "c"}}, "VAL_EMPTY",
         "new_fact.content"),
        ({"old_fact_id": "FACT", "new_fact_id": "FACT2", "change": {"content": "c"}, "mode": "now"},
         "VAL_INVALID_ENUM", "mode"),
    ],
)  # fmt: skip
async def test_supersede_bad_inputs(client: Client, args: dict[str, Any], code: str, field: str) -> None:
    names = {
        "FACT": await _add(client, "fact", f"Fact A for {code} {field}."),
        "FACT2": await _add(client, "fact", f"Fact B for {code} {field}."),
        "NOTFACT": await _add(client, "design", f"Design for {code} {field}."),
        "UNKNOWN": str(uuid.uuid4()),
    }
    resolved = {k: names.get(v, v) if isinstance(v, str) else v for k, v in args.items()}
    error = await call_error(client, "memory_supersede", resolved)
    assert error["code"] == code, error
    assert error["details"]["field"] == field
    got = await call_ok(client, "memory_get", {"memory_id": names["FACT"]})
    assert "superseded" not in got["memory"]["metadata"]  # refused calls change nothing
