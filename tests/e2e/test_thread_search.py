"""Session threads through the MCP client: a reply is found by the question before it, and
memory_explain shows the thread component that memory_search used."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

EXCHANGE = [
    "User: Why does the nightly export fail on the big tenants?",
    "Assistant: The worker ran out of heap while buffering every row, so we now stream in pages of 5k.",
    "User: Good, ship it behind the flag.",
]
OTHERS = [
    "Assistant: Renamed the billing module's helpers for clarity.",
    "Assistant: Bumped the lint config to the new rule set.",
    "Assistant: The dashboard colours follow the brand palette now.",
]


async def test_a_reply_is_found_by_the_question_it_answers(client: Client) -> None:
    items = [{"type": "session", "content": c, "metadata": {"session_id": "s-export"}} for c in EXCHANGE]
    items += [
        {"type": "session", "content": c, "metadata": {"session_id": f"s-{i}"}} for i, c in enumerate(OTHERS)
    ]
    ids = (await call_ok(client, "memory_bulk_add", {"memories": items}))["memory_ids"]
    reply = ids[1]
    query = "why did the nightly export fail on big tenants"
    out = await call_ok(client, "memory_search", {"query": query, "memory_types": ["session"], "limit": 5})
    found = [r["memory_id"] for r in out["results"]]
    assert reply in found[:3], found
    hit = out["results"][found.index(reply)]
    assert hit["route_used"] in ("semantic", "fts") and hit["confidence"] > 0

    explained = await call_ok(client, "memory_explain", {"query": query, "ids": [reply, ids[3]], "limit": 5})
    items_by_id = {item["id"]: item for item in explained["items"]}
    components = items_by_id[reply]["score"]["components"]
    assert components["thread"] is not None and components["thread"] > 0  # the question lends support
    assert items_by_id[reply]["score"]["total"] == pytest.approx(hit["relevance_score"], abs=1e-4)
    alone = items_by_id[ids[3]]["score"]["components"]["thread"]
    assert alone == 0.0  # in a thread of its own: no other memory of it matches


async def test_session_id_of_the_wrong_type_is_refused(client: Client) -> None:
    error = await call_error(
        client,
        "memory_add",
        {"type": "session", "content": "Assistant: done.", "metadata": {"session_id": {"nested": 1}}},
    )
    assert error["code"].startswith("VAL_")
    assert "session_id" in error["message"] or "session_id" in str(error["details"])
