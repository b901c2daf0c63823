"""The real server as a subprocess (``python -m memory_service``), driven by the SDK's stdio client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from memory_service.tools import ALL_TOOLS
from tests.conftest import INITIALIZE_LINE, REPO, daemon_gone, require_model, server_env
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _params(data_dir: Path, model: Path | None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_service"],
        env=server_env(data_dir, model=model),
        cwd=str(REPO),
    )


async def test_every_tool_over_stdio_and_data_survives_restart(tmp_path: Path) -> None:
    model = require_model()
    params = _params(tmp_path / "data", model)
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {spec.name for spec in ALL_TOOLS}
        req = await call_ok(
            client, "memory_add", {"type": "requirements", "content": "Orders over 1000 EUR need approval."}
        )
        design = await call_ok(
            client,
            "memory_add",
            {
                "type": "design",
                "content": "An approval workflow service gates large orders before payment capture.",
                "relationships": [{"type": "IMPLEMENTS", "target_id": req["memory_id"]}],
            },
        )
        bulk = await call_ok(
            client,
            "memory_bulk_add",
            {
                "memories": [
                    {"type": "user_preference", "content": "Use pytest, never unittest."},
                    {"type": "session", "content": "Refactored the approval workflow into its own module."},
                ]
            },
        )
        assert bulk["created"] == 2
        upd = await call_ok(
            client,
            "memory_update",
            {"memory_id": bulk["memory_ids"][0], "metadata": {"key": "test_framework"}},
        )
        assert upd["updated_fields"] == ["metadata.key"]
        gone = await call_ok(client, "memory_delete", {"memory_id": bulk["memory_ids"][1]})
        assert gone["status"] == "deleted"
        err = await call_error(client, "memory_search", {"query": ""})
        assert err["code"] == "VAL_EMPTY"

    # A new process on the same data directory finds everything again.
    async with Client(_params(tmp_path / "data", model)) as client:
        got = await call_ok(
            client, "memory_get", {"memory_id": design["memory_id"], "include_relationships": True}
        )
        assert got["memory"]["content"].startswith("An approval workflow")
        assert [r["other_id"] for r in got["relationships"]] == [req["memory_id"]]
        found = await call_ok(client, "memory_search", {"query": "who must approve big orders?", "limit": 3})
        assert {r["memory_id"] for r in found["results"]} >= {req["memory_id"], design["memory_id"]}
        pref = await call_ok(client, "memory_get", {"memory_id": bulk["memory_ids"][0]})
        assert pref["memory"]["metadata"]["key"] == "test_framework"
        deleted = await call_error(client, "memory_get", {"memory_id": bulk["memory_ids"][1]})
        assert deleted["code"] == "NF_MEMORY"


async def test_server_starts_without_a_model_and_says_so(tmp_path: Path) -> None:
    async with Client(_params(tmp_path / "data", None)) as client:
        added = await call_ok(
            client, "memory_add", {"type": "design", "content": "Retry webhooks with exponential backoff."}
        )
        found = await call_ok(client, "memory_search", {"query": "webhook retry backoff"})
        assert found["search_mode"] == "lexical"
        assert found["model_status"] != "ready"
        assert any("embedding model unavailable" in w for w in found["warnings"])
        assert [r["memory_id"] for r in found["results"]] == [added["memory_id"]]
        got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
        assert got["memory"]["embedding_pending"] is True

    # With a model, housekeeping embeds what was stored without one; semantic search then finds it.
    daemon_gone(tmp_path / "data")  # a daemon started with these settings (no model) is gone
    async with Client(_params(tmp_path / "data", require_model())) as client:
        deadline = anyio.current_time() + 60
        while True:
            got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
            if not got["memory"]["embedding_pending"] or anyio.current_time() > deadline:
                break
            await anyio.sleep(0.2)
        assert got["memory"]["embedding_pending"] is False
        assert got["memory"]["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
        found = await call_ok(client, "memory_search", {"query": "resend failed HTTP callbacks later"})
        assert found["search_mode"] != "lexical"
        assert found["results"][0]["memory_id"] == added["memory_id"]


@pytest.mark.parametrize("second_args", [[], ["--no-daemon"]], ids=["forwarder", "no-daemon"])
def test_second_server_on_same_data_dir_fails_clearly(tmp_path: Path, second_args: list[str]) -> None:
    """One owner per data directory: a server run with --no-daemon owns it, and a second process
    (a forwarder, whose daemon cannot start, or another --no-daemon) says who owns it."""
    env = server_env(tmp_path / "data", model=None)
    first = subprocess.Popen(
        [sys.executable, "-m", "memory_service", "--no-daemon"],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write(INITIALIZE_LINE)
        first.stdin.flush()
        assert b'"result"' in first.stdout.readline()  # the lifespan has opened the stores
        second = subprocess.run(
            [sys.executable, "-m", "memory_service", *second_args],
            env=env,
            cwd=REPO,
            input=INITIALIZE_LINE,
            capture_output=True,
            timeout=60,
        )
        # The MCP client is told why: initialize fails with the reason and what to do.
        reply = json.loads(second.stdout.splitlines()[0])
        assert "result" not in reply, reply
        message = reply["error"]["message"]
        assert "in use by another memory-service process" in message, reply
        assert reply["error"]["data"]["code"] == "SVC_DATA_DIR_LOCKED"
        assert reply["error"]["data"]["suggestion"]
        # ...and so is whoever reads stderr, in one line, with no traceback.
        assert b"in use by another memory-service process" in second.stderr, second.stderr
        assert b"Traceback" not in second.stderr
    finally:
        first.kill()
        first.wait()


def test_help_and_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "memory_service", "--help"], capture_output=True, text=True, check=True
    )
    assert "MCP server" in out.stdout and "--data-dir" in out.stdout
    ver = subprocess.run(
        [sys.executable, "-m", "memory_service", "--version"], capture_output=True, text=True, check=True
    )
    assert ver.stdout.startswith("memory-service ")


def test_a_bad_setting_is_one_readable_line(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=None)
    env.pop("MEMORY_GRAPH__URI", None)  # (set on the server profile)
    env["MEMORY_GRAPH__BACKEND"] = "neo4j"  # without MEMORY_GRAPH__URI
    out = subprocess.run(
        [sys.executable, "-m", "memory_service"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "MEMORY_GRAPH__URI is not set" in out.stderr and len(out.stderr.splitlines()) == 1
