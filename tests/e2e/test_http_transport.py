"""MCP over streamable HTTP (issue 13): the real server behind its bearer-token, Origin and Host
checks, driven by the SDK's streamable HTTP client; and ``memory-service serve --http``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import SecretStr

from memory_service.core.errors import ServiceUnavailableError, ValidationError
from memory_service.server import ServerState, build_server
from memory_service.settings import ServerSettings, Settings
from memory_service.stores.owner_lock import read_owner
from memory_service.tools import ALL_TOOLS
from memory_service.transport.http import (
    check_bind,
    http_app,
    is_loopback,
    parse_bind,
    read_token,
    serve_http,
)
from memory_service.transport.http_serve import GRACEFUL_SHUTDOWN_S
from tests.conftest import NOT_APPLICABLE, PROFILE, REPO, require_model, server_env
from tests.e2e.conftest import call_error, call_ok, make_settings

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    # The server-profile run repeats e2e for the store adapters; this does not depend on them.
    pytest.mark.skipif(
        PROFILE == "server",
        reason=f"{NOT_APPLICABLE} the HTTP transport does not depend on the store backends",
    ),
]

TOKEN = "test-token-0123456789-abcdefghij"
TEAM_ORIGIN = "https://team.example"
LAN_HOST = "192.0.2.7"  # TEST-NET-1: never this machine's address, so only the Host header says it
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "http-transport-test", "version": "0"},
    },
}


@dataclass
class Served:
    """Three apps on loopback ports: ``url`` is the real one (stores, model, token); ``wildcard``
    and ``lan`` carry the policies of a ``0.0.0.0`` and a LAN-address bind, with no stores behind."""

    url: str
    wildcard: str
    lan: str
    data_dir: Path


@pytest.fixture(scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    settings = make_settings(tmp_path_factory.mktemp("http"), require_model())
    async with anyio.create_task_group() as tg:

        async def start(server: Any, host: str, **extra: Any) -> str:
            app = http_app(server, host=host, port=0, token=TOKEN, **extra)
            port = await tg.start(serve_http, app, "127.0.0.1", 0)
            return f"http://127.0.0.1:{port}/mcp"

        url = await start(build_server(settings), "127.0.0.1")
        policy_only = ServerState()  # the daemon's shape with nothing opened: enough for initialize
        wildcard = await start(
            build_server(settings, shared=policy_only), "0.0.0.0", allowed_origins=[TEAM_ORIGIN]
        )
        lan = await start(build_server(settings, shared=policy_only), LAN_HOST)
        yield Served(url, wildcard, lan, settings.resolved_data_dir)
        tg.cancel_scope.cancel()


@asynccontextmanager
async def mcp_client(url: str, token: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending the bearer token as Claude Code would.

    ``auto`` speaks the per-request 2026 protocol; ``legacy`` the 2025 handshake, with a session
    id and a standing event stream (what most clients use today).
    """
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


