"""A small tool registry: each tool is a ToolSpec (schema model, output model, handler, hints).

:func:`build_tool` makes a spec into what the server serves (:class:`ToolTable`): its ``tools/list``
entry (an MCP ``Tool`` whose schemas come from our models) and the coroutine that answers its
``tools/call``; only the MCP SDK's public types are used. Validation is ours, so every bad input
gets the seed-001 error envelope with a suggestion, and the published JSON schema is seed 001's.
Handlers are synchronous service calls run in a worker thread, so a slow store never blocks the
event loop, each inside the services' write gate (an online backup pauses them). Results carry
structured content plus the same JSON as text, capped in size. Errors carry the envelope as text
only, with ``isError``: ``structuredContent`` must match the tool's output schema, and strict
clients (the TypeScript SDK) check it even on errors.

A tool marked ``keyed`` runs its handler bound to the request key the stdio forwarder puts in
``params._meta`` (core/write/request_key.py), so a call re-sent after the daemon died makes the same
ids and skips the writes its first attempt made.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel

from memory_service.core import actor
from memory_service.core.errors import InternalError, MemoryServiceError
from memory_service.core.limits import clip_text, fit_to_budget
from memory_service.core.redaction.sanitize import mask_value, without_surrogates
from memory_service.core.validation import validate_input
from memory_service.core.write import request_key
from memory_service.tools.schema import model_schema

logger = logging.getLogger(__name__)

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
ADDITIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
UPDATE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
# Hides or replaces what it touches (destructive), and each call writes anew (not idempotent):
# memory_supersede, seed 002's memory.update.
# What an envelope may wrap around a tool's output (seed 003's success, correlationId and
# timestamp): the output is fitted to the cap less this, so the whole answer stays within it.
FRAME_TOKENS = 200
DESTRUCTIVE_APPEND = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


class Envelope(Protocol):
    """How a tool's answers are framed: seed 001's by default; a compatibility profile (seed 003,
    seed 004) brings its own. ``payload`` is the tool's output as JSON, masked and within budget."""

    def output_schema(self, spec: ToolSpec) -> dict[str, Any] | None: ...

    def success(self, spec: ToolSpec, payload: dict[str, Any]) -> CallToolResult: ...

    def failure(self, spec: ToolSpec, error: MemoryServiceError, max_tokens: int) -> CallToolResult: ...


class Seed001Envelope:
    """The output model's JSON as structured content and text; errors as the seed-001 envelope."""

    def output_schema(self, spec: ToolSpec) -> dict[str, Any] | None:
        return model_schema(spec.output_model, mode="serialization")

    def success(self, spec: ToolSpec, payload: dict[str, Any]) -> CallToolResult:
        return _result(payload)

    def failure(self, spec: ToolSpec, error: MemoryServiceError, max_tokens: int) -> CallToolResult:
        return error_result(error, max_tokens)


