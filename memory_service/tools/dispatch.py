"""The server's tool handlers: ``tools/list`` lists the built tools, ``tools/call`` runs one by name.

Given to the MCP SDK's low-level ``Server`` through its public ``on_list_tools``/``on_call_tool``
hooks (server.py). A malformed call (an unknown name, arguments that are not an object) is
answered before it gets here, with the seed-001 envelope, by the request guard (tools/guard.py);
what is left here for those cases keeps the answers the SDK's high-level server gave.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

from memory_service.tools.registry import BuiltTool

logger = logging.getLogger(__name__)


class ToolTable:
    """The tools one server serves, by name, in the order they are listed."""

    def __init__(self, tools: Sequence[BuiltTool]) -> None:
        self._tools = {tool.listing.name: tool for tool in tools}

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's input schema (None: no such tool), for the SDK's HTTP header checks."""
        tool = self._tools.get(name)
        return None if tool is None else tool.listing.input_schema

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[tool.listing for tool in self._tools.values()])

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = self._tools.get(params.name)
        if tool is None:  # the guard answers first; kept for a server built without it
            logger.info("Tool %r failed: %r", params.name, f"Unknown tool: {params.name}")
            return _failure(f"Unknown tool: {params.name}")
        try:
            return await tool.call(params.arguments or {}, ctx)
        except MCPError:
            raise
        except Exception:  # a tool reports its own errors: this is a bug outside the tool body
            logger.exception("Tool %r raised an unexpected exception", params.name)
            return _failure(f"Error executing tool {params.name}")


def _failure(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
