"""Seed 004 ("cortex-find-store") through the MCP client: memory.find and memory.store on the real
engines, user stories 1-4 and the bad inputs of both tools.

One server for the module, on the profiles ``cortex-find-store,default`` so the audit can be read
with memory_audit; the caller is on branch feature-A of project shop (no org: a tenant without
one is the seed's malformed scope). Each test uses its own words, so tests do not see each other.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, ServerSettings, Settings
from tests.conftest import profile_settings, require_model
from tests.e2e.conftest import call_ok, payload

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

KINDS = ("section", "runbook", "change", "issue", "decision", "todo", "release_note", "ddl", "pr_context")
SEED_ERROR_KEYS = {"error_code", "human_hint", "fix", "details"}


@pytest.fixture(scope="module")
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    root = tmp_path_factory.mktemp("find-store")
    settings = Settings(
        data_dir=root / "data",
        project_root=root,
        project="shop",
        branch="feature-A",  # the caller's branch (seed 004 A-001: from git or settings)
        embedding=EmbeddingSettings(model_path=require_model(), load_timeout_seconds=120),
        server=ServerSettings(http_port=0, profile="cortex-find-store,default"),
        **profile_settings(root / "data"),
    )
    async with Client(build_server(settings)) as c:
        yield c


async def store(client: Client, *items: dict[str, Any], tool: str = "memory-store") -> dict[str, Any]:
    return await call_ok(client, tool, {"items": list(items)})


async def find(client: Client, query: str, **args: Any) -> dict[str, Any]:
    return await call_ok(client, "memory-find", {"query": query, **args})


def seed_error(result: CallToolResult) -> dict[str, Any]:
    """A whole-call refusal: seed 004's error shape, as text only with isError."""
    assert result.is_error
    assert result.structured_content is None
    data = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert set(data) == SEED_ERROR_KEYS, data
    assert data["human_hint"] and isinstance(data["fix"], dict) and data["details"]["code"]
    return data


async def creates(client: Client, memory_id: str | None = None) -> list[dict[str, Any]]:
    args: dict[str, Any] = {"operation": "create", "limit": 500}
    if memory_id:
        args["memory_id"] = memory_id
    return (await call_ok(client, "memory_audit", args))["events"]


async def events(client: Client, memory_id: str) -> list[str]:
    found = await call_ok(client, "memory_audit", {"memory_id": memory_id, "limit": 50})
    return sorted(e["operation"] for e in found["events"])


def decision(title: str, rationale: Any, status: str = "accepted", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "decision",
        "scope": {},
        "data": {
            "component": "billing",
            "status": status,
            "title": title,
            "rationale": rationale,
            "alternatives": ["MongoDB", "DynamoDB"],
        },
        **extra,
    }


def ids(found: dict[str, Any]) -> list[str]:
    return [h["id"] for h in found["hits"]]


# ------------------------------------------------------------------ the surface (FR-001..006)


async def test_the_two_tools_publish_the_seed_parameters(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"memory-find", "memory-store"} <= set(tools)
    find_schema = tools["memory-find"].input_schema
    assert set(find_schema["properties"]) == {"query", "scope", "types", "top_k", "mode", "time_range"}
    assert find_schema["required"] == ["query"]
    assert find_schema["properties"]["top_k"]["default"] == 20
    assert find_schema["properties"]["mode"]["enum"] == ["auto", "fast", "deep"]
    assert set(find_schema["properties"]["time_range"]["properties"]) == {"since", "until"}
    assert set(find_schema["properties"]["types"]["items"]["enum"]) == set(KINDS)
    item = tools["memory-store"].input_schema["properties"]["items"]["items"]
    assert set(item["properties"]) == {
        "kind",
        "scope",
        "data",
        "tags",
        "source",
        "idempotency_key",
        "ttl_policy",
    }
    assert set(item["required"]) == {"kind", "scope", "data"}
    assert item["properties"]["ttl_policy"]["enum"] == ["PR30d", "BRANCH90d", "NONE"]
    hit = tools["memory-find"].output_schema["properties"]["hits"]["items"]  # type: ignore[index]
    assert {"kind", "id", "snippet", "score"} <= set(hit["required"])
    assert {"title", "tags", "last_verified", "route_used", "confidence", "citations"} <= set(
        hit["properties"]
    )
    stored = tools["memory-store"].output_schema["properties"]["stored"]["items"]  # type: ignore[index]
    assert stored["properties"]["status"]["enum"] == ["inserted", "updated", "skipped_dedupe"]


async def test_the_seed_names_with_dots_are_answered(client: Client) -> None:
    out = await store(
        client,
        {
            "kind": "todo",
            "scope": {},
            "data": {"scope": "branch", "todo_type": "doc", "text": "Document the zebra import"},
        },
        tool="memory.store",
    )
    assert out["stored"][0]["status"] == "inserted"
    found = await call_ok(client, "memory.find", {"query": "zebra import documentation"})
    assert out["stored"][0]["id"] in ids(found)


