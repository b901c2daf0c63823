"""The stdio forwarder: what ``memory-service`` runs for each session (anchor: ``gopls -remote=auto``).

It relays the client's newline-delimited JSON-RPC to the data directory's daemon over its Unix
socket and the answers back, starting the daemon when none runs (link.py). It keeps what it
needs to survive the daemon's death (kill -9, a crash): the client's ``initialize`` and
``initialized``, and every request not yet answered. When the connection drops it starts (or
finds) a daemon again, replays the handshake (swallowing the second ``initialize`` answer) and
re-sends the unanswered requests. Each ``tools/call`` carries a request key in ``_meta``
(core/request_key.py), the same on every re-send, so the daemon applies a re-sent write once.
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
import time
import uuid
from collections.abc import Iterator
from typing import Any

from memory_service.core.request_key import REQUEST_KEY_META
from memory_service.daemon.link import GONE, DaemonLink, DaemonUnavailable, connect
from memory_service.daemon.paths import DaemonPaths

logger = logging.getLogger(__name__)

INTERNAL_ERROR = -32603
# An answer (not a request from the server) as the SDK writes it: jsonrpc, id, then result/error.
_RESPONSE = re.compile(rb'^\{"jsonrpc":"2\.0","id":(?P<id>-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')
RESTARTS_PER_MINUTE = 5  # a daemon dying more often than this is not retried again


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
        self._initialize: tuple[Any, bytes] | None = None
        self._initialized: bytes | None = None
        self._link: DaemonLink | None = None
        self._lock = threading.Lock()  # sends and reconnects
        self._out = threading.Lock()  # one whole line at a time on stdout, from either thread
        self._restarts: list[float] = []
        self._fatal: DaemonUnavailable | None = None
        self._closing = False
        self._stdout = sys.stdout.fileno()
        self._replays = 0

    def run(self) -> int:
        """Relay until the client closes stdin; 1 when no daemon could serve it."""
        try:
            self._link = connect(self._paths, start=True, start_timeout=self._start_timeout)
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
            self._pending.pop(_id_key(json.loads(found["id"])), None)
            return
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict) and "id" in message and "method" not in message:
                self._pending.pop(_id_key(message["id"]), None)

    def _reconnect(self) -> bool:
        """A daemon again, the handshake replayed, the unanswered requests re-sent; False when
        that failed (each unanswered request then gets an error, and so will later ones)."""
        with self._lock:
            if self._link is not None:
                self._link.close()
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
                link = connect(self._paths, start=True, start_timeout=self._start_timeout)
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
        init_answered = self._initialize is not None and _id_key(self._initialize[0]) not in self._pending
        if init_answered and self._initialize is not None:
            self._replays += 1
            message = json.loads(self._initialize[1])
            message["id"] = f"memory-service-forwarder-{self._replays}"
            link.send(json.dumps(message).encode() + b"\n")
            while True:  # its answer is ours, not the client's (who already has one)
                answer = json.loads(link.receive_line())
                if isinstance(answer, dict) and answer.get("id") == message["id"]:
                    break
            if self._initialized is not None:
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
