"""A session driven with raw bytes: ``python -m memory_service`` over stdio, lines written as
given (invalid UTF-8, any nesting: what an SDK client cannot send) and answers collected by id.

A reader thread files every line of stdout under its id, so a test waits for one answer with a
deadline instead of blocking on a read that may never end; a request left unanswered fails the
test with what did come.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from tests.conftest import REPO

INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw-test", "version": "1"},
}


class RawSession:
    def __init__(self, env: dict[str, str], log: Path, args: tuple[str, ...] = ()) -> None:
        self._log: IO[bytes] = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memory_service", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            cwd=REPO,
        )
        self._answers: dict[str, list[dict[str, Any]]] = {}
        self._changed = threading.Condition()
        self._ended = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)  # the relay writes JSON lines, whatever it was sent
            with self._changed:
                if "id" in message and "method" not in message:
                    self._answers.setdefault(json.dumps(message["id"]), []).append(message)
                    self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line if line.endswith(b"\n") else line + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: Any, timeout: float = 180.0) -> dict[str, Any]:
        """The (first) answer to ``request_id``; fails the test when none comes in ``timeout`` s."""
        key = json.dumps(request_id)
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._answers.get(key):
                left = deadline - time.monotonic()
                assert left > 0 and not self._ended, f"no answer to id {request_id} ({self.proc.poll()=})"
                self._changed.wait(min(left, 1.0))
            return self._answers[key].pop(0)

    def request(self, request_id: Any, method: str, params: dict[str, Any], timeout: float = 180.0) -> Any:
        self.send(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
        )
        return self.answer(request_id, timeout)

    def initialize(self) -> None:
        assert "result" in self.request("init", "initialize", INITIALIZE, timeout=300)
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def call(self, request_id: Any, tool: str, args: dict[str, Any], **meta: Any) -> dict[str, Any]:
        """A tools/call's JSON payload; fails the test on any error."""
        params: dict[str, Any] = {"name": tool, "arguments": args}
        if meta:
            params["_meta"] = meta
        answer = self.request(request_id, "tools/call", params)
        assert "result" in answer and not answer["result"].get("isError"), answer
        payload: dict[str, Any] = json.loads(answer["result"]["content"][0]["text"])
        return payload

    def close(self) -> int:
        """Close stdin (the client leaves) and the exit code of the session's process."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        finally:
            self._log.close()
