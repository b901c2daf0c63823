"""The stdio forwarder: what ``memory-service`` runs for each session (anchor: ``gopls -remote=auto``).

It relays the client's newline-delimited JSON-RPC to the data directory's daemon over its Unix
socket and the answers back, starting the daemon when none runs (one forwarder at a time, under
a spawn lock, so that racing sessions start one daemon). It keeps what it needs to survive the
daemon's death (kill -9, a crash): the client's ``initialize`` and ``initialized``, and every
request not yet answered. When the connection drops it starts (or finds) a daemon again, replays
the handshake (swallowing the second ``initialize`` answer) and re-sends the unanswered
requests. Each ``tools/call`` carries a request key in ``_meta`` (core/request_key.py), the same
on every re-send, so the daemon applies a re-sent write once.

Each connection opens with the daemon's hello notification (its version and pid): a daemon of
another version is refused with a message saying how to stop it. The forwarder's first line names
its tool profile (MEMORY_SERVER__PROFILE), so sessions of different profiles share one daemon.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream

from memory_service import __version__
from memory_service.core.request_key import REQUEST_KEY_META
from memory_service.daemon.hello import HELLO_METHOD, profile_line
from memory_service.daemon.paths import DaemonPaths
from memory_service.daemon.wire import GONE, MAX_LINE
from memory_service.settings import Settings
from memory_service.stores.owner_lock import read_owner

logger = logging.getLogger(__name__)

_GONE = (*GONE, OSError)
INTERNAL_ERROR = -32603
# An answer (not a request from the server) as the SDK writes it: jsonrpc, id, then result/error.
_RESPONSE = re.compile(rb'^\{"jsonrpc":"2\.0","id":(?P<id>-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')
RESTARTS_PER_MINUTE = 5
# The line a daemon prints before exiting when it cannot start (service.py): code and reason.
FAILURE = re.compile(
    r"^memory-service daemon: \[(?P<code>[A-Z_]+)\] (?P<message>.*)$"
)  # a daemon dying more often than this is not retried again


class DaemonUnavailable(Exception):
    """No daemon could be reached or started; the message says why and what to do."""

    def __init__(self, message: str, code: str = "SVC_DAEMON_UNAVAILABLE") -> None:
        super().__init__(message)
        self.code = code


def run_forwarder(settings: Settings) -> int:
    return anyio.run(Forwarder(settings, DaemonPaths.of(settings)).run)


class DaemonLink:
    """A connection to the daemon, opened after its hello was read and checked."""

    def __init__(self, stream: SocketStream, hello: dict[str, Any]) -> None:
        self.stream = stream
        self.lines = BufferedByteReceiveStream(stream)
        self.hello = hello

    async def receive_line(self) -> bytes:
        return await self.lines.receive_until(b"\n", MAX_LINE) + b"\n"

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.stream.aclose()


async def connect(paths: Settings | DaemonPaths, *, start: bool, start_timeout: float = 120.0) -> DaemonLink:
    """A checked link to the running daemon; with ``start``, start one when none runs."""
    if isinstance(paths, Settings):
        start_timeout = paths.daemon.start_timeout_s
        paths = DaemonPaths.of(paths)
    link = await _try_connect(paths, start_timeout)
    if link is not None or not start:
        if link is None:
            raise DaemonUnavailable(f"no memory-service daemon is running for {paths.data_dir}")
        return link
    async with _spawn_lock(paths, start_timeout):
        link = await _try_connect(paths, start_timeout)  # another forwarder started it meanwhile
        if link is not None:
            return link
        proc = _spawn(paths)
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline:
            link = await _try_connect(paths, start_timeout)
            if link is not None:
                return link
            if proc.poll() is not None:
                problem = _why_it_exited(paths, proc.returncode)
                if problem.code != "SVC_DATA_DIR_LOCKED" or not await _stopping_daemon_left(paths, deadline):
                    raise problem
                proc = _spawn(paths)  # the previous daemon was still closing its stores: again
            await anyio.sleep(0.05)
    raise DaemonUnavailable(
        f"the memory-service daemon did not start within {start_timeout:.0f} s. See {paths.log}; raise "
        "MEMORY_DAEMON__START_TIMEOUT_S if the machine is slow"
    )


async def _stopping_daemon_left(paths: DaemonPaths, deadline: float) -> bool:
    """Whether the data directory's lock was held by a daemon that was stopping (its
    ``daemon.json`` names the holder) and is now free: a session that reconnects at once after
    ``memory-cli daemon stop`` must not fail on the lock its old daemon is about to release.
    A ``--no-daemon`` server holding it is not waited for."""
    info = paths.read_info()
    holder = read_owner(paths.data_dir)
    if holder is None or info is None or info.get("pid") != holder:
        return holder is None  # released meanwhile: start again; else not a daemon's lock
    while time.monotonic() < deadline:
        if read_owner(paths.data_dir) is None:
            return True
        await anyio.sleep(0.05)
    return False


async def _try_connect(paths: DaemonPaths, timeout: float) -> DaemonLink | None:
    try:
        stream = await anyio.connect_unix(paths.socket)
    except OSError:  # no socket, or a stale one (connection refused): nobody serves it
        return None
    link = DaemonLink(stream, {})
    try:
        with anyio.fail_after(timeout):
            first = json.loads(await link.receive_line())
    except (TimeoutError, ValueError, *_GONE):
        await link.aclose()
        return None  # it died (or is stopping) between accept and hello
    hello = first.get("params") if isinstance(first, dict) and first.get("method") == HELLO_METHOD else None
    if not isinstance(hello, dict):
        await link.aclose()
        raise DaemonUnavailable(f"{paths.socket} is not a memory-service daemon's socket")
    if hello.get("version") != __version__:
        await link.aclose()
        raise DaemonUnavailable(
            f"the memory-service daemon serving {paths.data_dir} (pid {hello.get('pid')}) is version "
            f"{hello.get('version')}, this memory-service is {__version__}. Stop it (memory-cli daemon stop, "
            "or kill that pid) once its sessions are done; the next session starts a daemon of this version",
            code="SVC_DAEMON_VERSION",
        )
    link.hello = hello
    return link


class _spawn_lock:
    """An exclusive flock on the spawn lock file, waited for without blocking the event loop."""

    def __init__(self, paths: DaemonPaths, timeout: float) -> None:
        self._path = paths.spawn_lock
        self._timeout = timeout
        self._fd = -1

    async def __aenter__(self) -> None:
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self._fd)
                    raise DaemonUnavailable(
                        f"another session held {self._path} for {self._timeout:.0f} s"
                    ) from None
                await anyio.sleep(0.05)

    async def __aexit__(self, *_: object) -> None:
        os.close(self._fd)  # closing drops the flock


def _spawn(paths: DaemonPaths) -> subprocess.Popen[bytes]:
    """``memory-service daemon`` in its own session (a client's process group may be killed
    when the session ends; the daemon must outlive it), logging to the data directory."""
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMORY_DATA_DIR": str(paths.data_dir)}
    with open(paths.log, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memory_service", "daemon"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )
    threading.Thread(target=proc.wait, name="reap-daemon", daemon=True).start()  # no zombie when it exits
    return proc


def _why_it_exited(paths: DaemonPaths, code: int | None) -> DaemonUnavailable:
    """The daemon's own one-line reason (it prints one before exiting), else where to look."""
    try:
        tail = paths.log.read_text(errors="replace").splitlines()[-50:]
    except OSError:
        tail = []
    for line in reversed(tail):
        found = FAILURE.match(line)
        if found:
            return DaemonUnavailable(found["message"], found["code"])
    return DaemonUnavailable(
        f"the memory-service daemon exited with code {code} before accepting connections; see {paths.log}"
    )


