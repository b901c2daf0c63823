"""memory_explain through the MCP client: seed 000's test matrix (cases 1-7) and bad inputs."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from mcp import Client

from memory_service.core.search.scoring import COMPONENTS
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ITEM_KEYS = {"id", "kind", "title", "created_at", "project", "retrieval", "score", "matches", "pack_context"}
PACK_KEYS = {"in_pack", "pack_position", "token_estimate", "snippet", "relationships"}


@pytest.fixture(scope="module")
async def seeded(client: Client) -> dict[str, str]:
    """A small design corpus with one link, so citations and graph components have data."""
    adr = await call_ok(
        client,
        "memory_add",
        {
            "type": "design",
            "content": "ADR: store audit events in an append-only SQLite table with triggers.",
            "metadata": {"design_type": "ADR", "status": "accepted", "title": "Append-only audit"},
        },
    )
    req = await call_ok(
        client,
        "memory_add",
        {
            "type": "requirements",
            "content": "Every mutation must be recorded in the audit log with actor and timestamp.",
            "relationships": [{"type": "IMPLEMENTS", "target_id": adr["memory_id"]}],
        },
    )
    other = await call_ok(
        client, "memory_add", {"type": "session", "content": "Paired on the flaky websocket reconnect test."}
    )
    return {"adr": adr["memory_id"], "req": req["memory_id"], "other": other["memory_id"]}


def _check_item(item: dict[str, Any]) -> None:
    assert set(item) >= ITEM_KEYS
    assert item["retrieval"]["source"] in {"query", "id_lookup", "query+id_lookup"}
    assert set(item["score"]) == {"total", "components"}
    assert set(item["score"]["components"]) == set(COMPONENTS)  # case 7: never omitted
    assert set(item["matches"]) == {"query_terms", "project_match"}


async def test_1_schema_registration(client: Client) -> None:
    tool = {t.name: t for t in (await client.list_tools()).tools}["memory_explain"]
    props = tool.input_schema["properties"]
    assert set(props) == {"query", "ids", "project", "include_pack_context", "limit"}
    assert props["include_pack_context"]["default"] is False and props["limit"]["default"] == 10
    assert tool.input_schema.get("required", []) == []
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert set(tool.output_schema["properties"]) >= {"items", "missing_ids", "errors", "metadata"}  # type: ignore[index]


async def test_2_happy_path_query(client: Client, seeded: dict[str, str]) -> None:
    out = await call_ok(client, "memory_explain", {"query": "append-only audit log table", "limit": 3})
    assert out["errors"] == [] and out["missing_ids"] == []
    assert 1 <= len(out["items"]) <= 3
    for rank, item in enumerate(out["items"], start=1):
        _check_item(item)
        assert item["retrieval"] == {"source": "query", "rank": rank}
        assert item["project"] == "test" and item["matches"]["project_match"] is True
    top = out["items"][0]
    assert top["id"] in {seeded["adr"], seeded["req"]}
    assert "audit" in top["matches"]["query_terms"]
    totals = [i["score"]["total"] for i in out["items"]]
    assert totals == sorted(totals, reverse=True)
    assert out["metadata"] == {
        "query": "append-only audit log table",
        "project": None,
        "requested_ids_count": 0,
        "returned_items_count": len(out["items"]),
        "include_pack_context": False,
    }


async def test_scores_equal_memory_search(client: Client, seeded: dict[str, str]) -> None:
    """One code path: explain's totals are search's relevance scores, in the same order."""
    query = "audit log of every mutation"
    found = await call_ok(client, "memory_search", {"query": query, "limit": 5})
    explained = await call_ok(client, "memory_explain", {"query": query, "limit": 5})
    assert [r["memory_id"] for r in found["results"]] == [i["id"] for i in explained["items"]]
    assert [r["relevance_score"] for r in found["results"]] == [
        round(i["score"]["total"], 4) for i in explained["items"]
    ]
    adr = next(i for i in explained["items"] if i["id"] == seeded["adr"])
    assert adr["score"]["components"]["recency"] == 1.0
    assert adr["score"]["components"]["citations"] > 0  # the requirement links to it
    assert adr["score"]["components"]["kind_bonus"] is not None


async def test_3_mixed_valid_and_missing_ids(client: Client, seeded: dict[str, str]) -> None:
    unknown = str(uuid.uuid4())
    ids = [seeded["other"], unknown, seeded["adr"], seeded["other"]]  # duplicate dropped
    out = await call_ok(client, "memory_explain", {"ids": ids})
    assert [i["id"] for i in out["items"]] == [seeded["other"], seeded["adr"]]  # first-seen order
    assert out["missing_ids"] == [unknown]
    assert [e["code"] for e in out["errors"]] == ["NOT_FOUND"]
    for item in out["items"]:
        _check_item(item)
        assert item["retrieval"] == {"source": "id_lookup", "rank": None}
        assert item["score"]["components"]["base"] is None and item["score"]["total"] is None
        assert item["score"]["components"]["recency"] == 1.0
    assert out["metadata"]["requested_ids_count"] == 3


async def test_query_and_ids_merge_sources(client: Client, seeded: dict[str, str]) -> None:
    out = await call_ok(
        client,
        "memory_explain",
        {"query": "append-only audit table", "ids": [seeded["adr"], seeded["other"]], "limit": 2},
    )
    by_id = {i["id"]: i for i in out["items"]}
    assert by_id[seeded["adr"]]["retrieval"]["source"] == "query+id_lookup"
    assert by_id[seeded["other"]]["retrieval"] == {"source": "id_lookup", "rank": None}
    # Scored by the same query (a candidate below the limit here), so base relevance is a number.
    other = by_id[seeded["other"]]["score"]
    assert isinstance(other["components"]["base"], float) and isinstance(other["total"], float)
    assert len([i for i in out["items"] if i["retrieval"]["source"] != "id_lookup"]) <= 2


async def test_4_project_mismatch(client: Client, seeded: dict[str, str]) -> None:
    out = await call_ok(client, "memory_explain", {"ids": [seeded["adr"]], "project": "elsewhere"})
    assert out["items"] == [] and out["missing_ids"] == [seeded["adr"]]
    assert [(e["code"], e["field"]) for e in out["errors"]] == [("PROJECT_MISMATCH", "project")]
    again = await call_ok(client, "memory_explain", {"ids": [seeded["adr"]], "project": "elsewhere"})
    assert again == out  # deterministic
    queried = await call_ok(client, "memory_explain", {"query": "audit table", "project": "elsewhere"})
    assert queried["items"] == []
    same = await call_ok(client, "memory_explain", {"ids": [seeded["adr"]], "project": "test"})
    assert [i["id"] for i in same["items"]] == [seeded["adr"]] and same["errors"] == []


async def test_5_pack_context_null_unless_asked(client: Client, seeded: dict[str, str]) -> None:
    out = await call_ok(client, "memory_explain", {"query": "audit", "ids": [seeded["other"]]})
    assert out["items"] and all(i["pack_context"] is None for i in out["items"])


async def test_6_pack_context_shape(client: Client, seeded: dict[str, str]) -> None:
    args = {
        "query": "append-only audit table",
        "ids": [seeded["req"]],
        "include_pack_context": True,
        "limit": 1,
    }
    out = await call_ok(client, "memory_explain", args)
    assert out["metadata"]["include_pack_context"] is True
    for item in out["items"]:
        assert set(item["pack_context"]) == PACK_KEYS
    by_id = {i["id"]: i["pack_context"] for i in out["items"]}
    req = by_id[seeded["req"]]
    assert req["relationships"] == [
        {"type": "IMPLEMENTS", "direction": "outgoing", "other_id": seeded["adr"]}
    ]
    assert req["token_estimate"] >= 1 and req["snippet"].startswith("Every mutation")
    assert (await call_ok(client, "memory_explain", args)) == out


async def test_7_unknown_components_are_null_not_omitted(client: Client, seeded: dict[str, str]) -> None:
    out = await call_ok(client, "memory_explain", {"ids": [seeded["other"]]})
    components = out["items"][0]["score"]["components"]
    assert set(components) == set(COMPONENTS)
    assert components["base"] is None  # no query: relevance is not derivable
    assert components["utility"] is None  # nobody voted


async def test_neither_query_nor_ids_is_a_non_fatal_invalid_argument(client: Client) -> None:
    out = await call_ok(client, "memory_explain", {})
    assert out["items"] == [] and out["missing_ids"] == []
    assert out["errors"] == [
        {"code": "INVALID_ARGUMENT", "message": "at least one of query or ids is required", "field": "query"}
    ]
    malformed = await call_ok(client, "memory_explain", {"ids": ["not-a-uuid"]})
    assert [(e["code"], e["field"]) for e in malformed["errors"]] == [("INVALID_ARGUMENT", "ids[0]")]


async def test_integer_ids_as_seed_000_types_them_are_taken_and_reported(
    client: Client, seeded: dict[str, str]
) -> None:
    out = await call_ok(client, "memory_explain", {"ids": [123, seeded["adr"], 123]})
    assert [i["id"] for i in out["items"]] == [seeded["adr"]]
    assert [(e["code"], e["field"]) for e in out["errors"]] == [
        ("INVALID_ARGUMENT", "ids[0]"),
        ("INVALID_ARGUMENT", "ids[2]"),
    ]
    assert "UUID" in out["errors"][0]["message"] and out["metadata"]["requested_ids_count"] == 1


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"query": "x", "limit": 0}, "VAL_OUT_OF_RANGE", "limit"),
        ({"query": "x", "limit": 101}, "VAL_OUT_OF_RANGE", "limit"),
        ({"ids": "abc"}, "VAL_INVALID_FIELD_TYPE", "ids"),
        ({"ids": [True]}, "VAL_INVALID_FIELD_TYPE", "ids[0]"),
        ({"ids": [1.5]}, "VAL_INVALID_FIELD_TYPE", "ids[0]"),
        ({"query": "x", "include_pack_context": "maybe"}, "VAL_INVALID_FIELD_TYPE", "include_pack_context"),
        ({"query": "x", "bogus": 1}, "VAL_UNKNOWN_FIELD", "bogus"),
    ],
)
async def test_bad_inputs_use_the_error_envelope(
    client: Client, args: dict[str, Any], code: str, field: str
) -> None:
    error = await call_error(client, "memory_explain", args)
    assert error["code"] == code, error
    assert error["details"]["field"] == field
