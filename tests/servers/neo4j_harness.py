"""A real Neo4j for the tests: the Neo4j 5.26 LTS test harness, in-process in a small Java launcher.

``make install`` builds ``tests/servers/neo4j`` once (Maven: the launcher jar and every jar it
needs in ``target/lib``); after that, starting it needs no network, only Java 17+. The launcher
binds Bolt to 127.0.0.1 on a free port, auth off, data in a temp directory it removes, and prints
``BOLT bolt://127.0.0.1:PORT`` when ready; it stops when its stdin closes, so a killed test run
does not leave it behind.

Register it with ``pytest_plugins = ["tests.servers.neo4j_harness"]``; then ``neo4j_uri`` is a
session fixture: ``MEMORY_TEST_NEO4J_URI`` (a server you run, e.g. ``docker compose up neo4j``;
``MEMORY_TEST_NEO4J_USER`` / ``MEMORY_TEST_NEO4J_PASSWORD`` for its auth) or a harness started
here. Without the built launcher (or Java) the Neo4j tests fail in CI and are skipped locally.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import missing

PROJECT = Path(__file__).resolve().parent / "neo4j"
TARGET = PROJECT / "target"
JAR = TARGET / "neo4j-harness-launcher.jar"
LIB = TARGET / "lib"
JVM_OPTIONS = ("-Xms128m", "-Xmx1g", "-XX:+UseSerialGC")
INSTALL_HINT = (
    f"the Neo4j test harness is not built ({JAR.relative_to(PROJECT.parents[2])} and target/lib): run "
    "`make install` (needs Java 17+ and Maven), or set MEMORY_TEST_NEO4J_URI=bolt://host:7687 to use a "
    "server you run"
)


def launcher_command(port: int = 0) -> list[str] | None:
    """The command that starts the harness, or None when Java or the built launcher is missing."""
    java = shutil.which("java")
    if java is None or not JAR.is_file() or not any(LIB.glob("*.jar")):
        return None
    return [java, *JVM_OPTIONS, "-cp", f"{JAR}{os.pathsep}{LIB / '*'}", "Launcher", str(port)]


class Neo4jHarness:
    """One launcher process; ``uri`` is its Bolt address once :meth:`start` returns."""

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self.uri = ""
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None

    def start(self, *, timeout: float = 120.0) -> str:
        """Start the launcher and wait for its BOLT line; on failure, raise with its stderr."""
        # Kept open until stop(): the launcher writes to it, stop() reads its tail.
        self._stderr = tempfile.TemporaryFile("w+", prefix="neo4j-harness-", suffix=".err")  # noqa: SIM115
        self._proc = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True
        )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(self._proc.stdout, lines), daemon=True).start()
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:  # stdout closed: the launcher is exiting
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(timeout=10)
                break
            if line.startswith("BOLT "):
                self.uri = line.split()[1]
                return self.uri
        code = self._proc.poll()
        err = self.stop(timeout=0)  # not started: stdin is not read yet, so SIGTERM at once
        state = f"exited with status {code}" if code is not None else f"not ready after {timeout:.0f} s"
        raise RuntimeError(f"Neo4j harness {state}: {' '.join(self.command)}\n--- stderr ---\n{err}")

    def pin_port(self) -> None:
        """Make the next :meth:`start` bind the port this run got (a test that stops the server
        and starts it again, as an outage would). The launcher removes its data directory on
        exit, so the server comes back with an empty graph."""
        self.command = [*self.command[:-1], self.uri.rsplit(":", 1)[1]]

    def stop(self, *, timeout: float = 30.0) -> str:
        """Close stdin (the launcher's signal to shut down), SIGTERM after ``timeout`` seconds,
        SIGKILL 10 s later; returns the tail of its stderr."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        tail = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            tail = self._stderr.read()[-4000:]
            self._stderr.close()
            self._stderr = None
        return tail


def _pump(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
    """Lines of the launcher's stdout into ``lines``; None at the end."""
    if stream is not None:
        for line in stream:
            lines.put(line.strip())
    lines.put(None)


@pytest.fixture(scope="session")
def neo4j_uri() -> Iterator[str]:
    """A Neo4j server's Bolt URI for the session: ``MEMORY_TEST_NEO4J_URI`` or a harness started here.

    Tests share the server (Neo4j Community has one user database): each one starts by emptying it.
    """
    if uri := os.environ.get("MEMORY_TEST_NEO4J_URI"):
        yield uri
        return
    command = launcher_command()
    if command is None:
        missing(INSTALL_HINT)
    harness = Neo4jHarness(command)
    harness.start()
    try:
        yield harness.uri
    finally:
        harness.stop()
