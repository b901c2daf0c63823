"""Ambient reads pack results within a token budget (seed 002: the session-start pack)."""

from __future__ import annotations

import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_pack_stays_within_token_budget(client: Client) -> None:
    long_text = "Deployment checklist: " + "verify the canary, watch error budgets, then promote. " * 40
    await call_ok(
        client,
        "memory_bulk_add",
        {
            "memories": [
                {"type": "user_preference", "content": "Prefer small pull requests with tests first."},
                {"type": "design", "content": long_text},
                {"type": "session", "content": "Deployed the billing service with the canary checklist."},
            ]
        },
    )
    query = {"query": "how do we deploy and review changes", "limit": 10}
    full = await call_ok(client, "memory_search", {**query, "read": "ambient", "token_budget": 5000})
    assert len(full["results"]) == 3 and full["pack_tokens"] <= 5000
    tight = await call_ok(client, "memory_search", {**query, "read": "ambient", "token_budget": 200})
    contents = [r["content"] for r in tight["results"]]
    assert long_text not in contents and len(contents) == 2  # the long design note does not fit
    assert tight["pack_tokens"] <= 200
    assert any("token budget" in w for w in tight["warnings"])
    default = await call_ok(client, "memory_search", {**query, "read": "ambient"})
    assert default["pack_tokens"] is not None and default["pack_tokens"] <= 2000
    targeted = await call_ok(client, "memory_search", query)
    assert targeted["pack_tokens"] is None  # no budget unless asked for


@pytest.mark.parametrize("budget", [5, 60_000, "many"])
async def test_bad_token_budget(client: Client, budget: object) -> None:
    error = await call_error(client, "memory_search", {"query": "x", "token_budget": budget})
    assert error["details"]["field"] == "token_budget"
    assert error["code"] in ("VAL_OUT_OF_RANGE", "VAL_INVALID_FIELD_TYPE")
