"""Seed 002 (memory-interface-v1) through the MCP client: memory.read / write / update.

One server on the profile for the module, real stores and the real embedding model. Each test
works in its own repository (repo_id), so tests do not see each other's memories; a global
memory is seen by every repository's reads unless include_global is false.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from tests.conftest import require_model
from tests.e2e.conftest import call_error, call_ok, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

PROFILE = "memory-interface-v1"
READ, WRITE, UPDATE = "memory-read", "memory-write", "memory-update"


@pytest.fixture(scope="module")
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """The module's one server, on the seed-002 profile (its tools only)."""
    root = tmp_path_factory.mktemp("interface_v1")
    settings = make_settings(root, require_model())
    settings.server.profile = PROFILE
    async with Client(build_server(settings)) as c:
        yield c


async def write(
    client: Client,
    repo: str,
    kind: str,
    text: str,
    *,
    scope: str = "repo",
    confidence: float = 0.8,
    **memory: Any,
) -> dict[str, Any]:
    body = {"text": text, "scope": scope, "kind": kind, "confidence": confidence, **memory}
    return await call_ok(client, WRITE, {"op": "write", "repo_id": repo, "memory": body})


async def new(client: Client, repo: str, kind: str, text: str, **memory: Any) -> str:
    out = await write(client, repo, kind, text, **memory)
    assert out["status"] == "created", out
    return str(out["memory_id"])


async def read(client: Client, repo: str, query: str, **extra: Any) -> dict[str, Any]:
    args = {"op": "read", "repo_id": repo, "mode": "targeted", "query": query, **extra}
    return await call_ok(client, READ, args)


def ids(out: dict[str, Any]) -> list[str]:
    return [r["memory_id"] for r in out["results"]]


def by_id(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["memory_id"]: r for r in out["results"]}


def update_args(repo: str, memory_id: str, mode: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"op": "update", "repo_id": repo, "memory_id": memory_id, "mode": mode, "update": body}


async def update(
    client: Client, repo: str, memory_id: str, mode: str, body: dict[str, Any]
) -> dict[str, Any]:
    return await call_ok(client, UPDATE, update_args(repo, memory_id, mode, body))


async def written(client: Client, repo: str, text: str) -> bool:
    """Whether a memory with this text is readable in the repository (nothing written: False)."""
    out = await read(client, repo, text, include_global=False)
    return any(r["text"] == text for r in out["results"])


# --------------------------------------------------------------------------- surface


async def test_the_profile_serves_the_three_seed_tools(client: Client) -> None:
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == {READ, WRITE, UPDATE}
    schema = listed[READ].input_schema
    assert schema["required"] == ["op", "repo_id", "mode", "query"]
    assert schema["properties"]["limit"]["default"] == 20
    assert schema["properties"]["expand"]["properties"]["semantic_hops"]["default"] == 2
    memory = listed[WRITE].input_schema["properties"]["memory"]
    assert set(memory["required"]) == {"text", "scope", "kind", "confidence"}
    branches = listed[UPDATE].input_schema["properties"]["update"]["oneOf"]
    assert [b["properties"]["type"]["const"] for b in branches] == [
        "archive_state",
        "utility_vote",
        "fact_update_link",
    ]


async def test_the_seeds_dotted_names_are_answered_too(client: Client) -> None:
    out = await call_ok(
        client, "memory.read", {"op": "read", "repo_id": "dotted", "mode": "ambient", "query": "x"}
    )
    assert out["op"] == "read" and out["repo_id"] == "dotted"


# --------------------------------------------------------------------------- write rules


async def test_problem_solution_and_failed_tactic_are_linked(client: Client) -> None:
    repo = "repo-links"
    problem = await new(client, repo, "problem", "Checkout page times out when the payment gateway is slow")
    solution = await new(
        client,
        repo,
        "solution",
        "Raise the gateway client timeout to 30 seconds and retry once",
        links={"problem_id": problem},
        rationale="Fixed the timeouts in staging",
    )
    tactic = await new(
        client,
        repo,
        "failed_tactic",
        "Caching gateway responses did not help: every checkout request is unique",
        links={"problem_id": problem},
    )
    linked = await read(client, repo, "checkout page times out", kinds=["problem"], include_global=False)
    assert ids(linked)[0] == problem and set(ids(linked)) == {problem, solution, tactic}
    rows = by_id(linked)
    assert rows[solution]["links"]["problem_id"] == problem and rows[tactic]["kind"] == "failed_tactic"
    assert rows[solution]["linked_via"] == rows[tactic]["linked_via"] == "problem_link"
    assert rows[problem]["linked_via"] is None
    off = await read(
        client,
        repo,
        "checkout page times out",
        kinds=["problem"],
        include_global=False,
        expand={"include_problem_links": False},
    )
    assert ids(off) == [problem]


