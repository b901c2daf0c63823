"""Memory CRUD + search through the SDK's in-memory MCP client, on real engines and the real model."""

from __future__ import annotations

import uuid

import pytest
from mcp import Client

from memory_service.core.tokens import json_tokens
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TOOLS = {"memory_add", "memory_update", "memory_delete", "memory_get", "memory_bulk_add", "memory_search"}


async def test_lists_tools_with_annotations_and_output_schemas(client: Client) -> None:
    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) >= TOOLS
    for name in TOOLS:
        tool = listed[name]
        assert tool.output_schema and tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None
        assert tool.description
    assert listed["memory_search"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert listed["memory_delete"].annotations.destructive_hint is True  # type: ignore[union-attr]


async def test_add_get_roundtrip_with_metadata(client: Client) -> None:
    added = await call_ok(
        client,
        "memory_add",
        {
            "type": "requirements",
            "content": "The system shall provide semantic search across all memory types.",
            "metadata": {
                "requirement_id": "REQ-MEM-FN-080",
                "title": "Semantic Search",
                "priority": "critical",
            },
        },
    )
    assert added["status"] == "created"
    assert uuid.UUID(added["memory_id"])
    got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
    memory = got["memory"]
    assert memory["id"] == added["memory_id"]
    assert memory["type"] == "requirements"
    assert memory["metadata"]["priority"] == "Critical"  # canonical spelling
    assert memory["title"] == "Semantic Search"
    assert memory["version"] == 1 and memory["status"] == "active"
    assert memory["scope"]["project"] == "test"
    assert len(memory["content_hash"]) == 64


async def test_add_reports_conflicts_for_near_duplicates(client: Client) -> None:
    text = "Payment retries use exponential backoff with jitter, capped at five attempts."
    first = await call_ok(client, "memory_add", {"type": "code_pattern", "content": text})
    second = await call_ok(
        client,
        "memory_add",
        {
            "type": "code_pattern",
            "content": "Payment retries use exponential backoff with jitter, max 5 attempts.",
        },
    )
    ids = {c["memory_id"]: c["similarity"] for c in second["conflicts"]}
    assert first["memory_id"] in ids
    assert 0.85 <= ids[first["memory_id"]] <= 1.0
    unrelated = await call_ok(
        client, "memory_add", {"type": "user_preference", "content": "Prefer tabs for Makefiles only."}
    )
    assert first["memory_id"] not in {c["memory_id"] for c in unrelated["conflicts"]}


async def test_relationships_land_in_graph(client: Client) -> None:
    req = await call_ok(
        client, "memory_add", {"type": "requirements", "content": "Users can export data as CSV."}
    )
    design = await call_ok(
        client,
        "memory_add",
        {
            "type": "design",
            "content": "CSV export streams rows with the csv module to keep memory flat.",
            "metadata": {"design_type": "adr", "status": "accepted"},
            "relationships": [{"type": "implements", "target_id": req["memory_id"]}],
        },
    )
    got = await call_ok(
        client, "memory_get", {"memory_id": design["memory_id"], "include_relationships": True}
    )
    assert got["memory"]["metadata"]["design_type"] == "ADR"
    rels = got["relationships"]
    assert [(r["type"], r["direction"], r["other_id"]) for r in rels] == [
        ("IMPLEMENTS", "outgoing", req["memory_id"])
    ]
    back = await call_ok(client, "memory_get", {"memory_id": req["memory_id"], "include_relationships": True})
    assert [(r["type"], r["direction"]) for r in back["relationships"]] == [("IMPLEMENTS", "incoming")]
    without = await call_ok(client, "memory_get", {"memory_id": req["memory_id"]})
    assert without["relationships"] == []


async def test_update_changes_fields_and_reembeds(client: Client) -> None:
    added = await call_ok(
        client, "memory_add", {"type": "session", "content": "Investigated flaky login test on CI."}
    )
    mid = added["memory_id"]
    upd = await call_ok(
        client,
        "memory_update",
        {
            "memory_id": mid,
            "content": "Kubernetes liveness probes restarted the ingest worker during GC pauses.",
            "metadata": {"session_id": "s-42"},
        },
    )
    assert upd == {
        "memory_id": mid,
        "status": "updated",
        "updated_fields": ["content", "metadata.session_id"],
    }
    got = await call_ok(client, "memory_get", {"memory_id": mid})
    assert got["memory"]["version"] == 2
    assert got["memory"]["metadata"]["session_id"] == "s-42"
    found = await call_ok(
        client, "memory_search", {"query": "liveness probe restarts during garbage collection"}
    )
    assert found["results"][0]["memory_id"] == mid
    same = await call_ok(client, "memory_update", {"memory_id": mid, "metadata": {"session_id": "s-42"}})
    assert same["updated_fields"] == []
    removed = await call_ok(client, "memory_update", {"memory_id": mid, "metadata": {"session_id": None}})
    assert removed["updated_fields"] == ["metadata.session_id"]


async def test_delete_is_soft_and_removes_relationships(client: Client) -> None:
    a = await call_ok(client, "memory_add", {"type": "component", "content": "Billing service component."})
    b = await call_ok(
        client,
        "memory_add",
        {
            "type": "component",
            "content": "Invoice renderer depends on the billing service.",
            "relationships": [{"type": "DEPENDS_ON", "target_id": a["memory_id"]}],
        },
    )
    deleted = await call_ok(client, "memory_delete", {"memory_id": a["memory_id"]})
    assert deleted["status"] == "deleted" and deleted["relationships_removed"] == 1
    error = await call_error(client, "memory_get", {"memory_id": a["memory_id"]})
    assert error["code"] == "NF_MEMORY"
    found = await call_ok(client, "memory_search", {"query": "billing service component", "limit": 50})
    assert a["memory_id"] not in {r["memory_id"] for r in found["results"]}
    b_now = await call_ok(client, "memory_get", {"memory_id": b["memory_id"], "include_relationships": True})
    assert b_now["relationships"] == []
    again = await call_error(client, "memory_delete", {"memory_id": a["memory_id"]})
    assert again["code"] == "NF_MEMORY"


async def test_bulk_add_partial_success(client: Client) -> None:
    out = await call_ok(
        client,
        "memory_bulk_add",
        {
            "memories": [
                {"type": "function", "content": "def parse_config(path): loads TOML settings"},
                {"type": "nonsense", "content": "bad type"},
                {"type": "design", "content": ""},
                {
                    "type": "test_history",
                    "content": "test_export_csv failed",
                    "metadata": {"status": "FAILED"},
                },
                {"content": "no type"},
            ]
        },
    )
    assert out["created"] == 2 and len(out["memory_ids"]) == 2
    assert [e["index"] for e in out["errors"]] == [1, 2, 4]
    codes = {e["index"]: e["code"] for e in out["errors"]}
    assert codes == {1: "VAL_INVALID_TYPE", 2: "VAL_EMPTY", 4: "VAL_MISSING_FIELD"}
    assert (
        "memories[1].type" in out["errors"][0]["error"]
        or out["errors"][0]["details"]["field"] == "memories[1].type"
    )
    got = await call_ok(client, "memory_get", {"memory_id": out["memory_ids"][1]})
    assert got["memory"]["metadata"]["status"] == "failed"


async def test_search_filters_types_time_and_similarity(client: Client) -> None:
    await call_ok(
        client,
        "memory_bulk_add",
        {
            "memories": [
                {"type": "design", "content": "We cache embeddings by content hash in SQLite."},
                {"type": "session", "content": "Today we cached embeddings by content hash to speed up."},
            ]
        },
    )
    both = await call_ok(
        client, "memory_search", {"query": "embedding cache keyed by content hash", "limit": 5}
    )
    assert both["search_mode"] == "semantic" and both["model_status"] == "ready"
    assert {"design", "session"} <= {r["type"] for r in both["results"]}
    assert isinstance(both["query_time_ms"], int) and both["total"] == len(both["results"])
    for r in both["results"]:
        assert set(r) >= {"memory_id", "type", "content", "similarity", "relevance_score", "metadata"}
    # Ranked by the hybrid re-score (relevance_score); similarity stays the dense cosine in 0..1.
    scores = [r["relevance_score"] for r in both["results"]]
    assert scores == sorted(scores, reverse=True)
    assert all(0 <= r["similarity"] <= 1 for r in both["results"])
    only = await call_ok(
        client,
        "memory_search",
        {"query": "embedding cache keyed by content hash", "memory_types": ["design"]},
    )
    assert {r["type"] for r in only["results"]} == {"design"}
    future = await call_ok(
        client,
        "memory_search",
        {"query": "embedding cache", "time_range": {"start": "2999-01-01T00:00:00Z"}},
    )
    assert future["results"] == [] and future["total"] == 0
    strict = await call_ok(
        client, "memory_search", {"query": "embedding cache keyed by content hash", "min_similarity": 0.99}
    )
    assert all(r["similarity"] >= 0.99 for r in strict["results"])
    one = await call_ok(client, "memory_search", {"query": "embedding cache", "limit": 1})
    assert len(one["results"]) == 1


async def test_large_search_response_is_truncated_with_marker(client: Client) -> None:
    big = "Streaming ingestion pipeline design notes. " + ("lorem ipsum dolor sit amet " * 3500)
    assert len(big) < 100_000
    await call_ok(
        client,
        "memory_bulk_add",
        {"memories": [{"type": "design", "content": big + str(i)} for i in range(20)]},
    )
    out = await call_ok(
        client, "memory_search", {"query": "streaming ingestion pipeline design", "limit": 20}
    )
    assert out["truncated"] is True
    assert any("[truncated:" in r["content"] for r in out["results"])
    assert json_tokens(out) <= 50_000
