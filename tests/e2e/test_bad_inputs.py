"""Every tool's bad inputs: the seed-001 error envelope with a suggestion, and nothing written."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

UNKNOWN = "00000000-0000-4000-8000-000000000000"


async def _count(client: Client) -> int:
    found = await call_ok(client, "memory_search", {"query": "anything at all", "limit": 100})
    return int(found["total"])


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"content": "x"}, "VAL_MISSING_FIELD", "type"),
        ({"type": "design"}, "VAL_MISSING_FIELD", "content"),
        ({"type": "invalid", "content": "x"}, "VAL_INVALID_TYPE", "type"),
        ({"type": "design", "content": ""}, "VAL_EMPTY", "content"),
        ({"type": "design", "content": "x" * 100_001}, "VAL_TOO_LONG", "content"),
        (
            {"type": "design", "content": "x", "metadata": "not an object"},
            "VAL_INVALID_FIELD_TYPE",
            "metadata",
        ),
        ({"type": "design", "content": "x", "colour": "red"}, "VAL_UNKNOWN_FIELD", "colour"),
        (
            {
                "type": "design",
                "content": "x",
                "relationships": [{"type": "IMPLEMENTS", "target_id": "nope"}],
            },
            "VAL_INVALID_UUID",
            "relationships[0].target_id",
        ),
        (
            {
                "type": "design",
                "content": "x",
                "relationships": [{"type": "IMPLEMENTS", "target_id": UNKNOWN}],
            },
            "NF_RELATIONSHIP_TARGET",
            "relationships[0].target_id",
        ),
        (
            {"type": "design", "content": "x", "relationships": [{"type": "!!", "target_id": UNKNOWN}]},
            "VAL_INVALID_RELATIONSHIP_TYPE",
            "relationships[0].type",
        ),
        (
            {"type": "requirements", "content": "x", "metadata": {"priority": "urgent-ish"}},
            "VAL_INVALID_ENUM",
            "metadata.priority",
        ),
        (
            {"type": "design", "content": "x", "metadata": {"__proto__": {}}},
            "SEC_UNSAFE_KEY",
            "metadata",
        ),
    ],
)
async def test_memory_add_bad_inputs(client: Client, args: dict[str, Any], code: str, field: str) -> None:
    before = await _count(client)
    error = await call_error(client, "memory_add", args)
    assert error["code"] == code, error
    assert error["details"]["field"] == field
    assert error["category"] in ("VALIDATION_ERROR", "NOT_FOUND", "SECURITY_ERROR")
    assert await _count(client) == before  # nothing half-written


async def test_invalid_type_lists_allowed_values(client: Client) -> None:
    error = await call_error(client, "memory_add", {"type": "invalid", "content": "x"})
    assert error["message"].startswith("Invalid memory type 'invalid'. Must be one of: requirements, design")
    assert "user_preference" in error["details"]["allowed"]
    assert error["details"]["provided"] == "invalid"


async def test_missing_content_message_matches_seed_example(client: Client) -> None:
    error = await call_error(client, "memory_add", {"type": "design"})
    assert error["message"] == "Field 'content' is required but was not provided"
    assert error["suggestion"].startswith("Include 'content' with the memory text")


@pytest.mark.parametrize("tool", ["memory_get", "memory_delete", "memory_update"])
async def test_unknown_and_malformed_ids(client: Client, tool: str) -> None:
    extra = {"content": "new"} if tool == "memory_update" else {}
    bad = await call_error(client, tool, {"memory_id": "abc", **extra})
    assert bad["code"] == "VAL_INVALID_UUID" and bad["details"]["field"] == "memory_id"
    missing = await call_error(client, tool, {"memory_id": UNKNOWN, **extra})
    assert missing["code"] == "NF_MEMORY" and missing["category"] == "NOT_FOUND"
    assert "memory_search" in missing["suggestion"]
    none = await call_error(client, tool, {})
    assert none["code"] == "VAL_MISSING_FIELD"


async def test_update_bad_inputs_change_nothing(client: Client) -> None:
    added = await call_ok(client, "memory_add", {"type": "design", "content": "Original design text."})
    mid = added["memory_id"]
    nothing = await call_error(client, "memory_update", {"memory_id": mid})
    assert nothing["code"] == "VAL_INVALID_VALUE"
    empty = await call_error(client, "memory_update", {"memory_id": mid, "content": ""})
    assert empty["code"] == "VAL_EMPTY"
    bad_meta = await call_error(client, "memory_update", {"memory_id": mid, "metadata": {"status": "maybe"}})
    assert bad_meta["code"] == "VAL_INVALID_ENUM" and bad_meta["details"]["field"] == "metadata.status"
    got = await call_ok(client, "memory_get", {"memory_id": mid})
    assert got["memory"]["content"] == "Original design text." and got["memory"]["version"] == 1


async def test_bulk_add_over_limit_is_refused_whole(client: Client) -> None:
    before = await _count(client)
    items = [{"type": "session", "content": f"bulk item {i}"} for i in range(101)]
    error = await call_error(client, "memory_bulk_add", {"memories": items})
    assert error["code"] == "VAL_TOO_MANY_ITEMS" and error["details"]["max_items"] == 100
    assert await _count(client) == before
    missing = await call_error(client, "memory_bulk_add", {})
    assert missing["code"] == "VAL_MISSING_FIELD"
    wrong = await call_error(client, "memory_bulk_add", {"memories": "many"})
    assert wrong["code"] == "VAL_INVALID_FIELD_TYPE"


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({}, "VAL_MISSING_FIELD", "query"),
        ({"query": ""}, "VAL_EMPTY", "query"),
        ({"query": "   "}, "VAL_EMPTY_QUERY", "query"),
        ({"query": "x", "limit": 0}, "VAL_OUT_OF_RANGE", "limit"),
        ({"query": "x", "limit": 101}, "VAL_OUT_OF_RANGE", "limit"),
        ({"query": "x", "min_similarity": 1.5}, "VAL_OUT_OF_RANGE", "min_similarity"),
        ({"query": "x", "memory_types": ["design", "bogus"]}, "VAL_INVALID_TYPE", "memory_types"),
        ({"query": "x", "time_range": {"start": "yesterday"}}, "VAL_INVALID_FIELD_TYPE", "time_range.start"),
        (
            {"query": "x", "time_range": {"start": "2026-02-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"}},
            "VAL_INVALID_VALUE",
            "time_range",
        ),
        ({"query": "x", "limit": "ten"}, "VAL_INVALID_FIELD_TYPE", "limit"),
    ],
)
async def test_memory_search_bad_inputs(client: Client, args: dict[str, Any], code: str, field: str) -> None:
    error = await call_error(client, "memory_search", args)
    assert error["code"] == code, error
    assert error["details"]["field"] == field


async def test_json_encoded_arguments_are_accepted(client: Client) -> None:
    """Some clients send objects as JSON text; those are decoded rather than refused."""
    out = await call_ok(
        client,
        "memory_add",
        {"type": "design", "content": "JSON-text metadata", "metadata": '{"title": "T"}'},
    )
    got = await call_ok(client, "memory_get", {"memory_id": out["memory_id"]})
    assert got["memory"]["metadata"] == {"title": "T"}
