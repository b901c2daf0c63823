"""One MCP session over a byte stream (a Unix socket): newline-delimited JSON-RPC, as over stdio.

The forwarder relays its client's stdio lines unchanged, so the daemon serves exactly the
stdio framing on each socket connection. ``memory-service --no-daemon`` serves its own stdio the
same way (:func:`serve_stdio`), so a line no parser takes is answered there too.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
import pydantic
from anyio.abc import ByteStream
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

from memory_service.core.errors import ValidationError
from memory_service.daemon.wire import MAX_LINE, message_id

logger = logging.getLogger(__name__)
# The client went away.
GONE = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError)


async def serve_connection(
    server: Server[Any],
    stream: ByteStream,
    hello: bytes = b"",
    *,
    select: Callable[[bytes], Server[Any] | None] | None = None,
    operate: Callable[[bytes, ByteStream], Awaitable[bool]] | None = None,
) -> None:
    """Serve one client until it disconnects (the read side ends the session); ``hello`` is
    sent first (the daemon's notification of who it is, :mod:`.hello`).

    ``select`` looks at the client's first line: when it names the server to use (a forwarder's
    profile notification) that server serves the session and the line is consumed; otherwise
    ``server`` does and the line is the session's first message. ``operate`` answers a first line
    that is an operator request (memory-cli's backup, operator.py) instead of a session.
    """
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    lines = BufferedByteReceiveStream(stream)
    first: list[bytes] = []

    async def next_line() -> bytes | None:
        if first:
            return first.pop()
        try:
            return await lines.receive_until(b"\n", MAX_LINE)
        except GONE:
            return None
        except anyio.DelimiterNotFound:
            logger.warning("a client sent a message over %d bytes: disconnected", MAX_LINE)
            return None

    async def reader() -> None:
        async with read_send:
            while True:
                line = await next_line()
                if line is None:
                    return
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # the SDK would drop it unanswered: answered here
                    with contextlib.suppress(*GONE):
                        await write_send.send(SessionMessage(refusal(line, exc)))
                    continue
                await read_send.send(SessionMessage(message))

    async def writer() -> None:
        async with write_recv:
            broken = False
            async for item in write_recv:
                if broken:
                    continue  # keep draining: the session must never block on a gone client
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await stream.send(data.encode() + b"\n")
                except GONE:
                    broken = True

    try:
        if hello:
            await stream.send(hello)
        if select is not None or operate is not None:
            line = await next_line()
            if line is None:
                return
            if operate is not None and await operate(line, stream):
                return
            chosen = select(line) if select is not None else None
            if chosen is None:
                first.append(line)
            else:
                server = chosen
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            await server.run(read_recv, write_send, server.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        await stream.aclose()


def refusal(line: bytes, problem: Exception) -> types.JSONRPCError:
    """The answer to a line that is no JSON-RPC message: a parse error (-32700) for what is not
    JSON the parser takes (invalid UTF-8, a lone surrogate escape, nesting too deep, a number out
    of range), an invalid request (-32600) for JSON of another shape (an id without a method).
    It goes to the line's id when one can be read (else ``null``), with the seed-001 envelope in
    ``data``; it names the reason and the size, never the content."""
    first: dict[str, Any] = {"type": "json_invalid", "msg": type(problem).__name__}
    if isinstance(problem, pydantic.ValidationError):
        first = dict(problem.errors(include_url=False, include_context=False, include_input=False)[0])
    if first["type"] == "json_invalid":
        code, what = types.PARSE_ERROR, f"Parse error: {first['msg']}"
    else:
        code = types.INVALID_REQUEST
        what = "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    envelope = ValidationError(
        what,
        code="VAL_MALFORMED_MESSAGE",
        details={"bytes": len(line)},
        suggestion="Send one JSON-RPC 2.0 message per line: UTF-8 JSON (no lone surrogate escapes, numbers "
        "in range, nested at most 200 levels) with a method, and an id for a request.",
    ).to_envelope()["error"]
    error = types.ErrorData(code=code, message=what, data=envelope)
    return types.JSONRPCError(jsonrpc="2.0", id=message_id(line), error=error)


class StdioStream(ByteStream):
    """The process's stdin and stdout as one byte stream (reads and writes in worker threads)."""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await anyio.to_thread.run_sync(os.read, 0, max_bytes, abandon_on_cancel=True)
        if not data:
            raise anyio.EndOfStream
        return data

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            try:
                view = view[await anyio.to_thread.run_sync(os.write, 1, view) :]
            except OSError as exc:
                raise anyio.BrokenResourceError from exc

    async def send_eof(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def serve_stdio(server: Server[Any]) -> None:
    """One session on this process's stdio, framed and guarded as a daemon connection is."""
    anyio.run(serve_connection, server, StdioStream())