# ------------------------------------------------------------------ user story 1


async def test_us1_a_decision_is_stored_and_found(client: Client) -> None:
    out = await store(client, decision("Use Postgres for the ledger", {"why": "ACID transactions for money"}))
    assert out["errors"] == []
    (stored,) = out["stored"]
    assert stored["status"] == "inserted" and stored["kind"] == "decision"
    found = await find(client, "why do we keep the ledger in Postgres")
    hit = found["hits"][0]
    assert hit["id"] == stored["id"]
    assert hit["kind"] == "decision"
    assert hit["score"] > 0 and 0 < len(hit["snippet"]) <= 300
    assert "Postgres" in hit["snippet"]
    assert hit["title"] == "Use Postgres for the ledger"
    assert hit["route_used"] in ("fts", "semantic", "graph")
    assert 0 <= hit["confidence"] <= 1
    assert hit["last_verified"]
    # The seed's 300 ms is a latency target, not behaviour: the debug block reports a real time
    # (bench/profiles_latency.py measures it on a quiet machine; a loaded one may take longer).
    assert isinstance(found["debug"]["query_time_ms"], int | float) and found["debug"]["query_time_ms"] >= 0


async def test_us1_the_same_idempotency_key_twice_is_skipped(client: Client) -> None:
    item = decision(
        "Queue refunds through Kafka", "Ordering per account", idempotency_key="adr-kafka-refunds"
    )
    first = (await store(client, item))["stored"][0]
    second = (await store(client, item))["stored"][0]
    assert first["status"] == "inserted"
    assert second == {**first, "status": "skipped_dedupe"}
    assert len(await creates(client, first["id"])) == 1  # FR-035: one create, none for the skip
    found = await find(client, "Kafka refunds ordering", types=["decision"])
    assert ids(found).count(first["id"]) == 1


async def test_us1_the_same_content_without_a_key_is_skipped(client: Client) -> None:
    item = {
        "kind": "ddl",
        "scope": {},
        "data": {"entity": "walrus_accounts", "ddl_sql": "CREATE TABLE walrus_accounts (id int)"},
    }
    first = (await store(client, item))["stored"][0]
    again = (await store(client, item))["stored"][0]
    assert (first["status"], again["status"]) == ("inserted", "skipped_dedupe")
    assert again["id"] == first["id"]


async def test_us1_a_search_without_types_spans_kinds(client: Client) -> None:
    topic = "narwhal settlement"
    out = await store(
        client,
        {
            "kind": "section",
            "scope": {},
            "data": {
                "title": "Narwhal settlement",
                "body_md": f"# {topic}\n\nThe {topic} batch closes at midnight.",
            },
        },
        {
            "kind": "runbook",
            "scope": {},
            "data": {"service": "narwhal", "steps": [f"pause the {topic} batch", "re-run it"]},
        },
        {
            "kind": "issue",
            "scope": {},
            "data": {
                "tracker": "jira",
                "external_id": "NAR-7",
                "title": f"{topic} batch is late",
                "status": "open",
            },
        },
        {
            "kind": "ddl",
            "scope": {},
            "data": {"entity": "narwhal_settlement", "ddl_sql": "CREATE TABLE narwhal_settlement (id int)"},
        },
    )
    assert [s["status"] for s in out["stored"]] == ["inserted"] * 4
    found = await find(client, topic)
    kinds = {h["kind"] for h in found["hits"] if h["id"] in {s["id"] for s in out["stored"]}}
    assert kinds == {"section", "runbook", "issue", "ddl"}
    only = await find(client, topic, types=["runbook"])
    assert {h["kind"] for h in only["hits"]} == {"runbook"}


