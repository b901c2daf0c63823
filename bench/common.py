"""What the benchmarks share: one MCP tool call that returns the tool's JSON or raises."""

from __future__ import annotations

import json
from typing import Any

from mcp import Client


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {data}")
    return data
