"""The daemon: the one process that owns a data directory's stores, serving every session.

It opens the stores once (taking ``owner.lock``), then listens on its Unix socket (user-only,
:mod:`.paths`): each connection is one MCP session (a forwarder's client, or memory-cli) served
with the same tools and the same opened services, so every session sees the others' writes at
once, and background work (index jobs, normalization, graph sync) outlives the session that
started it. memory-cli's backup is an operator request on the same socket (operator.py): the
daemon copies the stores with writes paused. With ``http`` it also serves MCP over streamable
HTTP. It exits after ``daemon.idle_timeout_s`` with no client connected and no job running
(``idle_exit``), or on SIGTERM/SIGINT, closing the stores cleanly.

A socket file left by a daemon that died is stale by definition once we hold ``owner.lock``
(only the lock's holder may serve the data directory), so it is replaced, not trusted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from datetime import UTC, datetime
from typing import Any

import anyio
from anyio.abc import SocketStream, TaskGroup
from mcp.server import Server

from memory_service.app import Services
from memory_service.core.errors import MemoryServiceError
from memory_service.daemon.connection import serve_connection
from memory_service.daemon.hello import announced_version, hello_line, profile_of
from memory_service.daemon.operator import Operator
from memory_service.daemon.paths import DaemonPaths
from memory_service.server import ServerState, build_server, serving
from memory_service.settings import Settings

logger = logging.getLogger(__name__)


def run_daemon(
    settings: Settings,
    *,
    http: tuple[str, int] | None = None,
    token: str | None = None,
    idle_exit: bool = True,
) -> int:
    """Serve the data directory until idle (or stopped); the process's exit code."""
    if http is not None:
        from memory_service.transport.http import check_bind

        check_bind(http[0], token)
    daemon = Daemon(settings, DaemonPaths.of(settings), http=http, token=token, idle_exit=idle_exit)
    return anyio.run(daemon.run)


class Daemon:
    def __init__(
        self,
        settings: Settings,
        paths: DaemonPaths,
        *,
        http: tuple[str, int] | None,
        token: str | None,
        idle_exit: bool,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self._http = http
        self._token = token
        self._idle_exit = idle_exit
        self.clients = 0
        self._profiles: ProfileServers | None = None
        self._last_activity = time.monotonic()
        self._inode = 0

    async def run(self) -> int:
        state = ServerState()
        async with serving(self.settings, state) as services:
            if services is None:
                error = state.failure["error"]
                print(
                    f"memory-service daemon: [{error.code}] {error.message}. {error.suggestion}",
                    file=sys.stderr,
                )
                return 1
            mcp = build_server(self.settings, shared=state)
            # Socket connections without a profile line (memory-cli) speak seed 001's tools,
            # whatever profile the forwarder that started this daemon had.
            self._profiles = ProfileServers(self.settings, state)
            listener = await self._listen()
            info: dict[str, Any] = {
                "pid": os.getpid(),
                "version": announced_version(),
                "socket": str(self.paths.socket),
                "data_dir": str(self.paths.data_dir),
                "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._serve_socket, listener, tg, Operator(services))
                    if self._http is not None:
                        info["http"] = await self._start_http(tg, mcp)
                    self.paths.write_info(info)
                    logger.info(
                        "daemon %s serving %s on %s", os.getpid(), self.paths.data_dir, self.paths.socket
                    )
                    tg.start_soon(self._stop_on_signal, tg)
                    if self._idle_exit:
                        tg.start_soon(self._exit_when_idle, services, tg)
            finally:
                with contextlib.suppress(OSError):
                    await listener.aclose()
                self._remove_socket()
        # Only once the stores are closed (owner.lock released): until then daemon.json tells a
        # forwarder that the lock's holder is a daemon stopping, worth waiting for.
        self.paths.remove_info(os.getpid())
        logger.info("daemon %s stopped", os.getpid())
        return 0

    async def _listen(self) -> Any:
        path = self.paths.socket
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # stale: we hold owner.lock, so no live daemon serves this directory
        old = os.umask(0o177)  # created 0600: only this user may connect
        try:
            listener = await anyio.create_unix_listener(path)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self._inode = path.stat().st_ino
        return listener

    def _remove_socket(self) -> None:
        """Unlink the socket unless a successor already replaced it with its own."""
        with contextlib.suppress(OSError):
            if self.paths.socket.stat().st_ino == self._inode:
                self.paths.socket.unlink()

    async def _serve_socket(self, listener: Any, tg: TaskGroup, operator: Operator) -> None:
        assert self._profiles is not None
        profiles = self._profiles
        server = profiles.server()  # the SDK's low-level server serves a stream pair
        greeting = hello_line()

        async def handle(stream: SocketStream) -> None:
            self.clients += 1
            self._last_activity = time.monotonic()
            try:
                await serve_connection(
                    server, stream, greeting, select=profiles.select, operate=operator.answer
                )
            except Exception:  # one broken session must not take the others down
                logger.exception("a session ended with an error")
            finally:
                self.clients -= 1
                self._last_activity = time.monotonic()

        await listener.serve(handle, tg)

    async def _start_http(self, tg: TaskGroup, mcp: Server[Any]) -> dict[str, Any]:
        from memory_service.transport.http import http_app, serve_http

        assert self._http is not None
        host, port = self._http
        app = http_app(mcp, host=host, port=port, token=self._token)
        bound: int = await tg.start(serve_http, app, host, port)
        shown = f"[{host}]" if ":" in host else host
        return {"host": host, "port": bound, "url": f"http://{shown}:{bound}/mcp"}

    async def _stop_on_signal(self, tg: TaskGroup) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                logger.info("daemon %s: %s, stopping", os.getpid(), signal.Signals(signum).name)
                tg.cancel_scope.cancel()
                return

    async def _exit_when_idle(self, services: Services, tg: TaskGroup) -> None:
        timeout = self.settings.daemon.idle_timeout_s
        while True:
            await anyio.sleep(min(1.0, max(timeout / 4, 0.05)))
            if self.clients or services.jobs.active():
                self._last_activity = time.monotonic()
                continue
            if time.monotonic() - self._last_activity >= timeout:
                logger.info(
                    "daemon %s: idle for %.0f s with no client and no job, exiting", os.getpid(), timeout
                )
                tg.cancel_scope.cancel()
                return


class ProfileServers:
    """One MCP server per tool profile a forwarder asked for, built on first use over the shared
    stores (tools/profiles.py): sessions of different profiles share one daemon."""

    def __init__(self, settings: Settings, state: ServerState) -> None:
        self._settings = settings
        self._state = state
        self._built: dict[tuple[str, str], Server[Any]] = {}

    def server(self, profile: str = "default", tool_names: str = "legal") -> Server[Any]:
        """The server of a profile (CFG_PROFILE when it is unknown or clashes)."""
        key = (profile, tool_names)
        if key not in self._built:
            self._built[key] = build_server(
                self._settings, shared=self._state, profile=profile, tool_names=tool_names
            )
        return self._built[key]

    def select(self, line: bytes) -> Server[Any] | None:
        """The server for a connection whose first line is a profile notification."""
        asked = profile_of(line)
        if asked is None:
            return None
        profile = asked.get("profile") or "default"
        try:
            return self.server(profile, asked.get("tool_names") or "legal")
        except MemoryServiceError as exc:  # a forwarder checks its profile first: not expected
            logger.error("a client asked for profile %r: %s; serving the default", profile, exc.message)
            return self.server()
