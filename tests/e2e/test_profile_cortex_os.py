"""Seed 003 ("cortex-os" profile) through the in-memory MCP client: the real server, engines and
model. Every example of the seed, every limit it states as a bad input (with the failure envelope,
``isError`` and nothing written), seed 003's ``metadata`` on the result, and the correlation id of
a failed call in the server log."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolRequest, CallToolRequestParams, CallToolResult

from memory_service.server import build_server
from tests.conftest import require_model
from tests.e2e.conftest import make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

TOOLS = {"memory_store", "memory_retrieve", "memory_update", "memory_delete", "memory_stats"}
ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
CODES = {"validation_error", "security_error", "not_found", "internal_error"}


@pytest.fixture(scope="module")
async def cortex(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One cortex-os server for the module (the model loads once); tests use distinct content."""
    root = tmp_path_factory.mktemp("cortex")
    async with Client(build_server(make_settings(root, require_model()), profile="cortex-os")) as client:
        yield client


# --------------------------------------------------------------------------- helpers


def envelope(result: CallToolResult) -> dict[str, Any]:
    """The JSON of ``content[0].text``, checked against seed 003's envelope and its ``_meta``."""
    assert len(result.content) == 1
    body = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert uuid.UUID(body["correlationId"]).version == 4
    assert ISO_MS.match(body["timestamp"]), body["timestamp"]
    assert body["success"] is (not result.is_error)
    meta = result.meta or {}
    assert meta.get("correlationId") == body["correlationId"]
    assert meta.get("timestamp") == body["timestamp"]
    assert meta.get("tool")
    if result.is_error:
        assert result.structured_content is None, "an error carries no structuredContent"
        assert set(body) == {"success", "error", "correlationId", "timestamp"}
        error = body["error"]
        assert set(error) == {"code", "message", "details"}
        assert error["code"] in CODES and error["message"]
        assert error["details"] and all(isinstance(d, str) and d for d in error["details"])
    else:
        assert result.structured_content == body
        assert set(body) == {"success", "data", "correlationId", "timestamp"}
    return body


async def ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    body = envelope(result)
    assert not result.is_error, body
    assert (result.meta or {})["tool"] == tool
    data: dict[str, Any] = body["data"]
    return data