async def test_every_kind_is_stored_and_read_back(client: Client) -> None:
    merged = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    data = {
        "section": {"title": "Okapi guide", "body_text": "The okapi service exports invoices."},
        "runbook": {
            "service": "okapi",
            "steps": [{"do": "restart okapi"}],
            "last_verified_at": "2025-01-02T00:00:00Z",
        },
        "change": {
            "change_type": "config",
            "subject_ref": {"file": "okapi.toml"},
            "summary": "Raise okapi timeout",
        },
        "issue": {"tracker": "github", "external_id": "OKA-3", "title": "Okapi times out", "status": "open"},
        "decision": {
            "component": "okapi",
            "status": "proposed",
            "title": "Okapi uses gRPC",
            "rationale": "latency",
            "alternatives": [],
        },
        "todo": {"scope": "service", "todo_type": "ops", "text": "Rotate okapi keys"},
        "release_note": {"version": "2.1.0", "highlights": ["Okapi exports in CSV"]},
        "ddl": {"entity": "okapi_invoice", "ddl_sql": "CREATE TABLE okapi_invoice (id int)"},
        "pr_context": {
            "pr_id": "77",
            "repo": "okapi",
            "files": ["okapi.py"],
            "findings": ["okapi leak"],
            "merged_at": merged,
        },
    }
    out = await store(
        client,
        *(
            {"kind": k, "scope": {}, "data": d, "tags": ["okapi"], "source": "seed-004-test"}
            for k, d in data.items()
        ),
    )
    assert out["errors"] == []
    by_kind = {s["kind"]: s for s in out["stored"]}
    assert set(by_kind) == set(KINDS)
    assert all(s["status"] == "inserted" for s in out["stored"])
    # Default TTLs (FR-041/042): change and todo 90 days, pr_context 30 days after the merge.
    expected_pr = datetime.fromisoformat(merged) + timedelta(days=30)
    assert datetime.fromisoformat(by_kind["pr_context"]["expires_at"]) == expected_pr
    for kind in ("change", "todo"):
        left = datetime.fromisoformat(by_kind[kind]["expires_at"]) - datetime.now(UTC)
        assert timedelta(days=89) < left <= timedelta(days=90)
    assert by_kind["decision"]["expires_at"] is None
    for kind in KINDS:
        found = await find(client, "okapi", types=[kind], top_k=5)
        (hit,) = [h for h in found["hits"] if h["id"] == by_kind[kind]["id"]]
        assert hit["kind"] == kind
        assert hit["tags"] == ["okapi"]
        assert "seed-004-test" in hit["citations"]
        assert {h["kind"] for h in found["hits"]} == {kind}
    runbook = next(h for h in (await find(client, "restart okapi", types=["runbook"]))["hits"])
    assert runbook["last_verified"] == "2025-01-02T00:00:00Z"
    pr = next(h for h in (await find(client, "okapi leak", types=["pr_context"]))["hits"])
    assert "okapi#77" in pr["citations"]


async def test_ttl_policy_overrides_the_kind_default(client: Client) -> None:
    out = await store(
        client,
        {
            "kind": "todo",
            "scope": {},
            "data": {"scope": "user", "todo_type": "doc", "text": "Write the lynx FAQ"},
            "ttl_policy": "NONE",
        },
        {
            "kind": "issue",
            "scope": {},
            "data": {"tracker": "t", "external_id": "LYN-1", "title": "Lynx", "status": "open"},
            "ttl_policy": "BRANCH90d",
        },
    )
    todo, issue = out["stored"]
    assert todo["expires_at"] is None
    assert issue["expires_at"] is not None


async def test_a_long_section_is_stored_in_chunks(client: Client) -> None:
    topics = ["Ingestion", "Validation", "Settlement", "Reconciliation", "Archival", "Auditing"]
    body = "# Quokka pipeline\n\nThe quokka pipeline moves payouts.\n\n" + "\n\n".join(
        f"## {t}\n\n" + f"The quokka {t.lower()} stage is described here in detail. " * 25 for t in topics
    )
    item = {
        "kind": "section",
        "scope": {},
        "idempotency_key": "quokka-pipeline",
        "data": {"title": "Quokka pipeline", "body_md": body},
    }
    first = (await store(client, item))["stored"][0]
    chunk_ids = first["chunk_ids"]
    assert first["status"] == "inserted" and len(chunk_ids) > 2 and chunk_ids[0] == first["id"]
    found = await find(client, "quokka archival stage", types=["section"])
    archival = next(h for h in found["hits"] if "Archival" in (h["title"] or ""))
    assert archival["id"] in chunk_ids
    assert archival["title"].startswith("Quokka pipeline > ")
    again = (await store(client, item))["stored"][0]
    assert again == {**first, "status": "skipped_dedupe"}
    # The document shrinks under the same key: rewritten in place, the chunks it lost are gone.
    short = {
        **item,
        "data": {
            "title": "Quokka pipeline",
            "body_md": "# Quokka pipeline\n\nRetired: payouts moved to okapi.",
        },
    }
    shrunk = (await store(client, short))["stored"][0]
    assert shrunk["status"] == "updated" and shrunk["id"] == first["id"] and shrunk["chunk_ids"] == []
    left = ids(await find(client, "quokka pipeline stage", types=["section"], scope={"branch": "*"}))
    assert first["id"] in left
    assert not set(chunk_ids[1:]) & set(left)


async def test_an_unkeyed_section_keeps_repeated_chunks_apart(client: Client) -> None:
    paragraph = "Every wombat release follows the same checklist, item by item, without exception. " * 20
    body = "\n\n".join([paragraph.strip()] * 6)  # six identical 1.6 KB paragraphs: identical chunks
    item = {"kind": "section", "scope": {}, "data": {"title": "Wombat releases", "body_text": body}}
    first = (await store(client, item))["stored"][0]
    assert first["status"] == "inserted"
    assert len(first["chunk_ids"]) == len(set(first["chunk_ids"])) >= 2, first  # each repeat kept
    again = (await store(client, item))["stored"][0]
    assert again == {**first, "status": "skipped_dedupe"}