def _id_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _error_line(request_id: Any, problem: DaemonUnavailable) -> bytes:
    """The JSON-RPC error a client gets when no daemon serves it (as a server that cannot open
    its stores answers): the message, and the seed-001 envelope in ``data``."""
    message = str(problem)
    data = {
        "code": problem.code,
        "category": "SERVICE_UNAVAILABLE",
        "message": message,
        "details": {},
        "suggestion": "Fix what the message says, then start the session again; `memory-service --no-daemon` "
        "runs without the shared daemon.",
    }
    error = {"code": INTERNAL_ERROR, "message": f"memory-service could not start: {message}", "data": data}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n"


class Forwarder:
    def __init__(self, settings: Settings, paths: DaemonPaths) -> None:
        self._settings = settings
        self._paths = paths
        self._pending: dict[str, tuple[Any, bytes]] = {}  # unanswered requests, in order
        self._initialize: tuple[Any, bytes] | None = None
        self._initialized: bytes | None = None
        self._link: DaemonLink | None = None
        self._lock = anyio.Lock()  # sends and reconnects
        self._restarts: list[float] = []
        self._fatal: DaemonUnavailable | None = None
        self._stdout = sys.stdout.fileno()
        self._replays = 0
        self._profile = profile_line(settings.server.profile, settings.server.tool_names)

    async def run(self) -> int:
        stdin = _StdinLines(sys.stdin.fileno())
        try:
            self._link = await connect(
                self._paths, start=True, start_timeout=self._settings.daemon.start_timeout_s
            )
            await self._link.stream.send(self._profile)
            logger.info(
                "forwarding to the memory-service daemon (pid %s; its log: %s)",
                self._link.hello.get("pid"),
                self._paths.log,
            )
        except DaemonUnavailable as exc:
            self._fail(exc)
        async with anyio.create_task_group() as tg:
            if self._link is not None:
                tg.start_soon(self._from_daemon)
            await self._from_client(stdin)
            tg.cancel_scope.cancel()
        if self._link is not None:
            await self._link.aclose()
        return 1 if self._fatal else 0

    # ------------------------------------------------------------------ client -> daemon

    async def _from_client(self, stdin: _StdinLines) -> None:
        async for line in stdin.lines():
            if not line.strip():
                continue
            line, request_id = self._note(line if line.endswith(b"\n") else line + b"\n")
            if self._fatal is not None:
                if request_id is not None:
                    self._pending.pop(_id_key(request_id), None)
                    await self._write(_error_line(request_id, self._fatal))
                continue
            async with self._lock:
                if self._link is not None:
                    with contextlib.suppress(*_GONE):
                        await self._link.stream.send(line)  # if it failed: re-sent after reconnecting

    def _note(self, line: bytes) -> tuple[bytes, Any]:
        """Remember what a reconnect needs; stamp tools/call with a request key."""
        try:
            message = json.loads(line)
        except ValueError:
            return line, None  # the daemon answers the parse error
        if not isinstance(message, dict):
            return line, None
        method = message.get("method")
        if method == "notifications/initialized":
            self._initialized = line
        if not isinstance(method, str) or "id" not in message:
            return line, None
        params = message.get("params")
        if method == "tools/call" and isinstance(params, dict):
            meta = params.setdefault("_meta", {})
            if isinstance(meta, dict) and REQUEST_KEY_META not in meta:
                meta[REQUEST_KEY_META] = str(uuid.uuid4())
                line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        if method == "initialize":
            self._initialize = (message["id"], line)
        self._pending[_id_key(message["id"])] = (message["id"], line)
        return line, message["id"]

    # ------------------------------------------------------------------ daemon -> client

    async def _from_daemon(self) -> None:
        while self._link is not None:
            try:
                line = await self._link.receive_line()
            except _GONE:
                if not await self._reconnect():
                    return
                continue
            self._answered(line)
            await self._write(line)

    def _answered(self, line: bytes) -> None:
        found = _RESPONSE.match(line)  # the SDK's field order; a big answer is not parsed whole
        if found:
            self._pending.pop(_id_key(json.loads(found["id"])), None)
            return
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict) and "id" in message and "method" not in message:
                self._pending.pop(_id_key(message["id"]), None)

    async def _reconnect(self) -> bool:
        """A daemon again, the handshake replayed, the unanswered requests re-sent; False when
        that failed (each unanswered request then gets an error, and so will later ones)."""
        async with self._lock:
            if self._link is not None:
                await self._link.aclose()
            self._link = None
            now = time.monotonic()
            self._restarts = [t for t in self._restarts if now - t < 60] + [now]
            try:
                if len(self._restarts) > RESTARTS_PER_MINUTE:
                    raise DaemonUnavailable(
                        f"the memory-service daemon stopped {len(self._restarts)} times in a minute; "
                        f"see {self._paths.log}"
                    )
                logger.warning("the memory-service daemon went away; reconnecting")
                link = await connect(
                    self._paths, start=True, start_timeout=self._settings.daemon.start_timeout_s
                )
                await self._replay(link)
            except (DaemonUnavailable, *_GONE) as exc:
                self._fail(
                    exc
                    if isinstance(exc, DaemonUnavailable)
                    else DaemonUnavailable(f"the daemon went away again: {exc}")
                )
                assert self._fatal is not None
                for request_id, _ in list(self._pending.values()):
                    await self._write(_error_line(request_id, self._fatal))
                self._pending.clear()
                return False
            self._link = link
            return True

    async def _replay(self, link: DaemonLink) -> None:
        await link.stream.send(self._profile)  # the new connection speaks the client's profile too
        init_answered = self._initialize is not None and _id_key(self._initialize[0]) not in self._pending
        if init_answered and self._initialize is not None:
            self._replays += 1
            message = json.loads(self._initialize[1])
            message["id"] = f"memory-service-forwarder-{self._replays}"
            await link.stream.send(json.dumps(message).encode() + b"\n")
            while True:  # its answer is ours, not the client's (who already has one)
                answer = json.loads(await link.receive_line())
                if isinstance(answer, dict) and answer.get("id") == message["id"]:
                    break
            if self._initialized is not None:
                await link.stream.send(self._initialized)
        for _, line in list(self._pending.values()):
            await link.stream.send(line)

    def _fail(self, problem: DaemonUnavailable) -> None:
        self._fatal = problem
        print(f"memory-service: {problem}", file=sys.stderr, flush=True)

    async def _write(self, line: bytes) -> None:
        view = memoryview(line)
        while view:  # a blocking write: a client slow to read slows the relay (backpressure)
            view = view[os.write(self._stdout, view) :]


class _StdinLines:
    """The client's lines from fd 0: polled on the event loop when it is a pipe, a socket or a
    terminal (no thread hop per message), read in a worker thread otherwise (a regular file)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        mode = os.fstat(fd).st_mode
        self._poll = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)
        if self._poll:
            os.set_blocking(fd, False)

    async def _read(self) -> bytes:
        if not self._poll:
            return await anyio.to_thread.run_sync(os.read, self._fd, 1 << 16)
        while True:
            await anyio.wait_readable(self._fd)
            try:
                return os.read(self._fd, 1 << 16)
            except BlockingIOError:
                continue

    async def lines(self) -> AsyncIterator[bytes]:
        buffer = bytearray()
        while True:
            chunk = await self._read()
            if not chunk:
                if buffer:
                    yield bytes(buffer)
                return
            buffer += chunk
            while (end := buffer.find(b"\n")) >= 0:
                yield bytes(buffer[: end + 1])
                del buffer[: end + 1]