async def failed(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    body = envelope(result)
    assert result.is_error, body
    error: dict[str, Any] = body["error"]
    return error


async def store(client: Client, **args: Any) -> dict[str, Any]:
    return await ok(client, "memory_store", args)


async def counts(client: Client) -> dict[str, Any]:
    """What a write would change: totals, kinds and the latest activity."""
    stats = await ok(client, "memory_stats", {})
    return {k: stats[k] for k in ("totalItems", "totalSize", "itemsByKind", "lastActivity")}


async def ids_found(client: Client, args: dict[str, Any]) -> list[str]:
    data = await ok(client, "memory_retrieve", args)
    return [r["id"] for r in data["results"]]


# --------------------------------------------------------------------------- surface


async def test_the_profile_lists_the_seeds_five_tools(cortex: Client) -> None:
    tools = {tool.name: tool for tool in (await cortex.list_tools()).tools}
    assert set(tools) == TOOLS
    store_schema = tools["memory_store"].input_schema
    assert store_schema["required"] == ["kind", "text"]
    assert store_schema["properties"]["kind"]["pattern"] == "^[a-zA-Z0-9._-]+$"
    for tool in tools.values():
        assert tool.output_schema is not None
        assert set(tool.output_schema["properties"]) == {"success", "data", "correlationId", "timestamp"}


# --------------------------------------------------------------------------- memory_store


async def test_store_the_seed_example(cortex: Client) -> None:
    text = "Project summary: the billing rewrite ships in three phases, ledger first."
    data = await store(
        cortex,
        kind="note",
        text=f"  {text}  ",
        tags=["project", "summary", "project"],
        metadata={"owner": "billing-team", "phase": 1, "links": {"doc": "billing.md"}},
    )
    assert data["stored"] is True
    assert uuid.UUID(data["id"])
    assert data["kind"] == "note"
    assert data["tags"] == ["project", "summary"]
    assert data["textLength"] == len(text)
    assert data["metadataKeys"] == 3
    assert data["redactedPreview"] == text
    assert data["id"] in await ids_found(cortex, {"query": "billing rewrite phases ledger"})


async def test_store_preview_masks_personal_data(cortex: Client) -> None:
    data = await store(cortex, kind="contact", text="Escalations go to dana.reyes@example.com on weekends.")
    assert "dana.reyes@example.com" not in data["redactedPreview"]
    assert "@example.com" in data["redactedPreview"]
    assert data["kind"] == "contact"


# --------------------------------------------------------------------------- memory_retrieve


async def test_retrieve_the_seed_example_with_kind_and_tags(cortex: Client) -> None:
    wanted = await store(
        cortex,
        kind="note",
        text="Notes about launch: press kit ready, launch date is March 3.",
        tags=["launch"],
    )
    other_kind = await store(
        cortex,
        kind="launch-log",
        text="Notes about launch rehearsal: the demo crashed once.",
        tags=["launch"],
    )
    untagged = await store(cortex, kind="note", text="Notes about launch venue options and catering.")
    data = await ok(
        cortex, "memory_retrieve", {"query": "notes about launch", "kind": "note", "tags": ["launch"]}
    )
    assert data["query"] == "notes about launch"
    assert data["filters"] == {"kind": "note", "tags": ["launch"]}
    ids = [r["id"] for r in data["results"]]
    assert ids[0] == wanted["id"]
    assert other_kind["id"] not in ids and untagged["id"] not in ids
    assert data["totalFound"] == len(data["results"])
    first = data["results"][0]
    assert first["kind"] == "note"
    assert first["text"] == "Notes about launch: press kit ready, launch date is March 3."
    assert "launch" in first["tags"]
    assert isinstance(first["score"], float) and first["score"] > 0
    assert ISO_MS.match(first["createdAt"])


async def test_retrieve_a_free_form_kind(cortex: Client) -> None:
    meeting = await store(
        cortex, kind="meeting-notes", text="Standup: the warehouse sync job times out nightly."
    )
    note = await store(cortex, kind="note", text="The warehouse sync job needs a longer timeout.")
    data = await ok(
        cortex, "memory_retrieve", {"query": "warehouse sync job timeout", "kind": "meeting-notes"}
    )
    assert [r["id"] for r in data["results"]] == [meeting["id"]]
    assert data["results"][0]["kind"] == "meeting-notes"
    as_note = await ids_found(cortex, {"query": "warehouse sync job timeout", "kind": "note"})
    assert note["id"] in as_note and meeting["id"] not in as_note
    unfiltered = await ok(cortex, "memory_retrieve", {"query": "warehouse sync job timeout"})
    kinds = {r["id"]: r["kind"] for r in unfiltered["results"]}
    assert kinds[meeting["id"]] == "meeting-notes" and kinds[note["id"]] == "note"


async def test_retrieve_ranks_by_meaning_and_honours_limit(cortex: Client) -> None:
    close = await store(cortex, kind="recipe", text="Sourdough needs a ripe starter and a long cold proof.")
    await store(cortex, kind="recipe", text="Quarterly tax filing deadlines for contractors.")
    data = await ok(cortex, "memory_retrieve", {"query": "baking bread with a starter", "kind": "recipe"})
    assert data["results"][0]["id"] == close["id"]
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)
    one = await ok(cortex, "memory_retrieve", {"query": "baking bread", "kind": "recipe", "limit": 1})
    assert len(one["results"]) == 1 and one["totalFound"] == 1
    capped = await ok(cortex, "memory_retrieve", {"query": "baking bread", "limit": 500})
    assert len(capped["results"]) <= 100


# --------------------------------------------------------------------------- memory_update


async def test_update_replaces_text_tags_and_metadata(cortex: Client) -> None:
    stored = await store(
        cortex,
        kind="decision-log",
        text="We keep invoices for seven years.",
        tags=["retention", "invoices"],
        metadata={"owner": "finance", "reviewed": False, "source": "policy.md"},
    )
    mid = stored["id"]
    data = await ok(
        cortex,
        "memory_update",
        {"id": mid, "text": "We keep invoices for ten years.", "metadata": {"owner": "legal"}},
    )
    assert data["id"] == mid and data["updated"] is True
    assert data["changes"] == {"text": True, "tags": False, "metadata": True}
    assert data["data"] == {
        "textPreview": "We keep invoices for ten years.",
        "textLength": len("We keep invoices for ten years."),
        "metadataKeys": 1,
    }
    assert ISO_MS.match(data["updatedAt"])
    found = await ok(cortex, "memory_retrieve", {"query": "invoice retention years", "kind": "decision-log"})
    assert found["results"][0]["text"] == "We keep invoices for ten years."
    assert found["results"][0]["tags"] == ["retention", "invoices"]

    tags = await ok(cortex, "memory_update", {"id": mid, "tags": ["archive"]})
    assert tags["changes"] == {"text": False, "tags": True, "metadata": False}
    assert tags["data"]["metadataKeys"] == 1
    assert mid in await ids_found(cortex, {"query": "invoices", "tags": ["archive"]})
    assert mid not in await ids_found(cortex, {"query": "invoices", "tags": ["retention"]})