# ------------------------------------------------------------------ user story 2


async def test_us2_branches_are_isolated_unless_widened(client: Client) -> None:
    text = "The ibex cache is warmed at deploy time"
    out = await store(
        client,
        {
            "kind": "section",
            "scope": {"branch": "feature-A"},
            "data": {"title": "Ibex cache (A)", "body_text": text},
        },
        {
            "kind": "section",
            "scope": {"branch": "feature-B"},
            "data": {"title": "Ibex cache (B)", "body_text": text},
        },
        {
            "kind": "decision",
            "scope": {"branch": "main"},
            "data": {
                "component": "ibex",
                "status": "accepted",
                "title": "Ibex cache warming on main",
                "rationale": "cold starts",
                "alternatives": [],
            },
        },
    )
    mine, theirs, main = (s["id"] for s in out["stored"])
    for mode in ("auto", "fast", "deep"):
        seen = ids(await find(client, "ibex cache warming", mode=mode))
        assert mine in seen and theirs not in seen and main not in seen, mode
    on_b = await find(client, "ibex cache warming", scope={"branch": "feature-B"})
    assert theirs in ids(on_b) and mine not in ids(on_b)
    assert all(h["scope"]["branch"] == "feature-B" for h in on_b["hits"] if "branch" in h["scope"])
    on_main = await find(client, "ibex cache warming", scope={"branch": "main"})
    assert main in ids(on_main)
    everywhere = await find(client, "ibex cache warming", scope={"branch": "*"})
    assert {mine, theirs, main} <= set(ids(everywhere))
    # FR-021 / US2-3: the same text on the caller's branch ranks above another branch's.
    order = ids(everywhere)
    assert order.index(mine) < order.index(theirs)


# ------------------------------------------------------------------ user story 3


async def test_us3_an_accepted_decision_cannot_be_changed(client: Client) -> None:
    original = decision("Money is stored in cents", "Floats lose precision", idempotency_key="adr-cents")
    first = (await store(client, original))["stored"][0]
    changed = decision("Money is stored in cents", "Decimals are fine too", idempotency_key="adr-cents")
    out = await store(client, changed)
    assert out["stored"] == []
    (error,) = out["errors"]
    assert error["index"] == 0 and error["error_code"] == "CONFLICT"
    assert error["details"]["code"] == "CON_IMMUTABLE_DECISION"
    assert "accepted" in error["human_hint"] and error["fix"]["memory_id"] == first["id"]
    hit = next(h for h in (await find(client, "money stored in cents"))["hits"] if h["id"] == first["id"])
    assert "Floats lose precision" in hit["snippet"] and "Decimals" not in hit["snippet"]
    assert await events(client, first["id"]) == ["create"]  # nothing changed, nothing audited
    # Retiring it is allowed: an accepted decision may still move to superseded (FR-036).
    retired = decision(
        "Money is stored in cents", "Floats lose precision", status="superseded", idempotency_key="adr-cents"
    )
    assert (await store(client, retired))["stored"][0]["status"] == "updated"
    assert await events(client, first["id"]) == ["create", "update"]


async def test_us3_a_proposed_decision_is_updated_under_its_key(client: Client) -> None:
    key = "adr-gecko-cache"
    first = await store(
        client, decision("Gecko cache in Redis", "speed", status="proposed", idempotency_key=key)
    )
    memory_id = first["stored"][0]["id"]
    changed = decision("Gecko cache in Redis", "speed and expiry", status="proposed", idempotency_key=key)
    updated = (await store(client, changed))["stored"][0]
    assert updated["status"] == "updated" and updated["id"] == memory_id
    assert await events(client, memory_id) == ["create", "update"]
    hit = next(h for h in (await find(client, "gecko cache redis"))["hits"] if h["id"] == memory_id)
    assert "speed and expiry" in hit["snippet"]


def spec_section(body: str, **data: Any) -> dict[str, Any]:
    return {
        "kind": "section",
        "scope": {},
        "data": {"title": "Refund policy spec", "body_md": body, "status": "approved", **data},
        "idempotency_key": "spec-refunds",
    }


async def test_us3_an_approved_spec_is_write_locked_until_a_version_bump(client: Client) -> None:
    first = (await store(client, spec_section("Refunds are paid within 14 days.")))["stored"][0]
    assert first["status"] == "inserted"
    memory_id = first["id"]
    changed = await store(client, spec_section("Refunds are paid within 30 days."))
    assert changed["stored"] == [] and changed["errors"][0]["error_code"] == "CONFLICT", changed
    assert changed["errors"][0]["details"]["code"] == "CON_SPEC_LOCKED"
    assert await events(client, memory_id) == ["create"]  # nothing written
    bumped = await store(client, spec_section("Refunds are paid within 30 days.", spec_version="2"))
    assert bumped["stored"][0] == {**bumped["stored"][0], "id": memory_id, "status": "updated"}
    got = await call_ok(client, "memory_get", {"memory_id": memory_id})
    assert "30 days" in got["memory"]["content"]
    assert got["memory"]["metadata"]["status"] == "Draft"  # back for re-approval (FR-037)


