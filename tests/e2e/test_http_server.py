"""The HTTP side server: health, readiness, Prometheus metrics and /stats from a real server, and
memory-cli health/stats asking the running server instead of refusing with "in use"."""

from __future__ import annotations

import http.client
import json
import logging
import os
import shutil
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from prometheus_client.parser import text_string_to_metric_families

from memory_service import __version__
from memory_service.observability.discovery import HTTP_FILENAME, running_server
from memory_service.server import build_server
from memory_service.settings import ServerSettings, Settings
from tests.conftest import PROFILE, REPO, daemon_gone, require_model, server_env
from tests.e2e.conftest import call_error, call_ok, make_settings
from tests.e2e.test_cli import _cli
from tests.unit.observability.test_metric_names import EXPECTED

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
STORES = {"vectors", "graph", "cache", "queue", "embedding"}


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


async def _get_json(url: str) -> tuple[int, dict[str, Any]]:
    status, body = await anyio.to_thread.run_sync(_get, url)
    return status, json.loads(body)


async def _scrape(url: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """/metrics parsed: family -> {sorted labels (with the sample name) -> value}."""
    status, text = await anyio.to_thread.run_sync(_get, f"{url}/metrics")
    assert status == 200
    return {
        family.name: {
            tuple(sorted({**s.labels, "__name__": s.name}.items())): s.value for s in family.samples
        }
        for family in text_string_to_metric_families(text)
    }


def _value(families: dict[str, Any], name: str, sample: str | None = None, **labels: str) -> float:
    """The sum of a family's samples that carry ``labels`` (and the sample name, e.g. ``_count``)."""
    total = 0.0
    for key, value in families.get(name, {}).items():
        have = dict(key)
        if have["__name__"] == (sample or have["__name__"]) and all(
            have.get(k) == v for k, v in labels.items()
        ):
            total += value
    return total


async def _until(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Poll an async check until it returns something truthy (scrape-time gauges are cached 5 s)."""
    deadline = time.monotonic() + timeout
    while True:
        result = await check()
        if result or time.monotonic() > deadline:
            return result
        await anyio.sleep(0.5)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _refused(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


async def test_endpoints_answer_and_metrics_move_with_tool_calls(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    shutil.copy(REPO / "tests" / "fixtures" / "languages" / "sample.py", tmp_path / "src" / "sample.py")
    settings = make_settings(tmp_path, require_model())
    data_dir = settings.resolved_data_dir
    async with Client(build_server(settings)) as client:
        url = running_server(data_dir)
        assert url is not None and url.startswith("http://127.0.0.1:")  # loopback by default
        status, live = await _get_json(f"{url}/health/live")
        assert status == 200 and live["pid"] == os.getpid()
        before = await _scrape(url)
        assert set(before) == set(EXPECTED)  # every family from the first scrape, counts at zero

        a = await call_ok(client, "memory_add", {"type": "design", "content": "Serve metrics on loopback."})
        await call_ok(client, "memory_add", {"type": "requirements", "content": "Scrapes must stay cheap."})
        await call_ok(client, "memory_search", {"query": "metrics on loopback", "limit": 5})
        await call_error(client, "memory_get", {"memory_id": "not-a-uuid"})
        job = await call_ok(client, "index_directory", {"directory_path": "src", "wait": True})
        assert job["job"]["status"] == "completed", job
        after = await _scrape(url)

        calls = "memory_service_tool_calls"
        assert (
            _value(after, calls, tool="memory_add", outcome="ok", code="")
            - _value(before, calls, tool="memory_add")
            == 2
        )
        assert _value(after, calls, tool="memory_get", outcome="error", code="VAL_INVALID_UUID") == 1
        duration = "memory_service_tool_duration_seconds"
        assert _value(after, duration, f"{duration}_count", tool="memory_add") == 2
        assert _value(after, duration, f"{duration}_sum", tool="memory_search") > 0
        store = "memory_service_store_operation_duration_seconds"
        assert _value(after, store, f"{store}_count", store="vectors", operation="upsert") >= 2
        assert _value(after, store, f"{store}_count", store="vectors", operation="search_dense") >= 1
        assert _value(after, store, f"{store}_count", store="cache") > 0
        assert _value(after, store, f"{store}_count", store="graph") > 0
        assert _value(after, "memory_service_store_errors") == 0
        embed, batch = "memory_service_embed_duration_seconds", "memory_service_embed_batch_size"
        assert _value(after, embed, f"{embed}_count", kind="query") >= 1
        assert _value(after, embed, f"{embed}_count", kind="documents") >= 2
        texts = _value(after, batch, f"{batch}_sum", kind="documents")
        assert texts >= _value(after, batch, f"{batch}_count", kind="documents") >= 2
        hits = _value(after, "memory_service_cache_requests", result="hit")
        misses = _value(after, "memory_service_cache_requests", result="miss")
        assert hits + misses > 0
        assert _value(after, "memory_service_cache_hit_ratio") == pytest.approx(hits / (hits + misses))
        assert _value(after, "memory_service_jobs", kind="index_directory", status="completed") == 1
        assert _value(after, "memory_service_job_progress_ratio", kind="index_directory") == 1.0
        assert _value(after, "memory_service_build_info", version=__version__) == 1

        status, ready = await _get_json(f"{url}/health/ready")
        assert status == 200 and ready["ready"] is True and ready["status"] in ("ok", "degraded")
        backends = {c["component"]: c["backend"] for c in ready["components"]}
        assert set(backends) >= STORES and all(c["state"] != "unavailable" for c in ready["components"])
        if PROFILE == "embedded":
            assert (backends["vectors"], backends["graph"], backends["cache"]) == (
                "qdrant-edge",
                "ladybug",
                "sqlite",
            )
        assert set(ready["sync"]) >= {"pending", "inflight", "failed"}
        for name, backend in backends.items():  # store_up agrees with readiness, labelled by backend
            assert _value(after, "memory_service_store_up", store=name, backend=backend) in (0.5, 1.0)
        queue = {dict(k)["state"]: v for k, v in after["memory_service_sync_queue_messages"].items()}
        assert set(queue) == {"pending", "inflight", "dead"} and queue["dead"] == 0

        memories = "memory_service_memories"

        async def counted(expected: dict[tuple[str, str], float]) -> bool:
            """Memory counts are read from the store at scrape time and kept a few seconds."""
            now = await _scrape(url)
            return all(_value(now, memories, type=t, status=s) == n for (t, s), n in expected.items())

        assert await _until(lambda: counted({("design", "active"): 1, ("requirements", "active"): 1}))
        await call_ok(client, "memory_delete", {"memory_id": a["memory_id"]})
        assert await _until(lambda: counted({("design", "active"): 0, ("design", "deleted"): 1}))

        status, stats = await _get_json(f"{url}/stats")
        tool = await call_ok(client, "memory_statistics", {})
        assert status == 200 and set(stats) == set(tool)  # the same answer as the tool
        assert stats["memories"]["by_type"] == {"requirements": 1}
        assert stats["performance"]["tools"]["memory_add"]["calls"] == 2  # this server's live counters
        status, missing = await _get_json(f"{url}/nope")
        assert status == 404 and "/metrics" in missing["endpoints"]
    assert not (data_dir / HTTP_FILENAME).exists()  # withdrawn on a clean exit
    port = int(url.rsplit(":", 1)[1])
    assert _refused(port)


async def test_ready_is_503_while_a_component_is_unavailable(tmp_path: Path) -> None:
    """No model: the server still answers (lexically), but it is not ready; live stays 200."""
    settings = make_settings(tmp_path, None)
    async with Client(build_server(settings)) as client:
        url = running_server(settings.resolved_data_dir)
        assert url is not None

        async def settled() -> tuple[int, dict[str, Any]] | None:
            status, body = await _get_json(f"{url}/health/ready")
            model = next(c for c in body["components"] if c["component"] == "embedding")
            return (status, body) if model["state"] != "degraded" else None

        answer = await _until(settled)
        assert answer is not None
        status, ready = answer
        model = next(c for c in ready["components"] if c["component"] == "embedding")
        assert status == 503 and ready["ready"] is False and ready["status"] == "unavailable"
        assert model["state"] == "unavailable" and model["detail"]
        assert (await _get_json(f"{url}/health/live"))[0] == 200
        metrics = await _scrape(url)
        assert _value(metrics, "memory_service_store_up", store="embedding") == 0
        assert _value(metrics, "memory_service_store_up", store="vectors") == 1
        await call_ok(client, "memory_add", {"type": "design", "content": "Stored without a model."})


async def test_http_off_opens_no_port_and_a_taken_port_does_not_stop_the_server(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = _free_port()
    off = _with_server(make_settings(tmp_path / "off", require_model()), http_enabled=False, http_port=port)
    async with Client(build_server(off)) as client:
        await call_ok(client, "memory_add", {"type": "design", "content": "No HTTP here."})
        assert _refused(port) and not (off.resolved_data_dir / HTTP_FILENAME).exists()

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = _with_server(
            make_settings(tmp_path / "busy", require_model()), http_port=taken.getsockname()[1]
        )
        with caplog.at_level(logging.WARNING, logger="memory_service.observability.http_server"):
            async with Client(build_server(busy)) as client:
                await call_ok(client, "memory_add", {"type": "design", "content": "The port was taken."})
                assert running_server(busy.resolved_data_dir) is None
        assert "HTTP side server not started" in caplog.text

    quiet = _with_server(make_settings(tmp_path / "quiet", require_model()), metrics_enabled=False)
    async with Client(build_server(quiet)) as client:
        url = running_server(quiet.resolved_data_dir)
        assert url is not None
        assert (await anyio.to_thread.run_sync(_get, f"{url}/metrics"))[0] == 404
        assert (await _get_json(f"{url}/health/ready"))[0] in (200, 503)
        await call_ok(client, "memory_add", {"type": "design", "content": "Metrics off."})


def _with_server(settings: Settings, **server: Any) -> Settings:
    return settings.model_copy(update={"server": ServerSettings(**{"http_port": 0, **server})})


async def test_memory_cli_asks_the_running_server_then_opens_the_stores(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=require_model())
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO)
    )
    async with Client(params) as client:
        for body in (
            {"type": "design", "content": "Ask the server."},
            {"type": "session", "content": "Read it."},
        ):
            await call_ok(client, "memory_add", body)
        health = await anyio.to_thread.run_sync(lambda: _cli("health", "--json", env=env))
        assert health.returncode == 0, health.stdout + health.stderr
        report = json.loads(health.stdout)
        assert set(report) == {"healthy", "components", "sync"} and report["healthy"] is True
        assert {c["component"] for c in report["components"]} >= STORES
        assert set(report["components"][0]) == {"component", "state", "backend", "detail"}
        stats = await anyio.to_thread.run_sync(lambda: _cli("--json", "stats", env=env))
        assert stats.returncode == 0, stats.stderr
        live = json.loads(stats.stdout)
        assert live["memories"]["total"] == 2
        assert live["performance"]["tools"]["memory_add"]["calls"] == 2  # the server's own counters
        table = await anyio.to_thread.run_sync(lambda: _cli("stats", env={**env, "COLUMNS": "200"}))
        assert table.returncode == 0 and "memories" in table.stdout

    data_dir = tmp_path / "data"
    daemon_gone(data_dir)  # the daemon (and its side server) leaves 1 s after the session
    assert not (data_dir / HTTP_FILENAME).exists()
    # A file left by a killed server (dead pid, closed port) is ignored: the CLI opens the stores.
    (data_dir / HTTP_FILENAME).write_text(
        json.dumps({"pid": 2**22 + 7, "url": f"http://127.0.0.1:{_free_port()}"})
    )
    direct = _cli("stats", "--json", env=env)
    assert direct.returncode == 0, direct.stderr
    figures = json.loads(direct.stdout)
    assert set(figures) == set(live) and set(figures["performance"]) == set(live["performance"])
    assert figures["memories"] == live["memories"] and figures["performance"]["tools"] == {}
    offline = _cli("health", "--json", env=env)
    assert offline.returncode == 0 and set(json.loads(offline.stdout)) == set(report)


def _get_with(url: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """GET with these headers as sent (http.client, so Host is ours, not the URL's)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest("GET", path, skip_host="Host" in headers)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


async def test_side_server_refuses_a_foreign_host_or_origin_like_the_mcp_endpoint(tmp_path: Path) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: /stats must not answer it."""
    settings = make_settings(tmp_path, require_model())
    async with Client(build_server(settings)) as client:
        await call_ok(client, "memory_add", {"type": "design", "content": "Stats stay on this machine."})
        url = running_server(settings.resolved_data_dir)
        assert url is not None
        port = url.rsplit(":", 1)[1]
        for path in ("/stats", "/health/live", "/metrics"):
            status, body = await anyio.to_thread.run_sync(
                _get_with, url, path, {"Host": f"evil.example:{port}"}
            )
            assert status == 403 and body["error"]["code"] == "AUTH_HOST", (path, body)
            assert str(settings.resolved_data_dir) not in json.dumps(body)
        status, body = await anyio.to_thread.run_sync(
            _get_with, url, "/stats", {"Origin": "http://evil.example"}
        )
        assert status == 403 and body["error"]["code"] == "AUTH_ORIGIN"
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            status, body = await anyio.to_thread.run_sync(_get_with, url, "/stats", {"Host": host})
            assert status == 200 and body["memories"]["total"] == 1
        status, _ = await anyio.to_thread.run_sync(
            _get_with, url, "/health/live", {"Origin": f"http://localhost:{port}"}
        )
        assert status == 200