async def test_a_fix_must_point_at_a_problem(client: Client) -> None:
    repo = "repo-rules"
    fact = await new(client, repo, "fact", "The build uses Python 3.12 everywhere")
    text = "Pin the interpreter in the CI image"
    error = await call_error(
        client,
        WRITE,
        {
            "op": "write",
            "repo_id": repo,
            "memory": {"text": text, "scope": "repo", "kind": "solution", "confidence": 0.9},
        },
    )
    assert (
        error["code"] == "VAL_PROBLEM_LINK_REQUIRED"
        and error["details"]["field"] == "memory.links.problem_id"
    )
    assert "memory_add" not in error["suggestion"]
    for kind in ("solution", "failed_tactic", "fact"):
        args = {"text": text, "scope": "repo", "kind": kind, "confidence": 0.9, "links": {"problem_id": fact}}
        error = await call_error(client, WRITE, {"op": "write", "repo_id": repo, "memory": args})
        assert error["code"] == "VAL_PROBLEM_LINK_INVALID", (kind, error)
        assert (
            error["details"]["field"] == "memory.links.problem_id"
            and error["details"]["found_type"] == "fact"
        )
    unknown = {
        "text": text,
        "scope": "repo",
        "kind": "solution",
        "confidence": 0.9,
        "links": {"problem_id": str(uuid.uuid4())},
    }
    error = await call_error(client, WRITE, {"op": "write", "repo_id": repo, "memory": unknown})
    assert error["code"] == "NF_PROBLEM" and error["details"]["field"] == "memory.links.problem_id"
    malformed = {**unknown, "links": {"problem_id": "7"}}
    error = await call_error(client, WRITE, {"op": "write", "repo_id": repo, "memory": malformed})
    assert error["code"] == "VAL_INVALID_UUID" and error["details"]["field"] == "memory.links.problem_id"
    missing = {**unknown, "kind": "fact", "links": {"related_memory_ids": [fact, str(uuid.uuid4())]}}
    error = await call_error(client, WRITE, {"op": "write", "repo_id": repo, "memory": missing})
    assert error["code"] == "NF_RELATIONSHIP_TARGET"
    assert error["details"]["field"] == "memory.links.related_memory_ids[1]"
    assert not await written(client, repo, text)


async def test_confidence_is_required_and_bounded(client: Client) -> None:
    repo = "repo-confidence"
    text = "Deploys happen on Tuesdays only"
    body = {"text": text, "scope": "repo", "kind": "fact"}
    error = await call_error(
        client, WRITE, {"op": "write", "repo_id": repo, "memory": {**body, "confidence": 7}}
    )
    assert error["code"] == "VAL_OUT_OF_RANGE" and error["details"]["field"] == "memory.confidence"
    error = await call_error(client, WRITE, {"op": "write", "repo_id": repo, "memory": body})
    assert error["code"] == "VAL_MISSING_FIELD" and error["details"]["field"] == "memory.confidence"
    assert not await written(client, repo, text)


async def test_rationale_evidence_and_links_are_stored(client: Client) -> None:
    repo = "repo-evidence"
    other = await new(client, repo, "preference", "Prefer structured logging over print statements")
    out = await write(
        client,
        repo,
        "fact",
        "Request logs are shipped to the central collector every minute",
        confidence=0.65,
        rationale="Read in the collector configuration",
        evidence_refs=["deploy/collector.yaml", "pr:812"],
        links={"related_memory_ids": [other]},
    )
    assert out["status"] == "created" and out["scope"] == "repo" and out["confidence"] == 0.65
    assert out["evidence_refs"] == ["deploy/collector.yaml", "pr:812"]
    found = by_id(await read(client, repo, "how often are request logs shipped", include_global=False))
    row = found[out["memory_id"]]
    assert (row["kind"], row["scope"], row["confidence"]) == ("fact", "repo", 0.65)
    assert row["rationale"] == "Read in the collector configuration"
    assert row["evidence_refs"] == ["deploy/collector.yaml", "pr:812"]
    assert row["links"]["related_memory_ids"] == [other]
    again = await write(
        client, repo, "fact", "Request logs are shipped to the central collector every minute"
    )
    assert again["status"] == "skipped_dedupe" and again["memory_id"] == out["memory_id"]