async def test_us3_every_insert_is_audited_once(client: Client) -> None:
    before = len(await creates(client))
    items = [
        {
            "kind": "issue",
            "scope": {},
            "data": {
                "tracker": "jira",
                "external_id": f"TAP-{i}",
                "title": f"Tapir bug {i}",
                "status": "open",
            },
        }
        for i in range(3)
    ]
    out = await store(client, *items)
    inserted = [s["id"] for s in out["stored"] if s["status"] == "inserted"]
    assert len(inserted) == 3
    await store(client, *items)  # all skipped: no audit
    after = await creates(client)
    assert len(after) == before + 3
    assert {e["entity_id"] for e in after[:3]} == set(inserted)
    for event in after[:3]:
        assert event["actor"] and event["timestamp"] and event["details"]["type"] == "issue"


async def test_us3_an_idempotency_key_names_one_kind(client: Client) -> None:
    await store(
        client,
        {
            "kind": "todo",
            "scope": {},
            "idempotency_key": "heron-1",
            "data": {"scope": "user", "todo_type": "doc", "text": "Heron docs"},
        },
    )
    out = await store(
        client,
        {
            "kind": "issue",
            "scope": {},
            "idempotency_key": "heron-1",
            "data": {"tracker": "t", "external_id": "HER-1", "title": "Heron", "status": "open"},
        },
    )
    assert out["errors"][0]["error_code"] == "CONFLICT"
    assert out["errors"][0]["details"]["code"] == "CON_IDEMPOTENCY_KEY"


# ------------------------------------------------------------------ user story 4


async def test_us4_auto_mode_routes_issue_ids_logs_first(client: Client) -> None:
    out = await store(
        client,
        {
            "kind": "issue",
            "scope": {},
            "data": {
                "tracker": "jira",
                "external_id": "YAK-4821",
                "title": "Yak export drops rows",
                "status": "open",
            },
        },
        {
            "kind": "pr_context",
            "scope": {},
            "data": {
                "pr_id": "913",
                "repo": "yak",
                "files": ["export.py"],
                "findings": ["YAK-4821 fixed by batching"],
            },
        },
    )
    wanted = {s["id"] for s in out["stored"]}
    found = await find(client, "YAK-4821", mode="auto")
    assert found["debug"]["route"] == "change_first"
    assert found["debug"]["strategy"].startswith("logs-first")
    assert wanted <= set(ids(found)[:3])
    assert all(h["route_used"] in ("fts", "semantic", "graph") for h in found["hits"])
    pr = await find(client, "PR 913 export batching", mode="auto")
    assert pr["debug"]["route"] == "change_first"


async def test_us4_low_recall_comes_with_suggestions(client: Client) -> None:
    found = await find(client, "pangolin telemetry quotas", types=["release_note"])
    assert len([h for h in found["hits"] if (h["confidence"] or 0) >= 0.5]) < 3
    assert found["suggestions"] and all(isinstance(s, str) and s for s in found["suggestions"])
    assert any("types" in s for s in found["suggestions"])
    assert any("branch" in s for s in found["suggestions"])


async def test_us4_fast_and_deep_modes(client: Client) -> None:
    out = await store(
        client,
        {"kind": "runbook", "scope": {}, "data": {"service": "marmot", "steps": ["flush the marmot queue"]}},
    )
    memory_id = out["stored"][0]["id"]
    fast = await find(client, "marmot queue", mode="fast")
    assert fast["debug"]["mode"] == "fast" and fast["debug"]["search_mode"] == "lexical"
    assert memory_id in ids(fast) and all(h["route_used"] == "fts" for h in fast["hits"])
    assert (await find(client, "marmot queue", mode="fast"))["debug"]["cached"] is True
    deep = await find(client, "marmott queeue flushing", mode="deep")  # misspelt: fuzzy terms
    assert deep["debug"]["mode"] == "deep" and memory_id in ids(deep)


async def test_time_range_filters_on_creation(client: Client) -> None:
    out = await store(
        client,
        {"kind": "release_note", "scope": {}, "data": {"version": "9.9.9", "highlights": ["Ocelot mode"]}},
    )
    memory_id = out["stored"][0]["id"]
    now = datetime.now(UTC)
    inside = {
        "since": (now - timedelta(hours=1)).isoformat(),
        "until": (now + timedelta(hours=1)).isoformat(),
    }
    assert memory_id in ids(await find(client, "ocelot mode release", time_range=inside))
    later = {"since": (now + timedelta(hours=1)).isoformat()}
    assert memory_id not in ids(await find(client, "ocelot mode release", time_range=later))