SEED001 = Seed001Envelope()


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool. ``handler(services, request)`` returns an instance of ``output_model``."""

    name: str
    description: str
    schema_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: Callable[..., BaseModel]  # (services, request) or, with reports_progress, + progress
    annotations: ToolAnnotations
    request_model: type[BaseModel] | None = None
    # An async continuation on the event loop (e.g. wait for a job while sending progress), given
    # the call's request context.
    after: Callable[[Any, Any, BaseModel, ServerRequestContext[Any, Any]], Awaitable[BaseModel]] | None = None
    title: str | None = None
    # The handler takes a third argument, ``progress(done, total)``, sent to the client as MCP
    # progress notifications when its request carries a progressToken (long single calls).
    reports_progress: bool = False
    # Its writes follow from the request alone (not from what an earlier attempt wrote), so a
    # re-send with the same request key takes the same path and skips the writes already made.
    # Not for tools idempotent by content (import, indexing), whose re-send writes less.
    keyed: bool = False
    # How answers and errors are framed (a compatibility profile's own envelope).
    envelope: Envelope = SEED001
    # The name its seed gives it when that name is not one every client accepts (``memory.find``:
    # Claude Code and Claude Desktop refuse dots); served instead with MEMORY_SERVER__TOOL_NAMES=seed.
    seed_name: str | None = None

    def input_schema(self) -> dict[str, Any]:
        return model_schema(self.schema_model)

    def output_schema(self) -> dict[str, Any] | None:
        return self.envelope.output_schema(self)


@dataclass(frozen=True)
class BuiltTool:
    """A tool as served: its ``tools/list`` entry and the coroutine that answers its calls."""

    listing: Tool
    call: Callable[[dict[str, Any], ServerRequestContext[Any, Any]], Awaitable[CallToolResult]]


def build_tool(spec: ToolSpec, services: Callable[[], Any], max_tokens: int) -> BuiltTool:
    """The tool whose schema is ours and whose body validates, runs and shapes the result;
    answers and errors are estimated at most ``max_tokens`` tokens (core/limits.py)."""
    schema = spec.input_schema()
    request_model = spec.request_model or spec.schema_model

    async def call(arguments: dict[str, Any], ctx: ServerRequestContext[Any, Any]) -> CallToolResult:
        started = time.perf_counter()
        result, code = await run(arguments, ctx)
        elapsed_ms = (time.perf_counter() - started) * 1000
        with contextlib.suppress(KeyError):  # no services (the store failed to open): nothing to count
            services().telemetry.record(spec.name, elapsed_ms, ok=not result.is_error, code=code)
        return result

    async def run(
        arguments: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> tuple[CallToolResult, str]:
        """The result and its error code ("" on success), which /metrics counts by."""
        try:
            request = validate_input(request_model, _pre_parse(without_surrogates(arguments), schema))
            with (
                request_key.bound(_request_key(ctx) if spec.keyed else None),  # copied to the thread
                actor.client(_client_name(ctx)),
            ):
                extra = (_progress(ctx),) if spec.reports_progress else ()
                output = await anyio.to_thread.run_sync(_gated, spec, services(), request, *extra)
            if spec.after is not None:
                output = await spec.after(services(), request, output, ctx)
            # The last guard: no secret leaves in an answer, whatever the tool quotes (a query
            # echoed in a suggestion, a code signature, text stored before masking was on).
            payload = mask_value(output.model_dump(mode="json"))
            payload, _ = fit_to_budget(payload, max_tokens, reserve=FRAME_TOKENS)
            return spec.envelope.success(spec, payload), ""
        except MemoryServiceError as exc:
            logger.info("tool %s refused: %s %s", spec.name, exc.code, clip_text(exc.message))
            return spec.envelope.failure(spec, exc, max_tokens), exc.code
        except Exception:
            logger.exception("tool %s failed unexpectedly", spec.name)
            error = InternalError(
                f"Unexpected error in {spec.name}",
                suggestion="This is a bug: retry once, and report it with the server log if it persists.",
            )
            return spec.envelope.failure(spec, error, max_tokens), error.code

    listing = Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=schema,
        output_schema=spec.output_schema(),
        annotations=spec.annotations,
    )
    return BuiltTool(listing, call)


class ToolTable:
    """The tools one server serves, by name, in the order they are listed: its ``tools/list`` and
    ``tools/call`` handlers for the SDK's low-level ``Server`` (server.py). A malformed call (an
    unknown name, arguments that are not an object) is answered before it gets here, with the
    seed-001 envelope, by the request guard (tools/guard.py); what is left here for those cases
    keeps the answers the SDK's high-level server gave."""

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
        if tool is None:  # unreachable behind the guard: the SDK's high-level server's answer
            logger.info("Tool %r failed: %r", params.name, f"Unknown tool: {params.name}")
            return _text_failure(f"Unknown tool: {params.name}")
        try:
            return await tool.call(params.arguments or {}, ctx)
        except MCPError:
            raise
        except Exception:  # a tool reports its own errors: this is a bug outside the tool body
            logger.exception("Tool %r raised an unexpected exception", params.name)
            return _text_failure(f"Error executing tool {params.name}")


def _gated(spec: ToolSpec, services: Any, request: BaseModel, *extra: Any) -> BaseModel:
    """The handler, inside the write gate (core/write/gate.py): an online backup waits for it,
    and it waits while a backup copies the stores."""
    with services.gate.passing(f"tool {spec.name}"):
        return spec.handler(services, request, *extra)


def _request_key(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The request key in the call's ``_meta`` (None: absent or malformed)."""
    return request_key.from_meta(ctx.meta)


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The ``clientInfo.name`` the session gave at initialize (the audit's actor, core/actor.py)."""
    try:
        params = ctx.session.client_params
    except AttributeError:  # no session
        return None
    name = params.client_info.name if params is not None else None
    return name if isinstance(name, str) and name.strip() else None


def _progress(ctx: ServerRequestContext[Any, Any]) -> Callable[[int, int], None]:
    """A progress callback for a handler running in a worker thread: each report is sent from the
    event loop (the handler waits for it, so reports arrive in order). The session sends nothing
    when the call carried no progressToken."""

    def report(done: int, total: int) -> None:
        with contextlib.suppress(Exception):  # a client that left must not fail the work
            anyio.from_thread.run(ctx.session.report_progress, done, total or None, None)

    return report


def _result(payload: dict[str, Any]) -> CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def error_result(error: MemoryServiceError, max_tokens: int) -> CallToolResult:
    """The seed-001 envelope as text with ``isError``; no structured content, which would have
    to match the success schema (MCP 2025-11-25: tool errors are reported in the result)."""
    payload, _ = fit_to_budget(error.to_envelope(), max_tokens)
    text = json.dumps(payload, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


_NON_STRING = {"object", "array", "integer", "number", "boolean"}


def _pre_parse(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Some clients send objects and lists as JSON text; decode those where a non-string is expected."""
    props = schema.get("properties", {})
    out = dict(arguments)
    for key, value in arguments.items():
        if isinstance(value, str) and props.get(key, {}).get("type") in _NON_STRING:
            with contextlib.suppress(ValueError):  # else validation reports the wrong type
                out[key] = json.loads(value)
    return out


def _text_failure(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
