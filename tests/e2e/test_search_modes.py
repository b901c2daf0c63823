"""memory_search hybrid ranking, modes, routing and suggestions through the MCP client."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture(scope="module")
async def corpus(client: Client) -> dict[str, str]:
    items = [
        {"type": "session", "content": "Fixed PR-4821: the nightly export job timed out on large tenants."},
        {"type": "function", "content": "def normalize_scope_key(raw): lower-cases and strips scope keys."},
        {
            "type": "design",
            "content": "We chose SQLite for the outbox because it needs no server and survives crashes.",
        },
        {"type": "code_pattern", "content": "Wrap store calls in a retry with exponential backoff."},
        {"type": "user_preference", "content": "The user prefers pytest fixtures over setUp methods."},
    ]
    out = await call_ok(client, "memory_bulk_add", {"memories": items})
    return dict(zip(["pr", "fn", "design", "pattern", "pref"], out["memory_ids"], strict=True))


async def test_auto_mode_reports_route_confidence_and_ranks_by_relevance(
    client: Client, corpus: dict[str, str]
) -> None:
    out = await call_ok(client, "memory_search", {"query": "why did we choose sqlite for the outbox"})
    assert out["mode"] == "auto" and out["route"] == "design_first" and out["search_mode"] == "semantic"
    top = out["results"][0]
    assert top["memory_id"] == corpus["design"]
    assert top["route_used"] == "semantic" and 0.5 < top["confidence"] <= 1
    assert 0 < top["similarity"] <= 1
    scores = [r["relevance_score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)


async def test_exact_identifiers_are_found_by_the_lexical_side(
    client: Client, corpus: dict[str, str]
) -> None:
    pr = await call_ok(client, "memory_search", {"query": "PR-4821", "limit": 3})
    assert pr["route"] == "change_first"
    assert pr["results"][0]["memory_id"] == corpus["pr"]
    fn = await call_ok(client, "memory_search", {"query": "normalize_scope_key", "limit": 3})
    assert fn["route"] == "code_first" and fn["results"][0]["memory_id"] == corpus["fn"]


async def test_fast_mode_is_lexical_and_cached_until_a_write(client: Client, corpus: dict[str, str]) -> None:
    args = {"query": "retry exponential backoff store calls", "mode": "fast"}
    first = await call_ok(client, "memory_search", args)
    assert first["mode"] == "fast" and first["search_mode"] == "lexical" and first["cached"] is False
    assert first["results"][0]["memory_id"] == corpus["pattern"]
    assert first["results"][0]["route_used"] == "fts"
    second = await call_ok(client, "memory_search", args)
    assert second["cached"] is True
    assert second["results"] == first["results"]
    await call_ok(client, "memory_add", {"type": "code_pattern", "content": "Store calls retry with jitter."})
    third = await call_ok(client, "memory_search", args)
    assert third["cached"] is False and len(third["results"]) == len(first["results"]) + 1


async def test_deep_mode_corrects_typos_and_expands_links(client: Client, corpus: dict[str, str]) -> None:
    typo = await call_ok(client, "memory_search", {"query": "exponentail backof", "mode": "deep", "limit": 3})
    assert typo["mode"] == "deep"
    assert corpus["pattern"] in [r["memory_id"] for r in typo["results"]]
    linked = await call_ok(
        client,
        "memory_add",
        {
            "type": "requirements",
            "content": "Quarterly invoices are archived as signed PDFs.",
            "relationships": [{"type": "RELATES_TO", "target_id": corpus["design"]}],
        },
    )
    deep = await call_ok(
        client, "memory_search", {"query": "outbox crash safety sqlite", "mode": "deep", "limit": 10}
    )
    ids = [r["memory_id"] for r in deep["results"]]
    assert corpus["design"] in ids and linked["memory_id"] in ids


async def test_low_recall_gives_actionable_suggestions(client: Client, corpus: dict[str, str]) -> None:
    out = await call_ok(
        client,
        "memory_search",
        {
            "query": "nightly export timeout",
            "memory_types": ["design"],
            "time_range": {"start": "2000-01-01T00:00:00Z"},
        },
    )
    kinds = {s["kind"]: s for s in out["suggestions"]}
    assert {"broaden_types", "broaden_time", "deep_mode"} <= set(kinds)
    assert "session (1)" in kinds["broaden_types"]["message"]
    assert "memory_types" not in kinds["broaden_types"]["arguments"]
    assert kinds["deep_mode"]["arguments"]["mode"] == "deep"
    retry = await call_ok(client, "memory_search", kinds["broaden_types"]["arguments"])
    assert retry["results"][0]["memory_id"] == corpus["pr"]
    good = await call_ok(
        client, "memory_search", {"query": "export job timed out on large tenants", "limit": 1}
    )
    assert good["results"][0]["confidence"] >= 0.35


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"query": "x", "mode": "turbo"}, "VAL_INVALID_ENUM", "mode"),
        ({"query": "x", "mode": 3}, "VAL_INVALID_ENUM", "mode"),
        ({"query": "x", "include_superseded": "perhaps"}, "VAL_INVALID_FIELD_TYPE", "include_superseded"),
    ],
)
async def test_new_search_fields_bad_inputs(
    client: Client, args: dict[str, Any], code: str, field: str
) -> None:
    error = await call_error(client, "memory_search", args)
    assert error["code"] == code, error
    assert error["details"]["field"] == field


async def test_ambient_read_mixes_kinds_and_favours_how_to_work_here(
    client: Client, corpus: dict[str, str]
) -> None:
    sessions = [
        {"type": "session", "content": f"Session {i}: worked on the test fixtures and pytest setup."}
        for i in range(6)
    ]
    await call_ok(client, "memory_bulk_add", {"memories": sessions})
    targeted = await call_ok(client, "memory_search", {"query": "pytest fixtures setup", "limit": 4})
    ambient = await call_ok(
        client, "memory_search", {"query": "pytest fixtures setup", "limit": 4, "read": "ambient"}
    )
    assert ambient["route"] == "ambient" and ambient["suggestions"] == []
    kinds = [r["type"] for r in ambient["results"]]
    assert kinds.count("session") <= 2
    assert corpus["pref"] in [r["memory_id"] for r in ambient["results"]]
    assert [r["type"] for r in targeted["results"]].count("session") >= 3


async def test_semantic_hops_are_bounded_and_deterministic(client: Client, corpus: dict[str, str]) -> None:
    runs = [
        await call_ok(client, "memory_search", {"query": "outbox crashes", "semantic_hops": hops})
        for hops in (0, 3, 3)
    ]
    assert [r["memory_id"] for r in runs[1]["results"]] == [r["memory_id"] for r in runs[2]["results"]]
    assert corpus["design"] in [r["memory_id"] for r in runs[0]["results"]]
    for args, code in (({"semantic_hops": 4}, "VAL_OUT_OF_RANGE"), ({"read": "passive"}, "VAL_INVALID_ENUM")):
        error = await call_error(client, "memory_search", {"query": "x", **args})
        assert error["code"] == code and error["details"]["field"] == next(iter(args))