async def test_top_k_limits_the_hits(client: Client) -> None:
    await store(
        client,
        *(
            {
                "kind": "todo",
                "scope": {},
                "data": {"scope": "project", "todo_type": "feature", "text": f"Bison feature {i}"},
            }
            for i in range(4)
        ),
    )
    assert len((await find(client, "bison feature", top_k=2))["hits"]) == 2


# ------------------------------------------------------------------ bad inputs


async def test_missing_kind_fields_are_refused_per_item(client: Client) -> None:
    before = len(await creates(client))
    out = await store(
        client,
        {"kind": "runbook", "scope": {}, "data": {"title": "Emu restart"}},
        {"kind": "decision", "scope": {}, "data": {"component": "emu", "title": "Emu"}},
        {"kind": "section", "scope": {}, "data": {"title": "Emu notes"}},
        {
            "kind": "issue",
            "scope": {},
            "data": {"tracker": "t", "external_id": "EMU-1", "title": "Emu", "status": "open"},
        },
        {
            "kind": "issue",
            "scope": {"tenant": "acme-eu"},
            "data": {"tracker": "t", "external_id": "EMU-2", "title": "Emu", "status": "open"},
        },
        {"kind": "wombat", "scope": {}, "data": {}},
        {"kind": "todo", "data": {"scope": "user", "todo_type": "doc", "text": "t"}},
    )
    assert [s["index"] for s in out["stored"]] == [3]  # partial success
    errors = {e["index"]: e for e in out["errors"]}
    assert sorted(errors) == [0, 1, 2, 4, 5, 6]
    for error in errors.values():
        assert set(error) >= {"index", "error_code", "human_hint", "fix"} and error["human_hint"]
    assert errors[0]["error_code"] == "MISSING_FIELDS"
    assert errors[0]["fix"]["fields"] == ["items[0].data.service", "items[0].data.steps"]
    assert set(errors[0]["fix"]["expected"]) == {"items[0].data.service", "items[0].data.steps"}
    assert set(errors[1]["fix"]["fields"]) == {
        f"items[1].data.{f}" for f in ("status", "rationale", "alternatives")
    }
    assert errors[2]["fix"]["fields"] == ["items[2].data.body_md|body_text"]
    assert errors[4]["error_code"] == "INVALID_SCOPE"
    assert errors[4]["details"]["code"] == "VAL_INVALID_SCOPE"
    assert errors[4]["fix"]["fields"] == ["items[4].scope.tenant"]
    assert (
        errors[5]["error_code"] == "INVALID_FIELDS"  # given, but not one of the nine kinds
        and "section" in errors[5]["fix"]["expected"]["items[5].kind"]
    )
    assert errors[6]["error_code"] == "MISSING_FIELDS" and errors[6]["fix"]["fields"] == ["items[6].scope"]
    assert len(await creates(client)) == before + 1  # only the good item was written


async def test_store_refuses_malformed_calls_whole(client: Client) -> None:
    """Each refusal is named for what it is: MISSING_FIELDS only when something is missing."""
    malformed: list[tuple[dict[str, Any], str]] = [
        ({"items": []}, "MISSING_FIELDS"),
        ({}, "MISSING_FIELDS"),
        ({"items": [{}] * 101}, "TOO_MANY_ITEMS"),
        ({"items": "not a list"}, "INVALID_FIELDS"),
        ({"items": [{}], "dry_run": True}, "UNKNOWN_FIELDS"),
    ]
    for args, code in malformed:
        error = seed_error(await client.call_tool("memory-store", args))
        assert error["error_code"] == code, (args, error)
        assert error["fix"]["fields"][0].startswith(("items", "dry_run")), error


async def test_store_names_each_bad_item_for_what_it_is(client: Client) -> None:
    todo = {"scope": "user", "todo_type": "doc", "text": "Document the quokka feed"}
    out = await store(
        client,
        {"kind": "todo", "scope": {}, "data": {**todo, "todo_type": "chore"}},  # not in the enum
        {"kind": "todo", "scope": {}, "data": {**todo, "text": ["not", "a", "string"]}},  # wrong type
        {"kind": "todo", "scope": {}, "data": todo, "colour": "red"},  # not an item field
        {"kind": "todo", "scope": {}, "data": todo, "tags": "quokka"},  # tags: a list or an object
        {"kind": "todo", "scope": {}, "data": {"scope": "user", "todo_type": "doc"}},  # text missing
        {"kind": "todo", "scope": {"org": None, "tenant": "quokka-eu"}, "data": todo},
    )
    assert out["stored"] == []
    codes = {e["index"]: (e["error_code"], e["details"]["code"]) for e in out["errors"]}
    assert codes == {
        0: ("INVALID_FIELDS", "VAL_INVALID_ENUM"),
        1: ("INVALID_FIELDS", "VAL_INVALID_FIELD_TYPE"),
        2: ("UNKNOWN_FIELDS", "VAL_UNKNOWN_FIELD"),
        3: ("INVALID_FIELDS", "VAL_INVALID_FIELD_TYPE"),
        4: ("MISSING_FIELDS", "VAL_MISSING_FIELD"),
        5: ("INVALID_SCOPE", "VAL_INVALID_SCOPE"),
    }, out["errors"]
    enum = out["errors"][0]
    assert enum["fix"]["fields"] == ["items[0].data.todo_type"]
    assert "feature" in enum["fix"]["expected"]["items[0].data.todo_type"]
    tools = {t.name: t for t in (await client.list_tools()).tools}
    error_code = tools["memory-store"].output_schema["properties"]["errors"]["items"]  # type: ignore[index]
    published = set(error_code["properties"]["error_code"]["enum"])
    assert {"MISSING_FIELDS", "INVALID_FIELDS", "UNKNOWN_FIELDS", "TOO_MANY_ITEMS", "CONFLICT"} <= published


