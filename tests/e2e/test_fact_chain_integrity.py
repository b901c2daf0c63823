"""Fact chains keep their integrity (issue 8, item 9; seed 002): truth changes only through
memory_supersede, a chain never loops, and a dry run refuses exactly what a commit would."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _fact(client: Client, content: str, **extra: Any) -> str:
    out = await call_ok(client, "memory_add", {"type": "fact", "content": content, **extra})
    return str(out["memory_id"])


async def _supersede_error(client: Client, args: dict[str, Any]) -> dict[str, Any]:
    """The error a commit returns, after checking that the dry run returns the same one."""
    dry = await call_error(client, "memory_supersede", {**args, "mode": "dry_run"})
    error = await call_error(client, "memory_supersede", args)
    assert (dry["code"], dry["details"]) == (error["code"], error["details"])
    return error


async def _ids(client: Client, query: str, **extra: Any) -> list[str]:
    found = await call_ok(client, "memory_search", {"query": query, "limit": 20, **extra})
    return [r["memory_id"] for r in found["results"]]


async def test_a_superseded_fact_cannot_be_the_new_fact(client: Client) -> None:
    a = await _fact(client, "The importer reads CSV files with a comma delimiter.")
    b = await _fact(client, "The importer reads CSV files with a semicolon delimiter.")
    await call_ok(
        client, "memory_supersede", {"old_fact_id": a, "new_fact_id": b, "change": {"content": "Use ;."}}
    )
    loop = {"old_fact_id": b, "new_fact_id": a, "change": {"content": "Back to commas."}}
    error = await _supersede_error(client, loop)
    assert error["code"] == "CON_ALREADY_SUPERSEDED" and error["category"] == "CONFLICT"
    assert error["details"] == {"field": "new_fact_id", "provided": a, "superseded_by": b}
    assert "memory_supersede" in error["suggestion"] and "new_fact" in error["suggestion"]
    # The chain is intact: b is live and found; a stays hidden; b is not superseded.
    assert b in await _ids(client, "importer CSV delimiter")
    assert a not in await _ids(client, "importer CSV delimiter")
    got = await call_ok(client, "memory_get", {"memory_id": b})
    assert "superseded" not in got["memory"]["metadata"]
    # The suggested route works: state the old truth again as a new fact.
    again = await call_ok(
        client,
        "memory_supersede",
        {"old_fact_id": b, "new_fact": {"content": "The importer reads CSV with commas again."},
         "change": {"content": "Back to commas."}},
    )  # fmt: skip
    assert again["chain"] == [a, b, again["new_fact_id"]]


async def test_the_old_fact_must_be_live_in_dry_run_too(client: Client) -> None:
    a = await _fact(client, "Nightly backups run at 02:00 UTC.")
    b = await _fact(client, "Nightly backups run at 03:00 UTC.")
    c = await _fact(client, "Nightly backups run at 04:00 UTC.")
    await call_ok(
        client, "memory_supersede", {"old_fact_id": a, "new_fact_id": b, "change": {"content": "Later."}}
    )
    error = await _supersede_error(
        client, {"old_fact_id": a, "new_fact_id": c, "change": {"content": "Even later."}}
    )
    assert error["code"] == "CON_ALREADY_SUPERSEDED" and error["details"]["field"] == "old_fact_id"
    assert error["details"]["superseded_by"] == b and "memory_supersede" in error["suggestion"]


@pytest.mark.parametrize(
    ("key", "value"),
    [("superseded", True), ("superseded_by", "NEWER"), ("superseded_by_change", "NEWER")],
)
async def test_update_cannot_hide_a_live_fact(client: Client, key: str, value: Any) -> None:
    fact = await _fact(client, f"The cache key for {key} includes the tenant id.")
    newer = await _fact(client, f"A newer fact about {key}.")
    provided = newer if value == "NEWER" else value
    error = await call_error(client, "memory_update", {"memory_id": fact, "metadata": {key: provided}})
    assert error["code"] == "VAL_IMMUTABLE_FIELD" and error["details"]["field"] == f"metadata.{key}"
    assert error["details"]["current"] is None and "memory_supersede" in error["suggestion"]
    got = await call_ok(client, "memory_get", {"memory_id": fact})
    assert key not in got["memory"]["metadata"] and got["memory"]["version"] == 1


@pytest.mark.parametrize(
    "change",
    [
        {"superseded": None},
        {"superseded": False},
        {"superseded_by": None},
        {"superseded_by_change": None},
        {"superseded_by": "OTHER"},
    ],
)
async def test_update_cannot_bring_back_a_superseded_fact(client: Client, change: dict[str, Any]) -> None:
    old = await _fact(client, f"Workers poll the queue every second ({sorted(change)}).")
    other = await _fact(client, f"Unrelated fact for {sorted(change)}.")
    out = await call_ok(
        client,
        "memory_supersede",
        {"old_fact_id": old, "new_fact": {"content": f"Workers are woken by notify ({sorted(change)})."},
         "change": {"content": "Switched to LISTEN/NOTIFY."}},
    )  # fmt: skip
    args = {k: (other if v == "OTHER" else v) for k, v in change.items()}
    error = await call_error(client, "memory_update", {"memory_id": old, "metadata": args})
    assert error["code"] == "VAL_IMMUTABLE_FIELD"
    assert "memory_supersede" in error["suggestion"] and out["new_fact_id"] in error["suggestion"]
    got = await call_ok(client, "memory_get", {"memory_id": old})
    assert got["memory"]["metadata"]["superseded"] is True
    assert got["memory"]["metadata"]["superseded_by"] == out["new_fact_id"]
    # Resending the chain keys unchanged (a client echoing memory_get's metadata) is a no-op.
    echo = {**got["memory"]["metadata"], "subject": "queue"}
    same = await call_ok(client, "memory_update", {"memory_id": old, "metadata": echo})
    assert same["updated_fields"] == ["metadata.subject"]


async def test_a_facts_content_is_immutable_but_other_kinds_are_not(client: Client) -> None:
    fact = await _fact(client, "Deploys need two approvals.")
    error = await call_error(client, "memory_update", {"memory_id": fact, "content": "Deploys need one."})
    assert error["code"] == "VAL_IMMUTABLE_CONTENT" and error["details"]["field"] == "content"
    assert "memory_supersede" in error["suggestion"] and fact in error["suggestion"]
    unchanged = await call_ok(
        client, "memory_update", {"memory_id": fact, "content": "Deploys need two approvals."}
    )
    assert unchanged["updated_fields"] == []
    tagged = await call_ok(client, "memory_update", {"memory_id": fact, "metadata": {"subject": "deploys"}})
    assert tagged["updated_fields"] == ["metadata.subject"]
    design = (await call_ok(client, "memory_add", {"type": "design", "content": "Use one queue."}))[
        "memory_id"
    ]
    edited = await call_ok(client, "memory_update", {"memory_id": design, "content": "Use two queues."})
    assert edited["updated_fields"] == ["content"]


async def test_new_records_cannot_carry_chain_keys(client: Client) -> None:
    error = await call_error(
        client,
        "memory_add",
        {"type": "fact", "content": "Born superseded.", "metadata": {"superseded": True}},
    )
    assert error["code"] == "VAL_IMMUTABLE_FIELD" and error["details"]["field"] == "metadata.superseded"
    assert "memory_supersede" in error["suggestion"]
    bulk = await call_ok(
        client,
        "memory_bulk_add",
        {"memories": [{"type": "fact", "content": "ok fact"},
                      {"type": "fact", "content": "bad", "metadata": {"superseded_by": "x"}}]},
    )  # fmt: skip
    assert bulk["created"] == 1 and bulk["errors"][0]["code"] == "VAL_IMMUTABLE_FIELD"
    old = await _fact(client, "Logs are kept for 30 days.")
    sneaky = {
        "old_fact_id": old,
        "new_fact": {"content": "Logs are kept for 7 days.", "metadata": {"superseded": True}},
        "change": {"content": "Shorter retention."},
    }
    refused = await _supersede_error(client, sneaky)
    assert refused["code"] == "VAL_IMMUTABLE_FIELD"
    assert refused["details"]["field"] == "new_fact.metadata.superseded"
    got = await call_ok(client, "memory_get", {"memory_id": old})
    assert "superseded" not in got["memory"]["metadata"]
