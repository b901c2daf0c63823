"""Build the MCP server: tools served from their specs, services opened in the lifespan.

The server is the MCP SDK's low-level ``Server``, set up through its public API only (handlers,
middleware), so that an SDK upgrade cannot change what clients see unnoticed. It answers what the
SDK's high-level server answered before: tools (tools/registry.py), empty resource and prompt
lists, ``subscriptions/listen`` for 2026-07-28 clients, and the SDK's ``requestState`` boundary.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)

from memory_service import __version__
from memory_service.app import Services, open_services
from memory_service.core.errors import MemoryServiceError
from memory_service.observability.side import start_side_server
from memory_service.settings import Settings
from memory_service.tools.guard import RequestGuard
from memory_service.tools.profiles import tools_for
from memory_service.tools.registry import ToolTable, build_tool

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
Long-term memory for this project. Before implementing, search for requirements, design decisions
and patterns (memory_search). After deciding something, record it (memory_add, type 'design' with
metadata.design_type 'ADR'); after a session, record what you learned (type 'session').
Errors come back as {status: error, error: {code, message, details, suggestion}}: follow the suggestion.
"""
# A compatibility profile without seed 001's tools (tools/profiles.py): the same advice, its tools.
PROFILE_INSTRUCTIONS = """\
Long-term memory for this project, served with the {profile} profile: {tools}. Before implementing,
look up requirements, decisions and known problems; after deciding or learning something, store it.
Errors say what went wrong and how to fix it.
"""


def instructions(profile: str, tool_names: list[str]) -> str:
    """What the ``initialize`` answer tells the agent, naming only tools this server lists."""
    if "memory_search" in tool_names and "memory_add" in tool_names:
        return INSTRUCTIONS
    return PROFILE_INSTRUCTIONS.format(profile=profile, tools=", ".join(tool_names))


@dataclass
class ServerState:
    """The opened services, or why they could not be opened (shared by every connection)."""

    holder: dict[str, Services] = field(default_factory=dict)
    failure: dict[str, MemoryServiceError] = field(default_factory=dict)


@asynccontextmanager
async def serving(settings: Settings, state: ServerState) -> AsyncIterator[Services | None]:
    """Start the HTTP side server, open the stores; close both at the end.

    Yields None (and records why in ``state.failure``) when the stores cannot be opened: the
    server still speaks MCP so that the client is told why (``initialize`` fails with the reason).
    """
    side, metrics = start_side_server(settings, state.holder.get, state.failure.get)
    try:
        try:
            opener = functools.partial(open_services, settings, metrics=metrics)
            services = await anyio.to_thread.run_sync(opener)
        except MemoryServiceError as exc:
            logger.error("memory-service cannot start: %s. %s", exc.message, exc.suggestion)
            state.failure["error"] = exc
            yield None
            return
        state.holder["services"] = services
        if side is not None:
            side.publish()  # we own the data directory now: memory-cli may find us
        try:
            yield services
        finally:
            state.holder.pop("services", None)
            if side is not None:  # before the stores close: no scrape reads a closed store
                await anyio.to_thread.run_sync(side.stop)
                side = None
            await anyio.to_thread.run_sync(services.close)
    finally:
        if side is not None:
            await anyio.to_thread.run_sync(side.stop)


def build_server(
    settings: Settings | None = None,
    *,
    shared: ServerState | None = None,
    profile: str | None = None,
    tool_names: str | None = None,
) -> Server[Any]:
    """The MCP server; the stores open when a client connects and close when it leaves.

    With ``shared`` (the daemon), the stores were opened once by :func:`serving` and every
    connection (each runs the lifespan) uses them; the lifespan opens and closes nothing.
    ``profile`` and ``tool_names`` (default: the settings') pick the tool surface (tools/profiles.py).
    """
    settings = settings or Settings()
    surface = tools_for(profile or settings.server.profile, tool_names or settings.server.tool_names)
    state = shared or ServerState()

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[Services | None]:
        if shared is not None:
            yield state.holder.get("services")
            return
        async with serving(settings, state) as services:
            yield services

    def services() -> Services:
        return state.holder["services"]

    budget = settings.server.max_response_tokens
    tools = ToolTable([build_tool(spec, services, budget) for spec in surface.tools])
    guard = RequestGuard(
        [spec.name for spec in surface.tools],
        budget,
        lambda: state.failure.get("error"),
        aliases=surface.aliases,
    )
    name = settings.server.name or "mcp-server"
    server: Server[Any] = Server(
        name,
        version=__version__,
        instructions=instructions(profile or settings.server.profile, [spec.name for spec in surface.tools]),
        lifespan=lifespan,
        get_tool_input_schema=tools.input_schema,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
        on_list_resources=_no_resources,
        on_list_resource_templates=_no_resource_templates,
        on_read_resource=_unknown_resource,
        on_list_prompts=_no_prompts,
        on_get_prompt=_unknown_prompt,
        on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()),
    )
    # After the SDK's own OpenTelemetry middleware: the requestState boundary (as the SDK's
    # high-level server installs it), then ours.
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=name))
    server.middleware.append(guard)
    return server


# No resources and no prompts: listed empty, and a read or a get is refused as the SDK refuses
# an unknown one.


async def _no_resources(
    ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
) -> ListResourcesResult:
    return ListResourcesResult(resources=[])


async def _no_resource_templates(
    ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
) -> ListResourceTemplatesResult:
    return ListResourceTemplatesResult(resource_templates=[])


async def _unknown_resource(
    ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
) -> ReadResourceResult:
    message = f"Unknown resource: {params.uri}"
    logger.info("Resource %r failed: %r", str(params.uri), message)
    raise MCPError(code=INVALID_PARAMS, message=message, data={"uri": str(params.uri)})


async def _no_prompts(
    ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
) -> ListPromptsResult:
    return ListPromptsResult(prompts=[])


async def _unknown_prompt(
    ctx: ServerRequestContext[Any, Any], params: GetPromptRequestParams
) -> GetPromptResult:
    raise ValueError(f"Unknown prompt: {params.name}")