async def test_update_with_what_is_there_changes_nothing(cortex: Client) -> None:
    stored = await store(cortex, kind="note", text="The VPN gateway lives in eu-west-1.", tags=["network"])
    data = await ok(
        cortex,
        "memory_update",
        {"id": stored["id"], "text": "The VPN gateway lives in eu-west-1.", "tags": ["network"]},
    )
    assert data["updated"] is False
    assert data["changes"] == {"text": False, "tags": False, "metadata": False}


# --------------------------------------------------------------------------- memory_delete


async def test_delete_then_delete_again_is_not_found(cortex: Client) -> None:
    stored = await store(cortex, kind="note", text="Temporary note: the staging password rotates Friday.")
    before = await counts(cortex)
    data = await ok(cortex, "memory_delete", {"id": stored["id"]})
    assert data["id"] == stored["id"] and data["deleted"] is True
    assert ISO_MS.match(data["deletedAt"])
    after = await counts(cortex)
    assert after["totalItems"] == before["totalItems"] - 1
    assert after["lastActivity"] >= data["deletedAt"][:23]
    again = await failed(cortex, "memory_delete", {"id": stored["id"]})
    assert again["code"] == "not_found"
    assert again["details"][0].startswith("id: ")
    assert (await failed(cortex, "memory_update", {"id": stored["id"], "text": "back"}))[
        "code"
    ] == "not_found"
    assert stored["id"] not in await ids_found(cortex, {"query": "staging password rotates"})


@pytest.mark.parametrize("tool", ["memory_delete", "memory_update"])
async def test_ids_we_never_gave_are_not_found(cortex: Client, tool: str) -> None:
    args: dict[str, Any] = (
        {"id": "mem-safe"} if tool == "memory_delete" else {"id": "mem-safe", "tags": ["x"]}
    )
    assert (await failed(cortex, tool, args))["code"] == "not_found"
    args["id"] = str(uuid.uuid4())
    assert (await failed(cortex, tool, args))["code"] == "not_found"


# --------------------------------------------------------------------------- memory_stats


async def test_stats_count_by_kind_and_size(cortex: Client) -> None:
    before = await counts(cortex)
    texts = ["Incident 1: disk full on db-2.", "Incident 2: certificate expired."]
    for text in texts:
        await store(cortex, kind="incident-report", text=text)
    await store(cortex, kind="note", text="A note next to the incidents: rotate certs monthly.")
    after = await counts(cortex)
    assert after["totalItems"] == before["totalItems"] + 3
    assert (
        after["itemsByKind"].get("incident-report", 0) == before["itemsByKind"].get("incident-report", 0) + 2
    )
    assert after["itemsByKind"]["note"] == before["itemsByKind"].get("note", 0) + 1
    assert sum(after["itemsByKind"].values()) == after["totalItems"]
    added = sum(len(t.encode()) for t in [*texts, "A note next to the incidents: rotate certs monthly."])
    assert after["totalSize"] == before["totalSize"] + added
    assert ISO_MS.match(after["lastActivity"]) and after["lastActivity"] >= (before["lastActivity"] or "")
    assert "details" not in await ok(cortex, "memory_stats", {"includeDetails": False})


async def test_stats_details(cortex: Client) -> None:
    await store(cortex, kind="note", text="Something to count for the details.")
    data = await ok(cortex, "memory_stats", {"includeDetails": True})
    details = data["details"]
    assert details["storageBackend"]
    assert {"kind", "tags", "createdAt"} <= set(details["indexedFields"])
    assert details["averageItemSize"] == round(data["totalSize"] / data["totalItems"], 2)


# --------------------------------------------------------------------------- bad inputs

