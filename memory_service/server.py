"""Build the MCP server: tools registered from their specs, services opened in the lifespan."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from memory_service import __version__
from memory_service.app import Services, open_services
from memory_service.core.errors import MemoryServiceError
from memory_service.observability.side import start_side_server
from memory_service.settings import Settings
from memory_service.tools import ALL_TOOLS
from memory_service.tools.guard import RequestGuard
from memory_service.tools.registry import build_tool

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
Long-term memory for this project. Before implementing, search for requirements, design decisions
and patterns (memory_search). After deciding something, record it (memory_add, type 'design' with
metadata.design_type 'ADR'); after a session, record what you learned (type 'session').
Errors come back as {status: error, error: {code, message, details, suggestion}}: follow the suggestion.
"""


def build_server(settings: Settings | None = None) -> MCPServer[Any]:
    """The MCP server; the stores open when a client connects and close when it leaves.

    If they cannot be opened (another server owns the data directory, a store is broken), the
    server still speaks MCP so that the client is told why: ``initialize`` fails with the reason.
    """
    settings = settings or Settings()
    holder: dict[str, Services] = {}
    failure: dict[str, MemoryServiceError] = {}

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[Services | None]:
        side, metrics = start_side_server(settings, holder.get, failure.get)
        try:
            try:
                opener = functools.partial(open_services, settings, metrics=metrics)
                services = await anyio.to_thread.run_sync(opener)
            except MemoryServiceError as exc:
                logger.error("memory-service cannot start: %s. %s", exc.message, exc.suggestion)
                failure["error"] = exc
                yield None
                return
            holder["services"] = services
            if side is not None:
                side.publish()  # we own the data directory now: memory-cli may find us
            try:
                yield services
            finally:
                holder.pop("services", None)
                if side is not None:  # before the stores close: no scrape reads a closed store
                    await anyio.to_thread.run_sync(side.stop)
                    side = None
                await anyio.to_thread.run_sync(services.close)
        finally:
            if side is not None:
                await anyio.to_thread.run_sync(side.stop)

    def services() -> Services:
        return holder["services"]

    budget = int(settings.server.max_response_tokens * settings.server.chars_per_token)
    tools = [build_tool(spec, services, budget) for spec in ALL_TOOLS]
    guard = RequestGuard([spec.name for spec in ALL_TOOLS], budget, lambda: failure.get("error"))
    return MCPServer(
        settings.server.name,
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=tools,
        lifespan=lifespan,
        log_level=settings.server.log_level,
        middleware=[guard],
    )
