"""A small synchronous MCP client of the daemon, for memory-cli: tools called over its socket.

memory-cli cannot open the stores while the daemon owns them; it asks the daemon instead (the
same tools the sessions call), and opens the stores itself only when no daemon runs. It speaks
over the sessions' blocking link (link.py), one request at a time. A backup is an operator
request instead (:func:`operator_call`, daemon/operator.py): not a tool.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Iterator
from typing import Any

from memory_service import __version__
from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError
from memory_service.daemon.hello import HELLO_METHOD
from memory_service.daemon.link import GONE, DaemonLink, connect
from memory_service.daemon.paths import DaemonPaths
from memory_service.settings import Settings

PROTOCOL = "2025-06-18"
Progress = Callable[[dict[str, Any]], None]


class ToolError(MemoryServiceError):
    """A tool answered with the seed-001 error envelope."""


@contextlib.contextmanager
def hello_connection(settings: Settings, timeout: float = 5.0) -> Iterator[dict[str, Any] | None]:
    """Connected to whatever daemon answers on the socket, of any version, inside the block: its
    hello, or None when nothing answers with one. ``memory-cli daemon status`` and ``stop`` must
    reach a daemon left running across an upgrade too, which :func:`probe` refuses."""
    path = DaemonPaths.of(settings).socket
    with contextlib.closing(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)) as sock:
        sock.settimeout(timeout)
        line = b""
        try:
            sock.connect(str(path))
            while b"\n" not in line and len(line) < 65536:
                chunk = sock.recv(4096)
                if not chunk:
                    break  # it closed without a word: stopping, or not a daemon
                line += chunk
        except OSError:  # no socket, a stale one (refused), or silence (timeout)
            line = b""
        yield _hello_in(line)


def read_hello(settings: Settings, timeout: float = 5.0) -> dict[str, Any] | None:
    """The hello (version, pid) of whatever daemon answers, of any version; None when none does."""
    with hello_connection(settings, timeout) as hello:
        return hello


def _hello_in(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line.split(b"\n", 1)[0])
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != HELLO_METHOD:
        return None
    hello = message.get("params")
    return hello if isinstance(hello, dict) and isinstance(hello.get("pid"), int) else None


class DaemonSession:
    """``with DaemonSession(settings) as s: s.call(tool, args)``; raises DaemonUnavailable when
    no daemon runs (or it is of another version)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._link: DaemonLink | None = None
        self._next = 0

    def __enter__(self) -> DaemonSession:
        self._link = connect(self._settings, start=False)
        try:
            self._open()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None

    @property
    def hello(self) -> dict[str, Any]:
        assert self._link is not None
        return self._link.hello

    def call(self, tool: str, arguments: dict[str, Any], progress: Progress | None = None) -> dict[str, Any]:
        """The tool's JSON answer; ToolError for an error answer."""
        result = self._request("tools/call", {"name": tool, "arguments": arguments}, progress)
        data: dict[str, Any] = json.loads(result["content"][0]["text"])
        if result.get("isError"):
            error = data.get("error", {})
            raise ToolError(
                error.get("message", "the tool failed"),
                code=error.get("code", "INTERNAL"),
                details=error.get("details") or {},
                suggestion=error.get("suggestion", ""),
            )
        return data

    def _open(self) -> None:
        assert self._link is not None
        self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "memory-cli", "version": __version__},
            },
            None,
        )
        try:
            self._link.send(
                json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n"
            )
        except GONE as exc:
            raise _gone("notifications/initialized") from exc

    def _request(self, method: str, params: dict[str, Any], progress: Progress | None) -> dict[str, Any]:
        assert self._link is not None
        self._next += 1
        wanted = self._next
        if progress is not None:
            params = {**params, "_meta": {"progressToken": f"cli-{wanted}"}}
        message = {"jsonrpc": "2.0", "id": wanted, "method": method, "params": params}
        try:
            self._link.send(json.dumps(message).encode() + b"\n")
        except GONE as exc:
            raise _gone(method) from exc
        while True:
            try:
                answer = json.loads(self._link.receive_line())
            except GONE as exc:
                raise _gone(method) from exc
            if answer.get("method") == "notifications/progress" and progress is not None:
                progress(answer.get("params", {}))
                continue
            if answer.get("id") != wanted:
                continue
            if "error" in answer:
                raise ServiceUnavailableError(
                    f"The daemon refused {method}: {answer['error'].get('message')}",
                    code="SVC_DAEMON_REFUSED",
                    details={"method": method},
                    suggestion="See the daemon's log (daemon.log in the data directory).",
                )
            result: dict[str, Any] = answer["result"]
            return result


def operator_call(
    settings: Settings, method: str, params: dict[str, Any], progress: Progress | None = None
) -> dict[str, Any]:
    """An operator request (daemon/operator.py) answered by the running daemon: its result.

    Raises:
        DaemonUnavailable: no daemon runs (or it is of another version).
        ToolError: the daemon answered with an error (its seed-001 envelope).
        ServiceUnavailableError: the daemon went away before answering (SVC_DAEMON_GONE).
    """
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    link = connect(settings, start=False)
    try:
        try:
            link.send(json.dumps(request).encode() + b"\n")
            while True:
                answer = json.loads(link.receive_line())
                if answer.get("method") == "notifications/progress":
                    if progress is not None:
                        progress(answer.get("params", {}))
                    continue
                if answer.get("id") == 1:
                    break
        except GONE as exc:
            raise _gone(method) from exc
    finally:
        link.close()
    if "error" in answer:
        error = (answer["error"].get("data") or {}).get("error") or {}
        raise ToolError(
            error.get("message") or answer["error"].get("message", "the daemon refused"),
            code=error.get("code", "INTERNAL"),
            details=error.get("details") or {},
            suggestion=error.get("suggestion", ""),
        )
    result: dict[str, Any] = answer["result"]
    return result


def _gone(method: str) -> ServiceUnavailableError:
    return ServiceUnavailableError(
        "The memory-service daemon closed the connection before answering",
        code="SVC_DAEMON_GONE",
        details={"method": method},
        suggestion="Run the command again; the next session or command finds or starts a daemon.",
    )
