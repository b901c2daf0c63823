"""A real ``redis-server`` for the tests, started on a free loopback port in a temporary directory.

Register it with ``pytest_plugins = ["tests.servers.redis_server"]``; then ``redis_url`` (one
server per session) and ``redis_servers`` (servers a test starts, kills and restarts itself, e.g.
with AOF for a durability test) are fixtures. ``MEMORY_TEST_REDIS_URL`` makes ``redis_url`` use a
server you run instead; tests keep to their own key prefixes, so a shared server is fine.

``redis-server`` comes from the system: Debian's ``redis-server`` package (``.ci/run`` installs
it in CI). Without it the Redis tests fail in CI and are skipped locally (``tests.conftest.missing``).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import missing

INSTALL_HINT = (
    "redis-server is not installed: `sudo apt-get install -y redis-server` (Debian/Ubuntu; .ci/run "
    "does this in CI), `brew install redis` (macOS), or set MEMORY_TEST_REDIS_URL=redis://host:port/0 "
    "to use a server you run"
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process: no RDB snapshots; AOF with an fsync per write when asked."""

    def __init__(self, workdir: Path, *, appendonly: bool = False) -> None:
        self.workdir = workdir
        self.appendonly = appendonly
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _command(self, binary: str) -> list[str]:
        aof = (
            ["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly else ["--appendonly", "no"]
        )
        return [
            binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *aof,
            "--dir", str(self.workdir), "--logfile", "redis.log", "--daemonize", "no",
        ]  # fmt: skip

    def start(self, *, timeout: float = 20.0) -> None:
        """Start on a free port (the same one again after a kill/stop); wait until it answers PING."""
        binary = shutil.which("redis-server")
        if binary is None:
            missing(INSTALL_HINT)
        self.workdir.mkdir(parents=True, exist_ok=True)
        for _ in range(3):  # another process may take the free port before the server binds it
            self.port = self.port or free_port()
            self._proc = subprocess.Popen(self._command(binary), cwd=self.workdir, stdout=subprocess.DEVNULL)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self._proc.poll() is None:
                if _answers_ping(self.port):
                    return
                time.sleep(0.02)
            self.kill()
            self.port = 0
        log = self.workdir / "redis.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(f"redis-server did not start in {self.workdir}:\n{tail}")

    def kill(self) -> None:
        """SIGKILL, as a crash or power cut would stop it."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGKILL)
        if self._proc is not None:
            self._proc.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), SIGKILL after 10 s."""
        if self._proc is None or self._proc.poll() is not None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis server's URL for the session: ``MEMORY_TEST_REDIS_URL`` or one started here."""
    if url := os.environ.get("MEMORY_TEST_REDIS_URL"):
        yield url
        return
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def redis_servers(tmp_path: Path) -> Iterator[list[RedisServer]]:
    """Servers a test starts itself (append ``RedisServer(dir)`` and call ``start()``); all are
    stopped when the test ends."""
    servers: list[RedisServer] = []
    yield servers
    for server in servers:
        server.stop()
