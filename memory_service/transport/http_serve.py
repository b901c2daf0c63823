"""Serve an ASGI app with uvicorn inside the caller's task group, until cancelled.

Why not ``uvicorn.Server.serve`` as is: it takes over SIGTERM/SIGINT (the daemon owns them), it
cannot report the port it got for port 0, and cancelling it skips its shutdown (the app's
lifespan, which closes the stores, would never end). And why :class:`_EventStreams`: an MCP client
keeps a GET event stream open per session for server-initiated messages; it never finishes by
itself, so uvicorn would wait out its whole graceful period for it and then log a traceback.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import anyio.abc
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory_service.core.errors import ServiceUnavailableError

logger = logging.getLogger(__name__)

# How long a shutdown waits for requests in flight (tool calls) before cutting them.
GRACEFUL_SHUTDOWN_S = 5


async def serve_http(
    app: ASGIApp,
    host: str,
    port: int,
    *,
    path: str = "/mcp",
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled; ``task_status.started`` gets the bound port.

    We bind the socket ourselves so that port 0 reports the port it got. uvicorn runs shielded:
    on cancellation, event streams end at once, requests in flight get ``GRACEFUL_SHUTDOWN_S``,
    then the app's lifespan ends, all before this returns.
    """
    sock = _bind(host, port)
    bound = int(sock.getsockname()[1])
    streams = _EventStreams(app)
    config = uvicorn.Config(
        streams,
        lifespan="on",
        log_level="warning",
        access_log=False,
        log_config=None,  # keep the service's logging (stderr, one line a record); stdout stays clean
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    server = _Server(config)
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            with anyio.CancelScope(shield=True):
                await server.run_on(sock)
            tg.cancel_scope.cancel()  # uvicorn stopped by itself: so does this task

        tg.start_soon(run)
        try:
            await server.ready.wait()
            task_status.started(bound)
            shown = f"[{host}]" if ":" in host else host
            logger.info("MCP streamable HTTP at http://%s:%d%s", shown, bound, path)
            await anyio.sleep_forever()
        finally:
            streams.close()
            server.should_exit = True


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers and with a ready event."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = anyio.Event()

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.ready.set()

    async def run_on(self, sock: socket.socket) -> None:
        try:
            await self.serve(sockets=[sock])
        except SystemExit as exc:  # uvicorn exits the process when the app's lifespan fails to start
            raise ServiceUnavailableError(
                "The MCP HTTP server could not start (its lifespan failed; the log says why)",
                code="SVC_HTTP_START",
                suggestion="Fix the cause logged above and start the server again.",
            ) from exc
        finally:
            sock.close()


class _EventStreams:
    """ASGI wrapper that can end every open GET (event stream) at once, and refuse new ones."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._open: set[anyio.CancelScope] = set()
        self._closing = False

    def close(self) -> None:
        self._closing = True
        for scope in list(self._open):
            scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        sent = {"start": False, "end": False}

        async def tracked(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent["start"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                sent["end"] = True
            await send(message)

        with anyio.CancelScope() as cancel:
            self._open.add(cancel)
            if self._closing:
                cancel.cancel()
            try:
                await self.app(scope, receive, tracked)
            finally:
                self._open.discard(cancel)
        if not cancel.cancelled_caught:
            return
        # Ended by close(): finish the HTTP response properly, so the client sees the stream end.
        if not sent["start"]:
            headers = [(b"content-type", b"text/plain"), (b"connection", b"close")]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": b"server shutting down", "more_body": False})
        elif not sent["end"]:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def check_port(host: str, port: int) -> None:
    """Fail now (SVC_HTTP_BIND) if ``host:port`` cannot be listened on: a taken port must be
    reported before the stores are opened and the model loaded, not after. The socket is closed
    again; :func:`serve_http` binds it for good once the services are up."""
    if port != 0:
        _bind(host, port).close()


def _bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port, or a readable error (port taken, unknown host)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise _bind_error(host, port, exc) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise _bind_error(host, port, exc) from exc
    return sock


def _bind_error(host: str, port: int, exc: OSError) -> ServiceUnavailableError:
    return ServiceUnavailableError(
        f"Cannot listen on {host}:{port}: {exc.strerror or exc}",
        code="SVC_HTTP_BIND",
        details={"field": "--http", "provided": f"{host}:{port}"},
        suggestion="Choose a free port (or 0 for any) and an address of this machine.",
    )
