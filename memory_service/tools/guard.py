"""Requests the tool registry never sees, answered with the seed-001 envelope all the same.

The SDK validates ``tools/call`` params before a tool runs: non-object ``arguments`` would be a
JSON-RPC ``-32602`` and an unknown name a bare "Unknown tool" text. This middleware (the SDK's
public ``ServerMiddleware`` hook, run before that validation) answers both as tool errors with
the envelope, so every client shows a code and a suggestion. A call by another spelling of a
served name (a seed's ``memory.find`` where ``memory-find`` is served) is passed on renamed. It
also turns a server that could not open its stores (e.g. a data directory another server owns)
into a failed ``initialize`` carrying the reason, so the MCP client shows it, not only stderr.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR

from memory_service.core.errors import MemoryServiceError, NotFoundError, ValidationError
from memory_service.core.limits import clip_text
from memory_service.tools.registry import error_result


class RequestGuard:
    """``ServerMiddleware``: envelope errors for malformed tool calls; startup failures on initialize."""

    def __init__(
        self,
        tool_names: Collection[str],
        max_tokens: int,
        startup_error: Callable[[], MemoryServiceError | None],
        *,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        self._tools = sorted(tool_names)
        self._aliases = dict(aliases or {})
        self._max_tokens = max_tokens
        self._startup_error = startup_error

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        failed = self._startup_error()
        if failed is not None and ctx.request_id is not None and ctx.method != "ping":
            raise MCPError(
                code=INTERNAL_ERROR,
                message=f"memory-service could not start: {failed.message}. {failed.suggestion}",
                data=failed.to_envelope()["error"],
            )
        if ctx.method == "tools/call" and isinstance(ctx.params, Mapping):
            params = ctx.params
            served = self._aliases.get(str(params.get("name")))
            if served is not None:  # memory.find where memory-find is served, or the reverse
                params = {**params, "name": served}
                ctx = dataclasses.replace(ctx, params=params)
            problem = self._check_call(params)
            if problem is not None:
                return error_result(problem, self._max_tokens)
        return await call_next(ctx)

    def _check_call(self, params: Mapping[str, Any]) -> MemoryServiceError | None:
        name = params.get("name")
        if isinstance(name, str) and name not in self._tools:
            return NotFoundError(
                f"Unknown tool '{clip_text(name, 80)}'",
                code="NF_TOOL",
                details={"field": "name", "provided": name, "allowed": self._tools},
                suggestion=f"Call one of the tools this server lists (tools/list): {', '.join(self._tools)}.",
            )
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, Mapping):
            return ValidationError(
                "Arguments must be a JSON object",
                code="VAL_INVALID_ARGUMENTS",
                details={"field": "arguments", "provided_type": _json_type(arguments)},
                suggestion='Pass the tool arguments as an object of named fields, e.g. {"query": "..."}.',
            )
        return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else type(value).__name__