async def test_find_refuses_bad_inputs(client: Client) -> None:
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"query": "   "}, "MISSING_FIELDS", "query"),
        ({}, "MISSING_FIELDS", "query"),
        ({"query": "x", "top_k": 0}, "INVALID_FIELDS", "top_k"),
        ({"query": "x", "top_k": 101}, "INVALID_FIELDS", "top_k"),
        ({"query": "x", "top_k": "ten"}, "INVALID_FIELDS", "top_k"),
        ({"query": "x", "types": ["wombat"]}, "INVALID_FIELDS", "types[0]"),
        ({"query": "x", "mode": "turbo"}, "INVALID_FIELDS", "mode"),
        ({"query": "x", "limit": 5}, "UNKNOWN_FIELDS", "limit"),
        ({"query": "x", "scope": {"tenant": "acme-eu"}}, "INVALID_SCOPE", "scope.tenant"),
    ]
    for args, code, field in cases:
        error = seed_error(await client.call_tool("memory-find", args))
        assert error["error_code"] == code, (args, error)
        assert error["fix"]["fields"] == [field], (args, error)
        assert error["fix"]["action"], error
    since_after_until = {"since": "2025-02-01T00:00:00Z", "until": "2025-01-01T00:00:00Z"}
    error = seed_error(await client.call_tool("memory-find", {"query": "x", "time_range": since_after_until}))
    assert error["error_code"] == "INVALID_FIELDS" and "since" in error["human_hint"]
    error = seed_error(await client.call_tool("memory-find", {"query": "x", "top_k": 0}))
    assert error["fix"]["expected"] == {"top_k": {"ge": 1}}


async def test_answers_are_structured_and_text_alike(client: Client) -> None:
    result = await client.call_tool("memory-find", {"query": "anything at all"})
    data = payload(result)  # structured content equals the text's JSON
    assert set(data) == {"hits", "suggestions", "debug"}


async def test_find_refuses_a_malformed_scope_as_store_does(client: Client) -> None:
    """A tenant without an org (the seed's malformed scope): refused by both tools, however the org
    is left out (absent, null, or widened to every org), and nothing is written."""
    item = {
        "kind": "issue",
        "data": {"tracker": "t", "external_id": "NUMBAT-1", "title": "N", "status": "open"},
    }
    before = len(await creates(client))
    for scope in (
        {"tenant": "acme-eu"},
        {"tenant": "acme-eu", "org": None},
        {"tenant": "acme-eu", "org": "*"},
    ):
        refused = (await store(client, {**item, "scope": scope}))["errors"]
        assert [e["error_code"] for e in refused] == ["INVALID_SCOPE"], (scope, refused)
        error = seed_error(await client.call_tool("memory-find", {"query": "numbat", "scope": scope}))
        assert error["error_code"] == "INVALID_SCOPE", (scope, error)
        assert error["fix"]["fields"] == ["scope.tenant"] and "org" in error["human_hint"], error
    assert len(await creates(client)) == before
    # With its org a tenant is a scope like any other; '*' widens a tenant, which needs no org.
    await find(client, "numbat", scope={"org": "acme", "tenant": "acme-eu"})
    await find(client, "numbat", scope={"tenant": "*"})