async def post_initialize(url: str, headers: dict[str, str], token: str | None = TOKEN) -> httpx2.Response:
    """One raw ``initialize`` POST, with exactly the headers a test wants to try."""
    sent = {"Accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=INITIALIZE, headers=sent)


def refused(response: httpx2.Response, status: int, code: str) -> dict[str, Any]:
    """The seed-001 envelope of a refused request, checked."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == "error"
    assert body["error"]["code"] == code
    assert body["error"]["message"] and body["error"]["suggestion"]
    assert "details" in body["error"]
    return dict(body["error"])


def accepted(response: httpx2.Response) -> None:
    assert response.status_code == 200, response.text
    assert "serverInfo" in response.text


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


# --- the MCP flow over HTTP -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tools_work_over_http_and_sessions_share_the_stores(served: Served, mode: str) -> None:
    async with mcp_client(served.url, TOKEN, mode) as first, mcp_client(served.url, TOKEN, mode) as second:
        names = {tool.name for tool in (await first.list_tools()).tools}
        assert names == {spec.name for spec in ALL_TOOLS}
        assert len(names) == 27
        added = await call_ok(
            first,
            "memory_add",
            {
                "type": "design",
                "content": f"Invoices ({mode}) are rendered to PDF by a queue worker, never inline.",
            },
        )
        # Another HTTP session, open at the same time, reads the same stores (one lifespan).
        found = await call_ok(
            second, "memory_search", {"query": "how are invoice PDFs produced?", "limit": 3}
        )
        assert added["memory_id"] in [r["memory_id"] for r in found["results"]]
        error = await call_error(second, "memory_search", {"query": ""})
        assert error["code"] == "VAL_EMPTY"
        # Larger than the SDK's default body limit (4 MiB), as a full memory_bulk_add can be: the
        # request reaches the tool, whose own limit answers.
        error = await call_error(first, "memory_search", {"query": "big " * 1_500_000})
        assert error["code"] == "VAL_TOO_LONG"
    assert read_owner(served.data_dir) == os.getpid()  # sessions ended; the app still holds the stores


# --- bearer token -----------------------------------------------------------------------------


async def test_a_token_is_required_when_set_even_on_loopback(served: Served) -> None:
    missing = await post_initialize(served.url, {}, token=None)
    refused(missing, 401, "AUTH_TOKEN_MISSING")
    assert missing.headers["WWW-Authenticate"].startswith("Bearer ")
    wrong = await post_initialize(served.url, {}, token=TOKEN[:-1] + "X")
    refused(wrong, 401, "AUTH_TOKEN_INVALID")
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
    refused(
        await post_initialize(served.url, {"Authorization": "Basic dXNlcjpwYXNz"}, None),
        401,
        "AUTH_TOKEN_MISSING",
    )
    accepted(await post_initialize(served.url, {"Authorization": f"bearer {TOKEN}"}, None))


async def test_the_sdk_client_with_a_wrong_token_cannot_connect(served: Served) -> None:
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    headers = {"Authorization": "Bearer not-the-token-0123456789"}
    async with httpx2.AsyncClient(headers=headers, event_hooks={"response": [record]}) as http:
        with pytest.raises(ExceptionGroup) as caught:  # the SDK's task groups wrap its MCPError
            async with Client(streamable_http_client(served.url, http_client=http)):
                pass
    assert caught.value.subgroup(MCPError) is not None, caught.value
    assert statuses and set(statuses) == {401}


def test_check_bind_refuses_exposed_binds_without_a_token() -> None:
    for host in ("0.0.0.0", "::", "192.168.1.20", "build-box.lan"):
        with pytest.raises(ValidationError) as caught:
            check_bind(host, None)
        assert caught.value.code == "CFG_HTTP_TOKEN_REQUIRED"
        assert "MEMORY_SERVER__MCP_TOKEN" in caught.value.suggestion
        assert "--token-file" in caught.value.suggestion
        check_bind(host, TOKEN)
    for host in ("127.0.0.1", "localhost", "::1"):
        check_bind(host, None)


@pytest.mark.parametrize("token", ["short-token", "fifteen-chars!!", "has a space in it 0123"])
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_check_bind_refuses_weak_tokens(host: str, token: str) -> None:
    with pytest.raises(ValidationError) as caught:
        check_bind(host, token)
    assert caught.value.code == "CFG_HTTP_TOKEN"
    assert token not in caught.value.message  # a secret never appears in an error


# --- Origin and Host (DNS rebinding) ------------------------------------------------------------


async def test_foreign_origins_are_refused_on_loopback(served: Served) -> None:
    refused(await post_initialize(served.url, {"Origin": "http://evil.example"}), 403, "AUTH_ORIGIN")
    refused(await post_initialize(served.url, {"Origin": "null"}), 403, "AUTH_ORIGIN")
    refused(
        await post_initialize(served.url, {"Origin": "http://localhost.evil.example:80"}), 403, "AUTH_ORIGIN"
    )
    accepted(await post_initialize(served.url, {"Origin": "http://localhost:6274"}))
    accepted(await post_initialize(served.url, {}))


async def test_a_foreign_host_is_refused_on_loopback(served: Served) -> None:
    port = port_of(served.url)
    error = refused(
        await post_initialize(served.url, {"Host": f"rebound.evil.example:{port}"}), 403, "AUTH_HOST"
    )
    assert error["details"]["provided"] == f"rebound.evil.example:{port}"
    refused(await post_initialize(served.url, {"Host": f"{LAN_HOST}:{port}"}), 403, "AUTH_HOST")
    accepted(await post_initialize(served.url, {"Host": f"localhost:{port}"}))
    accepted(await post_initialize(served.url, {"Host": f"[::1]:{port}"}))


async def test_a_wildcard_bind_takes_any_host_but_no_browser_origin(served: Served) -> None:
    port = port_of(served.wildcard)
    accepted(await post_initialize(served.wildcard, {"Host": f"build-box.lan:{port}"}))
    refused(await post_initialize(served.wildcard, {"Origin": "http://localhost:6274"}), 403, "AUTH_ORIGIN")
    accepted(await post_initialize(served.wildcard, {"Origin": TEAM_ORIGIN}))
    refused(await post_initialize(served.wildcard, {}, token=None), 401, "AUTH_TOKEN_MISSING")


async def test_a_lan_bind_takes_only_its_own_host(served: Served) -> None:
    port = port_of(served.lan)
    accepted(await post_initialize(served.lan, {"Host": f"{LAN_HOST}:{port}"}))
    refused(await post_initialize(served.lan, {"Host": f"127.0.0.1:{port}"}), 403, "AUTH_HOST")
    refused(
        await post_initialize(served.lan, {"Host": f"{LAN_HOST}:{port}", "Origin": TEAM_ORIGIN}),
        403,
        "AUTH_ORIGIN",
    )


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("0.0.0.0:0", ("0.0.0.0", 0)),
        ("[::1]:8765", ("::1", 8765)),
        ("[::]:80", ("::", 80)),
        ("build-box.lan:9000", ("build-box.lan", 9000)),
        (":8765", ("127.0.0.1", 8765)),
        ("8765", ("127.0.0.1", 8765)),
        (" localhost:65535 ", ("localhost", 65535)),
    ],
)
def test_parse_bind_accepts(text: str, expected: tuple[str, int]) -> None:
    assert parse_bind(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "localhost",
        "host:",
        "host:65536",
        "host:-1",
        "::1:8765",
        "[::1]",
        "[localhost]:80",
        "a b:80",
        "999.1.1.1:80",
    ],
)
def test_parse_bind_refuses(text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_bind(text)
    assert caught.value.code == "CFG_HTTP_BIND"
    assert "HOST:PORT" in caught.value.suggestion


def test_is_loopback() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.3.2.1", "localhost", "::1", "::ffff:127.0.0.1"]))
    assert not any(
        map(is_loopback, ["0.0.0.0", "::", "192.168.1.20", "example.com", "localhost.evil.example"])
    )


def test_read_token_from_file_env_or_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = make_settings(tmp_path, None)
    assert read_token(base, None) is None
    from_env = base.model_copy(
        update={"server": ServerSettings(http_port=0, mcp_token=SecretStr(f" {TOKEN}\n"))}
    )
    assert read_token(from_env, None) == TOKEN
    token_file = tmp_path / "token"
    token_file.write_text("file-token-0123456789abcdef\n")
    assert read_token(from_env, str(token_file)) == "file-token-0123456789abcdef"  # the file wins
    monkeypatch.setenv("MEMORY_SERVER__MCP_TOKEN", TOKEN)  # the documented variable name
    assert read_token(Settings(data_dir=tmp_path / "data", project_root=tmp_path), None) == TOKEN


def test_read_token_refuses_a_missing_or_empty_file(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, None)
    with pytest.raises(ValidationError) as caught:
        read_token(settings, str(tmp_path / "absent"))
    assert caught.value.code == "CFG_TOKEN_FILE"
    assert "absent" in caught.value.message and "No such file" in caught.value.message
    (tmp_path / "blank").write_text("  \n")
    with pytest.raises(ValidationError) as caught:
        read_token(settings, str(tmp_path / "blank"))
    assert caught.value.code == "CFG_TOKEN_FILE"
    assert "empty" in caught.value.message


# --- serving ------------------------------------------------------------------------------------


async def test_a_taken_port_is_a_readable_error(tmp_path: Path) -> None:
    app = http_app(
        build_server(make_settings(tmp_path, None), shared=ServerState()),
        host="127.0.0.1",
        port=0,
        token=None,
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(ServiceUnavailableError) as caught:
            await serve_http(app, "127.0.0.1", taken.getsockname()[1])
    assert caught.value.code == "SVC_HTTP_BIND"
    assert "in use" in caught.value.message


async def test_cancelling_stops_the_server_and_closes_the_stores(tmp_path: Path) -> None:
    """The lifespan opens the stores once for the app; cancelling serve_http ends it. A connected
    client's standing event stream is ended at once: the shutdown need not wait out its grace."""
    settings = make_settings(tmp_path, None)
    app = http_app(build_server(settings), host="127.0.0.1", port=0, token=None)
    server_scope, stopped = anyio.CancelScope(), anyio.Event()

    async def run_server(*, task_status: anyio.abc.TaskStatus[int]) -> None:
        with server_scope:
            await serve_http(app, "127.0.0.1", 0, task_status=task_status)
        stopped.set()

    async with anyio.create_task_group() as tg:
        port = await tg.start(run_server)
        assert read_owner(settings.resolved_data_dir) == os.getpid()
        async with mcp_client(f"http://127.0.0.1:{port}/mcp", None, "legacy") as client:
            await call_ok(client, "memory_add", {"type": "session", "content": "Cancelled while connected."})
            started = time.monotonic()
            server_scope.cancel()
            with anyio.fail_after(GRACEFUL_SHUTDOWN_S + 10):
                await stopped.wait()
            assert time.monotonic() - started < GRACEFUL_SHUTDOWN_S  # no request was left to wait for
            assert read_owner(settings.resolved_data_dir) is None  # the lifespan closed the stores
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


# --- subprocess: `memory-service serve --http` (needs memory_service.daemon.service.run_daemon) ---


@contextmanager
def serve_process(args: list[str], env: dict[str, str], tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memory_service", "serve", *args],
            env=env,
            cwd=REPO,
            stdout=stdout,
            stderr=stderr,
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def announced_url(proc: subprocess.Popen[bytes], stderr: Path, timeout: float = 120) -> str:
    """The URL from the one log line serve_http writes once it listens."""
    deadline = time.monotonic() + timeout
    while True:
        for line in stderr.read_text(errors="replace").splitlines():
            if "MCP streamable HTTP at " in line:
                return line.split("MCP streamable HTTP at ", 1)[1].strip()
        assert proc.poll() is None, f"serve exited with {proc.returncode}:\n{stderr.read_text()}"
        assert time.monotonic() < deadline, f"no 'MCP streamable HTTP at' line:\n{stderr.read_text()}"
        await anyio.sleep(0.05)


@pytest.mark.slow
async def test_serve_http_subprocess_serves_mcp_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`serve --http` on loopback needs no token; SIGTERM with a client still connected (its event
    stream open) stops it at once and cleanly: exit 0, no error logged, nothing on stdout."""
    env = server_env(tmp_path / "data", model=require_model())
    with serve_process(["--http", "127.0.0.1:0"], env, tmp_path) as proc:
        url = await announced_url(proc, tmp_path / "stderr.log")
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        refused(await post_initialize(url, {"Origin": "http://evil.example"}, None), 403, "AUTH_ORIGIN")
        async with mcp_client(url, None, "legacy") as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == {s.name for s in ALL_TOOLS}
            added = await call_ok(client, "memory_add", {"type": "design", "content": "Served over HTTP."})
            got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
            assert got["memory"]["content"] == "Served over HTTP."
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            code = await anyio.to_thread.run_sync(lambda: proc.wait(60))
            assert time.monotonic() - started < GRACEFUL_SHUTDOWN_S
        stderr = (tmp_path / "stderr.log").read_text()
        assert code == 0, stderr
        assert "Traceback" not in stderr and " ERROR " not in stderr, stderr
    assert (tmp_path / "stdout.log").read_bytes() == b""  # no access log, no banner on stdout


@pytest.mark.slow
def test_serve_http_subprocess_refuses_an_exposed_bind_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memory_service", "serve", "--http", "0.0.0.0:0"],
        env=server_env(tmp_path / "data", model=None),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "MEMORY_SERVER__MCP_TOKEN" in lines[0]
    assert "Traceback" not in done.stderr
    assert read_owner(tmp_path / "data") is None  # refused before opening anything


@pytest.mark.slow
def test_serve_http_subprocess_refuses_a_taken_port_before_opening_anything(tmp_path: Path) -> None:
    """A taken --http port is a one-line error before the stores open and the model loads."""
    data = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "memory_service", "serve", "--http", f"127.0.0.1:{port}"],
            env=server_env(data, model=require_model()),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0] and "Choose a free port" in lines[0], (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    assert read_owner(data) is None
    assert not data.exists() or not any(data.iterdir()), sorted(p.name for p in data.iterdir())  # no stores