BAD: list[tuple[str, dict[str, Any], str, str]] = [
    ("memory_store", {"kind": "note", "text": ""}, "validation_error", "text: Text content cannot be empty"),
    (
        "memory_store",
        {"kind": "note", "text": "   "},
        "validation_error",
        "text: Text content cannot be empty",
    ),
    ("memory_store", {"kind": "note", "text": "x" * 8193}, "validation_error", "text: "),
    (
        "memory_store",
        {"kind": "note", "text": "t", "tags": [f"t{i}" for i in range(33)]},
        "validation_error",
        "tags: ",
    ),
    ("memory_store", {"kind": "note", "text": "t", "tags": ["x" * 65]}, "validation_error", "tags: "),
    ("memory_store", {"kind": "no spaces!", "text": "t"}, "validation_error", "kind: "),
    ("memory_store", {"kind": "k" * 33, "text": "t"}, "validation_error", "kind: "),
    ("memory_store", {"text": "t"}, "validation_error", "kind: "),
    (
        "memory_store",
        {"kind": "note", "text": "t", "metadata": {f"k{i}": i for i in range(51)}},
        "validation_error",
        "metadata: ",
    ),
    (
        "memory_store",
        {"kind": "note", "text": "t", "metadata": {"a": {"b": {"c": {"d": {"e": 1}}}}}},
        "validation_error",
        "metadata: ",
    ),
    (
        "memory_store",
        {"kind": "note", "text": "t", "metadata": {"blob": "x" * 8300}},
        "validation_error",
        "metadata: ",
    ),
    (
        "memory_store",
        {"kind": "note", "text": "t", "metadata": ["not", "an", "object"]},
        "validation_error",
        "metadata",
    ),
    (
        "memory_store",
        {"kind": "note", "text": "t", "metadata": {"__proto__": {"admin": True}}},
        "security_error",
        "metadata.__proto__",
    ),
    (
        "memory_store",
        {"kind": "note", "text": "t", "metadata": {"constructor": {"prototype": {"x": 1}}}},
        "security_error",
        "metadata.constructor",
    ),
    ("memory_retrieve", {"query": "x", "limit": 0}, "validation_error", "limit: "),
    ("memory_retrieve", {"query": "x", "limit": 1.5}, "validation_error", "limit: "),
    ("memory_retrieve", {"query": ""}, "validation_error", "query: "),
    ("memory_update", {"id": "mem-safe"}, "validation_error", "At least one of text, tags or metadata"),
    ("memory_update", {"id": "no spaces", "text": "t"}, "validation_error", "id: "),
    ("memory_update", {"id": "mem-safe", "metadata": {"__x": 1}}, "security_error", "metadata.__x"),
    ("memory_delete", {"id": "ab"}, "validation_error", "id: "),
    ("memory_delete", {"id": "a/b/c"}, "validation_error", "id: "),
    ("memory_stats", {"includeDetails": "perhaps"}, "validation_error", "includeDetails: "),
]


@pytest.mark.parametrize(
    ("tool", "args", "code", "detail"), BAD, ids=[f"{t}-{i}" for i, (t, *_) in enumerate(BAD)]
)
async def test_bad_input_is_refused_in_the_envelope_and_writes_nothing(
    cortex: Client, tool: str, args: dict[str, Any], code: str, detail: str
) -> None:
    before = await counts(cortex)
    error = await failed(cortex, tool, args)
    assert error["code"] == code, error
    assert any(d.startswith(detail) for d in error["details"]), error
    assert await counts(cortex) == before


async def test_a_refused_update_leaves_the_memory_as_it_was(cortex: Client) -> None:
    stored = await store(
        cortex, kind="note", text="Feature flags live in flags.yaml.", metadata={"team": "web"}
    )
    error = await failed(
        cortex, "memory_update", {"id": stored["id"], "text": "", "metadata": {"team": "ops"}}
    )
    assert error["code"] == "validation_error"
    same = await ok(cortex, "memory_update", {"id": stored["id"], "metadata": {"team": "web"}})
    assert same["updated"] is False
    assert same["data"]["textPreview"] == "Feature flags live in flags.yaml."


# --------------------------------------------------------------------------- metadata and the log


async def test_seed_metadata_reaches_the_client_as_meta(cortex: Client) -> None:
    """Seed 003's ``metadata`` {correlationId, timestamp, tool}, on success and on failure. The SDK
    sends a tools/call result only with the fields MCP defines (it drops a top-level ``metadata``),
    so clients get it as the result's ``_meta``."""
    for args, is_error in (({"includeDetails": True}, False), ({"includeDetails": "perhaps"}, True)):
        request = CallToolRequest(params=CallToolRequestParams(name="memory_stats", arguments=args))
        raw = await cortex.session.send_request(request, CallToolResult)
        body = json.loads(raw.content[0].text)  # type: ignore[union-attr]
        assert bool(raw.is_error) is is_error
        meta = raw.meta or {}
        assert {k: meta.get(k) for k in ("correlationId", "timestamp", "tool")} == {
            "correlationId": body["correlationId"],
            "timestamp": body["timestamp"],
            "tool": "memory_stats",
        }


async def test_a_failed_calls_correlation_id_is_in_the_server_log(
    cortex: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="memory_service.profiles.cortex_os.tools"):
        error_result = await cortex.call_tool("memory_store", {"kind": "note", "text": " "})
        ok_result = await cortex.call_tool("memory_stats", {})
    failed_id = envelope(error_result)["correlationId"]
    ok_id = envelope(ok_result)["correlationId"]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and failed_id in r.getMessage()]
    assert errors, caplog.text
    assert "memory_store" in errors[0].getMessage() and "validation_error" in errors[0].getMessage()
    assert any(r.levelno == logging.DEBUG and ok_id in r.getMessage() for r in caplog.records)