async def test_a_change_needs_evidence(client: Client) -> None:
    repo = "repo-change"
    text = "Moved the job queue from Redis lists to streams"
    error = await call_error(
        client,
        WRITE,
        {
            "op": "write",
            "repo_id": repo,
            "memory": {"text": text, "scope": "repo", "kind": "change", "confidence": 1},
        },
    )
    assert error["code"] == "VAL_EVIDENCE_REQUIRED" and error["details"]["field"] == "memory.evidence_refs"
    assert not await written(client, repo, text)
    await new(client, repo, "change", text, evidence_refs=["commit:9c1e2d4"])


# --------------------------------------------------------------------------- scopes and repositories


async def test_global_memories_are_read_from_every_repository(client: Client) -> None:
    text = "Always run database migrations inside a transaction"
    out = await write(client, "repo-alpha", "preference", text, scope="global", confidence=0.9)
    shared = out["memory_id"]
    assert out["scope"] == "global"
    seen = by_id(await read(client, "repo-beta", "database migrations in a transaction"))
    assert seen[shared]["scope"] == "global"
    hidden = await read(client, "repo-beta", "database migrations in a transaction", include_global=False)
    assert shared not in ids(hidden)
    assert shared in ids(await read(client, "repo-alpha", "database migrations in a transaction"))


async def test_repositories_are_isolated(client: Client) -> None:
    mine = await new(client, "repo-iso-a", "fact", "Feature flags are read from the flags service at startup")
    problem = await new(client, "repo-iso-a", "problem", "Feature flags are stale after a deploy")
    theirs = await read(client, "repo-iso-b", "feature flags read at startup")
    assert mine not in ids(theirs) and problem not in ids(theirs)
    assert mine in ids(await read(client, "repo-iso-a", "feature flags read at startup"))
    error = await call_error(
        client, UPDATE, update_args("repo-iso-b", mine, "commit", {"type": "archive_state", "archived": True})
    )
    assert error["code"] == "NF_MEMORY" and error["details"]["field"] == "memory_id"
    fix = {"text": "Reload flags on deploy", "scope": "repo", "kind": "solution", "confidence": 0.7}
    error = await call_error(
        client,
        WRITE,
        {"op": "write", "repo_id": "repo-iso-b", "memory": {**fix, "links": {"problem_id": problem}}},
    )
    assert error["code"] == "NF_MEMORY" and error["details"]["field"] == "memory.links.problem_id"
    assert mine in ids(await read(client, "repo-iso-a", "feature flags read at startup"))


async def test_the_seeds_defaults_are_applied(client: Client) -> None:
    repo = "repo-defaults"
    for i in range(22):
        await new(client, repo, "fact", f"Service number {i} listens on port {8000 + i} behind the gateway")
    out = await read(client, repo, "which port does the service listen on", include_global=False)
    assert out["total"] == len(out["results"]) == 20
    assert out["applied"] == {
        "include_global": False,
        "kinds": None,  # every kind of the repository
        "limit": 20,
        "semantic_hops": 2,
        "include_problem_links": True,
        "include_fact_update_links": True,
    }
    narrow = await read(client, repo, "which port", limit=5, expand={"semantic_hops": 0})
    assert narrow["total"] == 5 and narrow["applied"]["semantic_hops"] == 0
    ambient = await call_ok(
        client, READ, {"op": "read", "repo_id": repo, "mode": "ambient", "query": "ports"}
    )
    assert ambient["mode"] == "ambient" and 0 < ambient["total"] <= 20


# --------------------------------------------------------------------------- updates


