"""The stdio forwarder: what ``memory-service`` runs for each session (anchor: ``gopls -remote=auto``).

It relays the client's newline-delimited JSON-RPC to the data directory's daemon over its Unix
socket and the answers back, starting the daemon when none runs (link.py). It keeps what it
needs to survive the daemon's death (kill -9, a crash): the request that settled the session's
protocol era (an ``initialize`` the daemon accepted, then ``initialized``; or an accepted
``server/discover`` for a 2026-07-28 session) and every request not yet answered. When the
connection drops it starts (or finds) a daemon again, replays that handshake first (swallowing its
answer: a new connection takes the era of its first request) and re-sends the unanswered
requests. Each ``tools/call`` carries a request key in ``_meta``
(core/write/request_key.py), the same on every re-send, so the daemon applies a re-sent write once.
The forwarder's first line on each connection names its tool profile (MEMORY_SERVER__PROFILE), so
sessions of different profiles share one daemon.

It runs in the relay process (relay.py), which must stay small: two threads with blocking I/O
(stdin to the daemon on the main thread, the daemon to stdout on another), no event loop, and
nothing here imports pydantic, anyio or the settings model.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import select
import sys
import threading
import uuid
from collections.abc import Iterator
from typing import Any

from memory_service.core.write.request_key import REQUEST_KEY_META
from memory_service.daemon.link import GONE, DaemonLink, DaemonUnavailable, RestartBudget, connect
from memory_service.daemon.paths import DaemonPaths
from memory_service.daemon.wire import message_id

logger = logging.getLogger(__name__)

INTERNAL_ERROR = -32603
# An answer (not a request from the server) as the SDK writes it: jsonrpc, id, then result/error.
_RESPONSE = re.compile(rb'^\{"jsonrpc":"2\.0","id":(?P<id>-?\d+|"(?:[^"\\]|\\.)*"),"(?P<kind>result|error)"')
# The requests that settle a connection's protocol era (the MCP SDK serves the era of the first).
_OPENINGS = ("initialize", "server/discover")


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
    """One session's relay. ``profile`` is the first line sent on every connection to the daemon
    (hello.profile_line); ``start_timeout`` bounds the wait for a daemon this forwarder started."""

    def __init__(self, paths: DaemonPaths, *, profile: bytes, start_timeout: float) -> None:
        self._paths = paths
        self._start_timeout = start_timeout
        self._profile = profile
        self._pending: dict[str, tuple[Any, bytes]] = {}  # unanswered requests, in order
        self._openings: dict[str, tuple[str, bytes]] = {}  # era-settling requests not answered yet
        self._handshake: tuple[str, bytes] | None = None  # the one the daemon accepted, replayed first
        self._initialized: bytes | None = None
        self._link: DaemonLink | None = None
        self._lock = threading.Lock()  # sends and reconnects
        self._out = threading.Lock()  # one whole line at a time on stdout, from either thread
        self._budget = RestartBudget()  # daemon deaths, shared with connect()'s own retries
        self._fatal: DaemonUnavailable | None = None
        self._closing = False
        self._stdout = sys.stdout.fileno()
        self._replays = 0

    def run(self) -> int:
        """Relay until the client closes stdin; 1 when no daemon could serve it."""
        try:
            self._link = connect(
                self._paths, start=True, start_timeout=self._start_timeout, budget=self._budget
            )
            logger.info(
                "forwarding to the memory-service daemon (pid %s; its log: %s)",
                self._link.hello.get("pid"),
                self._paths.log,
            )
            with contextlib.suppress(*GONE):  # if it is gone already, the reconnect sends it again
                self._link.send(self._profile)
        except DaemonUnavailable as exc:
            self._fail(exc)
        if self._link is not None:
            threading.Thread(target=self._from_daemon, name="from-daemon", daemon=True).start()
        self._from_client(sys.stdin.fileno())
        self._closing = True  # the client is gone: what the daemon still says has no reader
        if (link := self._link) is not None:
            link.close()
        return 1 if self._fatal else 0

    # ------------------------------------------------------------------ client -> daemon

    def _from_client(self, fd: int) -> None:
        for line in _lines(fd):
            if not line.strip():
                continue
            # Noted and sent in one step under the lock: a reconnect then either replays it (noted
            # before) or comes first and leaves it to this send, never both (two answers to an id).
            with self._lock:
                line, request_id = self._note(line if line.endswith(b"\n") else line + b"\n")
                if self._fatal is not None:
                    if request_id is not None:
                        self._pending.pop(_id_key(request_id), None)
                        self._write(_error_line(request_id, self._fatal))
                    continue
                if self._link is not None:
                    with contextlib.suppress(*GONE):
                        self._link.send(line)  # if it failed: re-sent after reconnecting

    def _note(self, line: bytes) -> tuple[bytes, Any]:
        """Remember what a reconnect needs; stamp tools/call with a request key. A line json
        cannot take (invalid UTF-8, nesting past the recursion limit, a huge number) goes on as
        it came, noted under the id it names: the daemon answers it with an error."""
        try:
            return self._noted(line)
        except (ValueError, RecursionError):
            request_id = message_id(line)
            if request_id is not None:
                self._pending[_id_key(request_id)] = (request_id, line)
            return line, request_id

    def _noted(self, line: bytes) -> tuple[bytes, Any]:
        message = json.loads(line)
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
        if method in _OPENINGS:
            self._openings[_id_key(message["id"])] = (method, line)
        self._pending[_id_key(message["id"])] = (message["id"], line)
        return line, message["id"]

    # ------------------------------------------------------------------ daemon -> client

    def _from_daemon(self) -> None:
        while (link := self._link) is not None:
            try:
                line = link.receive_line()
            except GONE:
                if self._closing or not self._reconnect():
                    return
                continue
            self._answered(line)
            try:
                self._write(line)
            except BrokenPipeError:  # the client closed its end: nobody is left to answer
                return

    def _answered(self, line: bytes) -> None:
        found = _RESPONSE.match(line)  # the SDK's field order; a big answer is not parsed whole
        if found:
            key, accepted = _id_key(json.loads(found["id"])), found["kind"] == b"result"
        else:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                return
            if not isinstance(message, dict) or "id" not in message or "method" in message:
                return
            key, accepted = _id_key(message["id"]), "result" in message
        self._pending.pop(key, None)
        opening = self._openings.pop(key, None)
        if opening is not None and accepted:  # the session's era is settled (a refused one is not)
            self._handshake = opening

    def _reconnect(self) -> bool:
        """A daemon again, the handshake replayed, the unanswered requests re-sent; False when
        that failed (each unanswered request then gets an error, and so will later ones)."""
        with self._lock:
            if self._link is not None:
                self._link.close()
            self._link = None
            try:
                self._budget.spend(self._paths)
                logger.warning("the memory-service daemon went away; reconnecting")
                link = connect(
                    self._paths, start=True, start_timeout=self._start_timeout, budget=self._budget
                )
                self._replay(link)
            except (DaemonUnavailable, *GONE) as exc:
                self._fail(
                    exc
                    if isinstance(exc, DaemonUnavailable)
                    else DaemonUnavailable(f"the daemon went away again: {exc}")
                )
                assert self._fatal is not None
                for request_id, _ in list(self._pending.values()):
                    self._write(_error_line(request_id, self._fatal))
                self._pending.clear()
                return False
            self._link = link
            if self._closing:  # the client left while we reconnected
                link.close()
                return False
            return True

    def _replay(self, link: DaemonLink) -> None:
        link.send(self._profile)  # the new connection speaks the client's profile too
        # The era the session settled, before anything else crosses: the connection serves the
        # era of its first request, and refuses the other era's requests from then on.
        if self._handshake is not None:
            method, line = self._handshake
            self._replays += 1
            message = json.loads(line)
            message["id"] = f"memory-service-forwarder-{self._replays}"
            link.send(json.dumps(message).encode() + b"\n")
            while True:  # its answer is ours, not the client's (who already has one)
                answer = json.loads(link.receive_line())
                if isinstance(answer, dict) and answer.get("id") == message["id"]:
                    break
            if method == "initialize" and self._initialized is not None:
                link.send(self._initialized)
        for _, line in list(self._pending.values()):
            link.send(line)

    def _fail(self, problem: DaemonUnavailable) -> None:
        self._fatal = problem
        print(f"memory-service: {problem}", file=sys.stderr, flush=True)

    def _write(self, line: bytes) -> None:
        view = memoryview(line)
        with self._out:
            while view:  # a blocking write: a client slow to read slows the relay (backpressure)
                view = view[os.write(self._stdout, view) :]


def _lines(fd: int) -> Iterator[bytes]:
    """The client's lines from ``fd``, read blocking (the last one may lack its newline)."""
    buffer = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:  # a descriptor left non-blocking by whoever shares it
            select.select([fd], [], [])
            continue
        if not chunk:
            if buffer:
                yield bytes(buffer)
            return
        buffer += chunk
        while (end := buffer.find(b"\n")) >= 0:
            yield bytes(buffer[: end + 1])
            del buffer[: end + 1]
