"""What the benchmarks share: one MCP tool call that returns the tool's JSON or raises, and the
wait for a server's embedding model."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
from mcp import Client


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {data}")
    return data


async def model_loaded(client: Client, timeout: float = 120) -> None:
    """Wait until the server's embedding model is loaded (searches say so in ``model_status``):
    it loads in the background once the server starts, and timings start after it."""
    deadline = time.monotonic() + timeout
    while (await call(client, "memory_search", {"query": "warm up", "limit": 1}))["model_status"] != "ready":
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server's embedding model did not load in {timeout:.0f} s")
        await anyio.sleep(0.2)