async def test_fact_update_link_dry_run_then_commit(client: Client) -> None:
    repo = "repo-chain"
    query = "where does the service read its settings from"
    old = await new(client, repo, "fact", "The service reads its settings from config.yaml")
    change = await new(
        client,
        repo,
        "change",
        "Settings moved from config.yaml to environment variables",
        evidence_refs=["commit:abc123"],
    )
    new_fact = await new(client, repo, "fact", "The service reads its settings from environment variables")
    link = {
        "type": "fact_update_link",
        "old_fact_id": old,
        "new_fact_id": new_fact,
        "rationale": "config.yaml is gone",
    }

    wrong = await call_error(client, UPDATE, update_args(repo, old, "dry_run", link))
    assert wrong["code"] == "VAL_SUPERSEDE_KIND" and wrong["details"]["field"] == "memory_id"
    same = await call_error(
        client, UPDATE, update_args(repo, change, "dry_run", {**link, "new_fact_id": old})
    )
    assert same["code"] == "VAL_SUPERSEDE_SELF" and same["details"]["field"] == "update.new_fact_id"
    not_fact = await call_error(
        client, UPDATE, update_args(repo, change, "dry_run", {**link, "old_fact_id": change})
    )
    assert not_fact["code"] == "VAL_SUPERSEDE_KIND" and not_fact["details"]["field"] == "update.old_fact_id"

    preview = await update(client, repo, change, "dry_run", link)
    assert (preview["status"], preview["type"], preview["mode"]) == ("dry_run", "fact_update_link", "dry_run")
    assert preview["result"]["chain"] == [old, new_fact] and preview["effects"]
    before = by_id(await read(client, repo, query, kinds=["fact"], include_global=False))
    assert old in before and before[old]["superseded"] is False  # nothing written

    done = await update(client, repo, change, "commit", link)
    assert done["status"] == "committed" and done["result"]["change_id"] == change
    after = await read(client, repo, query, kinds=["fact"], include_global=False)
    rows = by_id(after)
    assert ids(after)[0] == new_fact
    assert rows[old]["superseded"] is True and rows[old]["linked_via"] == "fact_update_link"
    assert rows[old]["links"]["superseded_by"] == new_fact
    assert rows[change]["kind"] == "change" and rows[change]["linked_via"] == "fact_update_link"
    plain = await read(
        client, repo, query, kinds=["fact"], include_global=False, expand={"include_fact_update_links": False}
    )
    assert ids(plain) == [new_fact]
    again = await call_error(client, UPDATE, update_args(repo, change, "commit", link))
    assert again["code"] == "CON_ALREADY_SUPERSEDED"


async def test_utility_votes_are_per_problem(client: Client) -> None:
    repo = "repo-votes"
    slow = await new(client, repo, "problem", "Search results are slow for long queries")
    wrong = await new(client, repo, "problem", "Search results show deleted documents")
    fix = await new(
        client, repo, "solution", "Cap query terms at 32 before searching", links={"problem_id": slow}
    )
    vote = {"type": "utility_vote", "problem_id": slow, "vote": 1, "evidence_refs": ["bench:latency-p95"]}
    preview = await update(client, repo, fix, "dry_run", vote)
    assert preview["status"] == "dry_run" and preview["result"]["votes_count"] == 1
    assert (await update(client, repo, fix, "dry_run", vote))["result"]["votes_count"] == 1  # none written
    done = await update(client, repo, fix, "commit", vote)
    assert done["status"] == "committed" and done["result"]["votes_count"] == 1
    other = await update(
        client, repo, fix, "commit", {"type": "utility_vote", "problem_id": wrong, "vote": -0.5}
    )
    assert other["result"]["votes_count"] == 1 and other["result"]["mean_vote"] == -0.5
    assert other["result"]["overall_votes_count"] == 2
    error = await call_error(client, UPDATE, update_args(repo, fix, "commit", {**vote, "problem_id": fix}))
    assert error["code"] == "VAL_PROBLEM_LINK_INVALID" and error["details"]["field"] == "update.problem_id"