async def test_find_hits_carry_the_stale_flag(client: Client) -> None:
    """FR-043: a runbook verified more than 90 days ago is flagged on its hit; a fresh one is not."""
    now = datetime.now(UTC)
    verified = {"old": now - timedelta(days=120), "fresh": now - timedelta(days=3)}
    ids = {}
    for name, when in verified.items():
        out = await store(
            client,
            {
                "kind": "runbook",
                "scope": {},
                "data": {
                    "service": f"wallaby-{name}",
                    "steps": [f"restart the wallaby {name} worker", "check the wallaby queue"],
                    "last_verified_at": when.isoformat(),
                },
            },
        )
        ids[name] = out["stored"][0]["id"]
    hits = {h["id"]: h for h in (await find(client, "restart the wallaby worker"))["hits"]}
    assert set(ids.values()) <= set(hits)
    stale = hits[ids["old"]]["stale"]
    assert stale is not None and "last verified 120 days ago" in stale["reason"], stale
    assert hits[ids["fresh"]]["stale"] is None
    tools = {t.name: t for t in (await client.list_tools()).tools}
    hit_schema = tools["memory-find"].output_schema["properties"]["hits"]["items"]  # type: ignore[index]
    assert "stale" in hit_schema["properties"]


FR_024 = {"base": 0.4, "recency": 0.3, "scope": 0.2, "citations": 0.1}


async def test_find_ranks_by_the_fr024_formula_by_default(client: Client) -> None:
    """The server's ranking settings are the defaults (not seed004): memory-find still scores each
    hit as 0.4 relevance + 0.3 recency + 0.2 scope proximity + 0.1 citations, component by component
    as memory_explain reports them; memory_search keeps the settings' weights."""
    await store(
        client,
        *(
            {
                "kind": "section",
                "scope": {},
                "data": {
                    "title": f"Platypus ledger {i}",
                    "body_md": f"The platypus ledger closes at {i} pm.",
                },
            }
            for i in (5, 6, 7)
        ),
    )
    query = "platypus ledger closing time"
    hits = (await find(client, query))["hits"]
    assert len(hits) >= 3
    explained = await call_ok(client, "memory_explain", {"query": query, "ids": [h["id"] for h in hits[:3]]})
    components = {item["id"]: item["score"]["components"] for item in explained["items"]}
    for hit in hits[:3]:
        parts = components[hit["id"]]
        expected = sum(weight * (parts.get(name) or 0.0) for name, weight in FR_024.items())
        assert hit["score"] == pytest.approx(expected, abs=2e-3), (hit, parts)
    searched = await call_ok(client, "memory_search", {"query": query, "limit": 3})
    by_id = {r["memory_id"]: r["relevance_score"] for r in searched["results"]}
    assert any(
        by_id.get(h["id"]) != pytest.approx(h["score"], abs=2e-3) for h in hits[:3] if h["id"] in by_id
    )


async def test_us3_an_approved_spec_is_locked_whatever_the_key(client: Client) -> None:
    """FR-037: an edit of an approved spec is refused without a version bump whether it carries the
    spec's idempotency key, another one, or none; with a bump it updates the spec (back to Draft)."""

    def spec(body: str, key: str | None, **data: Any) -> dict[str, Any]:
        item: dict[str, Any] = {
            "kind": "section",
            "scope": {},
            "data": {"title": "Payout schedule spec", "body_md": body, "status": "approved", **data},
        }
        return {**item, "idempotency_key": key} if key else item

    first = (await store(client, spec("Payouts run every Monday.", "spec-payouts")))["stored"][0]
    memory_id = first["id"]
    for key in (None, "spec-payouts-v2"):
        out = await store(client, spec("Payouts run every Friday.", key))
        assert out["stored"] == [], (key, out)
        (error,) = out["errors"]
        assert error["error_code"] == "CONFLICT" and error["details"]["code"] == "CON_SPEC_LOCKED", error
        assert error["fix"]["memory_id"] == memory_id
    assert await events(client, memory_id) == ["create"]
    assert [h["id"] for h in (await find(client, "payout schedule spec"))["hits"]].count(memory_id) == 1
    again = (await store(client, spec("Payouts run every Monday.", None)))["stored"][0]
    assert again == {**again, "id": memory_id, "status": "skipped_dedupe"}
    bumped = (await store(client, spec("Payouts run every Friday.", None, spec_version="2")))["stored"][0]
    assert bumped == {**bumped, "id": memory_id, "status": "updated"}
    got = (await call_ok(client, "memory_get", {"memory_id": memory_id}))["memory"]
    assert "Friday" in got["content"] and got["metadata"]["status"] == "Draft"


async def test_a_change_is_an_immutable_record_under_its_key(client: Client) -> None:
    """A change is seed 002's `change` kind too: new data under its key is refused, not updated."""

    def change(summary: str) -> dict[str, Any]:
        data = {"change_type": "config", "subject_ref": {"file": "kiwi.toml"}, "summary": summary}
        return {"kind": "change", "scope": {}, "data": data, "idempotency_key": "chg-kiwi-timeout"}

    first = (await store(client, change("Raised the kiwi timeout to 30 s")))["stored"][0]
    out = await store(client, change("Raised the kiwi timeout to 60 s"))
    assert out["stored"] == []
    (error,) = out["errors"]
    assert error["error_code"] == "CONFLICT" and error["details"]["code"] == "VAL_IMMUTABLE_CONTENT", error
    assert await events(client, first["id"]) == ["create"]
