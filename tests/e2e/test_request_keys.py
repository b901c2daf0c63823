"""The request key in a tools/call's ``_meta`` reaches the handler (tools/registry.py).

The stdio forwarder stamps every tools/call with ``_meta["memory-service/request-key"]`` and
re-sends an unanswered call with the same key; here the SDK's in-memory client sends the key.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from mcp import Client

from memory_service.core.write.request_key import REQUEST_KEY_META
from tests.e2e.conftest import payload

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _call(client: Client, tool: str, args: dict[str, Any], key: Any = None) -> dict[str, Any]:
    result = await client.call_tool(tool, args, meta=None if key is None else {REQUEST_KEY_META: key})
    data = payload(result)
    assert not result.is_error, data
    return data


async def test_a_resent_add_answers_the_same_memory(client: Client) -> None:
    args = {"type": "session", "content": "The forwarder re-sends calls its daemon never answered."}
    key = str(uuid.uuid4())
    first = await _call(client, "memory_add", args, key)
    assert await _call(client, "memory_add", args, key) == first
    audit = await _call(client, "memory_audit", {"entity_id": first["memory_id"]})
    assert [e["operation"] for e in audit["events"]] == ["create"]
    other = await _call(client, "memory_add", {**args, "content": "Another request."}, str(uuid.uuid4()))
    assert other["memory_id"] != first["memory_id"] and other["status"] == "created"
    # The same store under a new request key is a new request, which the content dedupe answers.
    repeat = await _call(client, "memory_add", args, str(uuid.uuid4()))
    assert repeat == {**first, "status": "skipped_dedupe", "conflicts": []}


@pytest.mark.parametrize("key", [None, "", "k" * 201, 42])
async def test_a_call_without_a_usable_key_writes_each_time(client: Client, key: Any) -> None:
    args = {"type": "session", "content": f"Unkeyed note {key!r:.20}."}
    first = await _call(client, "memory_add", args, key)
    again = await _call(client, "memory_add", {**args, "content": f"Unkeyed note {key!r:.20}, again."}, key)
    assert again["memory_id"] != first["memory_id"] and again["status"] == first["status"] == "created"


async def test_a_resent_delete_answers_deleted(client: Client) -> None:
    added = await _call(client, "memory_add", {"type": "session", "content": "Deleted by a re-sent call."})
    key = str(uuid.uuid4())
    first = await _call(client, "memory_delete", {"memory_id": added["memory_id"]}, key)
    assert await _call(client, "memory_delete", {"memory_id": added["memory_id"]}, key) == first