async def test_archive_state_is_previewed_committed_and_restored(client: Client) -> None:
    repo = "repo-archive"
    query = "which message broker carries the order events"
    fact = await new(client, repo, "fact", "Order events are published on the Kafka topic orders.v2")
    archive = {"type": "archive_state", "archived": True, "rationale": "topic renamed"}
    preview = await update(client, repo, fact, "dry_run", archive)
    assert preview["status"] == "dry_run" and preview["result"]["previous_archived"] is False
    assert fact in ids(await read(client, repo, query))
    done = await update(client, repo, fact, "commit", archive)
    assert done["status"] == "committed" and done["result"]["status"] == "archived"
    assert fact not in ids(await read(client, repo, query))
    assert (await update(client, repo, fact, "commit", archive))["status"] == "unchanged"
    restore = {"type": "archive_state", "archived": False}
    assert (await update(client, repo, fact, "dry_run", restore))["status"] == "dry_run"
    assert fact not in ids(await read(client, repo, query))
    back = await update(client, repo, fact, "commit", restore)
    assert back["status"] == "committed" and back["result"]["status"] == "restored"
    assert fact in ids(await read(client, repo, query))


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"op": "write", "repo_id": "r", "mode": "targeted", "query": "q"}, "VAL_INVALID_ENUM", "op"),
        ({"op": "read", "mode": "targeted", "query": "q"}, "VAL_MISSING_FIELD", "repo_id"),
        ({"op": "read", "repo_id": "r", "mode": "startup", "query": "q"}, "VAL_INVALID_ENUM", "mode"),
        (
            {"op": "read", "repo_id": "r", "mode": "targeted", "query": "q", "top_k": 3},
            "VAL_UNKNOWN_FIELD",
            "top_k",
        ),
        ({"op": "read", "repo_id": "*", "mode": "targeted", "query": "q"}, "VAL_INVALID_VALUE", "repo_id"),
    ],
)
async def test_bad_reads(client: Client, args: dict[str, Any], code: str, field: str) -> None:
    error = await call_error(client, READ, args)
    assert (error["code"], error["details"]["field"]) == (code, field)


async def test_bad_writes_write_nothing(client: Client) -> None:
    repo = "repo-bad-writes"
    text = "The payments service owns the refunds table"
    body = {"text": text, "scope": "repo", "kind": "fact", "confidence": 0.5}
    cases = [
        ({"op": "read", "repo_id": repo, "memory": body}, "VAL_INVALID_ENUM", "op"),
        ({"op": "write", "memory": body}, "VAL_MISSING_FIELD", "repo_id"),
        (
            {"op": "write", "repo_id": repo, "memory": {**body, "scope": "team"}},
            "VAL_INVALID_ENUM",
            "memory.scope",
        ),
        (
            {"op": "write", "repo_id": repo, "memory": {**body, "kind": "design"}},
            "VAL_INVALID_ENUM",
            "memory.kind",
        ),
        (
            {"op": "write", "repo_id": repo, "memory": {**body, "tags": ["db"]}},
            "VAL_UNKNOWN_FIELD",
            "memory.tags",
        ),
        ({"op": "write", "repo_id": repo, "memory": body, "dry_run": True}, "VAL_UNKNOWN_FIELD", "dry_run"),
    ]
    for args, code, field in cases:
        error = await call_error(client, WRITE, args)
        assert (error["code"], error["details"]["field"]) == (code, field), args
    assert not await written(client, repo, text)


async def test_bad_updates_change_nothing(client: Client) -> None:
    repo = "repo-bad-updates"
    query = "which team owns the billing dashboards"
    fact = await new(client, repo, "fact", "The billing dashboards are owned by the finance platform team")
    archive = {"type": "archive_state", "archived": True}
    cases = [
        ({**update_args(repo, fact, "commit", archive), "op": "write"}, "VAL_INVALID_ENUM", "op"),
        (
            {k: v for k, v in update_args(repo, fact, "commit", archive).items() if k != "repo_id"},
            "VAL_MISSING_FIELD",
            "repo_id",
        ),
        (update_args(repo, fact, "apply", archive), "VAL_INVALID_ENUM", "mode"),
        ({**update_args(repo, fact, "commit", archive), "force": True}, "VAL_UNKNOWN_FIELD", "force"),
        (update_args(repo, fact, "commit", {"archived": True}), "VAL_MISSING_FIELD", "update.type"),
        (update_args(repo, fact, "commit", {"type": "delete"}), "VAL_INVALID_ENUM", "update.type"),
        (update_args(repo, fact, "commit", {**archive, "vote": 1}), "VAL_UNKNOWN_FIELD", "update.vote"),
        (
            update_args(repo, fact, "commit", {"type": "archive_state"}),
            "VAL_MISSING_FIELD",
            "update.archived",
        ),
        (update_args(repo, "not-an-id", "commit", archive), "VAL_INVALID_UUID", "memory_id"),
        (update_args(repo, str(uuid.uuid4()), "commit", archive), "NF_MEMORY", "memory_id"),
    ]
    for args, code, field in cases:
        error = await call_error(client, UPDATE, args)
        assert (error["code"], error["details"]["field"]) == (code, field), args
    assert fact in ids(await read(client, repo, query))
