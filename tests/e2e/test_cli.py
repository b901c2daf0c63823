"""memory-cli health and stats, run as a user runs them, on a data directory the server wrote:
through its daemon while a session runs, then on the stores themselves."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import PROFILE, REPO, daemon_gone, require_model, server_env
from tests.e2e.conftest import call_ok


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_service.cli.main", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.anyio
@pytest.mark.e2e
async def test_health_and_stats_report_real_state(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=require_model())
    # HTTP side server off: the CLI cannot ask it, so it asks the daemon (test_http_server.py
    # covers the side server).
    env["MEMORY_SERVER__HTTP_ENABLED"] = "false"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO)
    )
    async with Client(params) as client:
        a = await call_ok(client, "memory_add", {"type": "design", "content": "Use WAL mode for SQLite."})
        await call_ok(
            client,
            "memory_add",
            {
                "type": "requirements",
                "content": "Writes must survive a crash.",
                "relationships": [{"type": "RELATES_TO", "target_id": a["memory_id"]}],
            },
        )
        # While the daemon owns the data directory, the CLI asks it (opening the stores would fail).
        asked = await anyio.to_thread.run_sync(lambda: _cli("health", "--json", env=env))
        assert asked.returncode == 0, asked.stdout + asked.stderr
        through = json.loads(asked.stdout)
        asked = await anyio.to_thread.run_sync(lambda: _cli("stats", "--json", env=env))
        assert asked.returncode == 0, asked.stdout + asked.stderr
        daemon_figures = json.loads(asked.stdout)
        assert daemon_figures["performance"]["tools"]["memory_add"]["calls"] == 2  # the daemon's counters
        table = await anyio.to_thread.run_sync(lambda: _cli("health", env={**env, "COLUMNS": "200"}))
        assert table.returncode == 0 and "graph sync queue" in table.stdout, table.stdout + table.stderr
    assert through["healthy"] is True and through["sync"] == {"pending": 0, "inflight": 0, "failed": 0}
    assert all(set(c) == {"component", "state", "backend", "detail"} for c in through["components"])

    daemon_gone(tmp_path / "data")  # the daemon leaves 1 s after the session: the CLI opens the stores
    health = _cli("health", "--json", env=env)
    assert health.returncode == 0, health.stdout + health.stderr
    report = json.loads(health.stdout)
    states = {c["component"]: c["state"] for c in report["components"]}
    assert report["healthy"] is True
    assert states["vectors"] == "ok" and states["graph"] == "ok" and states["embedding"] == "ok"
    # The daemon's answer names the same parts, states and backends as the stores opened here.
    assert [(c["component"], c["state"], c["backend"]) for c in through["components"]] == [
        (c["component"], c["state"], c["backend"]) for c in report["components"]
    ]
    assert through["sync"] == report["sync"]

    stats = _cli("--json", "stats", env=env)  # --json is a flag, before or after the command
    assert stats.returncode == 0, stats.stderr
    figures = json.loads(stats.stdout)
    again = json.loads(_cli("stats", "--json", env=env).stdout)
    # The same store read twice gives the same figures; the live counters are each process's own,
    # and the model may still be loading in one run and not in the other (health, warnings).
    live = {"performance", "health", "warnings"}
    assert {k: v for k, v in figures.items() if k not in live} == {
        k: v for k, v in again.items() if k not in live
    }
    storage = figures["storage"]  # each store named by what it is
    if PROFILE == "server":
        assert (storage["vector_store"], storage["graph_store"], storage["cache_store"]) == (
            "qdrant",
            "neo4j",
            "redis",
        )
    else:
        assert (storage["vector_store"], storage["graph_store"], storage["cache_store"]) == (
            "qdrant-edge",
            "ladybug",
            "sqlite",
        )
        assert storage["neo4j_size_mb"] > 0  # seed 001's names: the graph store's size, whatever it is
    assert figures["memories"]["total"] == 2
    assert figures["memories"]["by_type"] == {"requirements": 1, "design": 1}
    assert figures["relationships"]["by_type"] == {"RELATES_TO": 1}
    assert figures["sync"] == {"pending": 0, "inflight": 0, "failed": 0, "dead": 0}
    assert figures["audit_events"] == 2 and figures["health"]["graph"] == "ok"
    for same in ("memories", "relationships", "index", "sync", "audit_events"):
        assert daemon_figures[same] == figures[same], same  # the daemon counted the same store


def test_health_without_model_exits_nonzero_and_says_why(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=None)
    env["MEMORY_EMBEDDING__LOAD_TIMEOUT_SECONDS"] = "20"
    out = _cli("health", "--json", env=env)
    assert out.returncode == 1
    report = json.loads(out.stdout)
    model = next(c for c in report["components"] if c["component"] == "embedding")
    assert model["state"] == "unavailable" and model["detail"]


def test_help_lists_commands() -> None:
    out = _cli("--help", env={})
    assert out.returncode == 0 and "health" in out.stdout and "stats" in out.stdout
    flag = next(line for line in out.stdout.splitlines() if "--json" in line)
    assert "<bool>" not in flag and "TEXT" not in flag  # a flag, not an option taking a value


def test_index_command_indexes_then_skips_unchanged(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    for name in ("sample.py", "sample.go", "sample.rs"):
        (project / "src" / name).write_bytes((REPO / "tests" / "fixtures" / "languages" / name).read_bytes())
    env = server_env(tmp_path / "data", model=require_model())
    env["MEMORY_PROJECT_ROOT"] = str(project)
    env["COLUMNS"] = "200"
    first = _cli("index", str(project / "src"), env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "index completed" in first.stdout and "files_indexed" in first.stdout
    second = _cli("index", str(project / "src"), env=env)
    assert second.returncode == 0
    unchanged = next(line for line in second.stdout.splitlines() if "files_unchanged" in line)
    assert unchanged.split()[-2] == "3"
    missing = _cli("index", str(tmp_path / "nope"), env=env)
    assert missing.returncode == 1 and "does not exist" in missing.stderr


def test_index_json_counts_bytes_and_errors_are_envelopes(tmp_path: Path) -> None:
    """The global --json is honoured by index: no bar, one JSON document; progress is by bytes."""
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    names = ("sample.py", "sample.go")
    for name in names:
        (project / "src" / name).write_bytes((REPO / "tests" / "fixtures" / "languages" / name).read_bytes())
    env = server_env(tmp_path / "data", model=require_model())
    env["MEMORY_PROJECT_ROOT"] = str(project)
    done = _cli("--json", "index", str(project / "src"), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    job = json.loads(done.stdout)
    assert job["status"] == "completed" and job["stats"]["files_indexed"] == 2
    source = sum((project / "src" / name).stat().st_size for name in names)
    assert job["unit"] == "bytes" and job["total"] >= source and job["done"] == job["total"]
    assert job["index"]["total_files"] == 2
    missing = _cli("index", "--json", str(tmp_path / "nope"), env=env)
    assert missing.returncode == 1
    error = json.loads(missing.stdout)["error"]
    assert error["code"] and "does not exist" in error["message"]


def test_version_placeholders_and_error_sentences(tmp_path: Path) -> None:
    from memory_service import __version__

    version = _cli("--version", env={})
    assert version.returncode == 0 and version.stdout.strip() == f"memory-cli {__version__}"
    commands = ("health", "stats", "index", "normalize", "export", "import", "backup", "restore", "repair")
    for command in (*commands, "daemon status", "daemon stop"):
        shown = _cli(*command.split(), "--help", env={"COLUMNS": "200"})
        assert shown.returncode == 0, shown.stderr
        assert not re.search(r"<[a-z]+\[", shown.stdout), shown.stdout  # no <list[str]>
        assert "--json" in shown.stdout, command  # every command takes --json
    assert "--exclude GLOB" in _cli("index", "--help", env={"COLUMNS": "200"}).stdout
    env = server_env(tmp_path / "data", model=None)
    missing = _cli("index", str(tmp_path / "nope"), env={**env, "COLUMNS": "300"})
    assert missing.returncode == 1
    assert re.search(r"does not exist\. Check the spelling", missing.stderr), missing.stderr
    stopped = _cli("--json", "daemon", "stop", env=env)
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopped"] is False


@pytest.mark.anyio
@pytest.mark.e2e
async def test_index_through_the_daemon_says_a_missing_path_does_not_exist(tmp_path: Path) -> None:
    """Outside the daemon's allowed roots and missing: "does not exist" comes first."""
    env = server_env(tmp_path / "data", model=require_model())
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO)
    )
    async with Client(params) as client:
        await call_ok(client, "memory_add", {"type": "design", "content": "A daemon runs."})
        outside = tmp_path / "elsewhere" / "nope"
        missing = await anyio.to_thread.run_sync(lambda: _cli("--json", "index", str(outside), env=env))
        assert missing.returncode == 1, missing.stdout + missing.stderr
        error = json.loads(missing.stdout)["error"]
        assert error["code"] == "NF_PATH" and "does not exist" in error["message"]
    daemon_gone(tmp_path / "data")
