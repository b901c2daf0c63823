"""A bare MCP stdio client for crash tests: the real server as a subprocess we can kill -9.

The SDK's client owns its subprocess and treats its death as a transport failure; here the test
needs the pid, a kill at any moment (from a timer, in the middle of a call) and a plain answer
to "was this call acknowledged?": a response line arrived (yes) or stdout ended first (no).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from tests.conftest import REPO

PROTOCOL = "2025-06-18"


class ServerGone(Exception):
    """The server died before answering: the call was not acknowledged."""


class ToolFailed(Exception):
    def __init__(self, tool: str, data: dict[str, Any]) -> None:
        super().__init__(f"{tool} failed: {data}")
        self.data = data


class StdioServer:
    """``python -m memory_service`` with newline-delimited JSON-RPC over its stdin/stdout."""

    def __init__(self, env: dict[str, str], log: Path, *, start_timeout: float = 300.0) -> None:
        self._log: IO[bytes] = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memory_service"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            cwd=REPO,
        )
        self._next = 0
        self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "crash-test", "version": "1"},
            },
            timeout=start_timeout,
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def kill_after(self, seconds: float) -> threading.Timer:
        """SIGKILL the server after ``seconds`` (whatever it is doing then)."""
        timer = threading.Timer(seconds, self.kill)
        timer.daemon = True
        timer.start()
        return timer

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)

    def close(self) -> None:
        """Kill (the tests never need a clean stop: a clean stop is not what they test) and reap."""
        self.kill()
        self.proc.wait(timeout=60)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._log.close()

    def call(self, tool: str, args: dict[str, Any], *, timeout: float = 300.0) -> dict[str, Any]:
        """The tool's JSON answer; ToolFailed for an error answer, ServerGone when none came."""
        result = self._request("tools/call", {"name": tool, "arguments": args}, timeout=timeout)
        data: dict[str, Any] = json.loads(result["content"][0]["text"])
        if result.get("isError"):
            raise ToolFailed(tool, data)
        return data

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise ServerGone(str(exc)) from None

    def _request(self, method: str, params: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        self._next += 1
        wanted = self._next
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        watchdog = self.kill_after(timeout)  # a hung server fails the test instead of hanging it
        try:
            assert self.proc.stdout is not None
            while line := self.proc.stdout.readline():
                message = json.loads(line)
                if message.get("id") != wanted:
                    continue  # a notification (progress, log)
                if "error" in message:
                    raise ToolFailed(method, message["error"])
                result: dict[str, Any] = message["result"]
                return result
        finally:
            watchdog.cancel()
        raise ServerGone(f"{method}: the server exited with {self.proc.wait(timeout=60)}")
