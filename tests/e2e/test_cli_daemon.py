"""memory-cli while a daemon owns the data directory (issue 13), run as a user runs it.

Real processes throughout: a session is ``python -m memory_service`` (its forwarder starts the
daemon) driven by the Python SDK's stdio client, and each command is ``python -m
memory_service.cli.main``. While the session is open the daemon holds the stores, so a command that
succeeds went through the daemon (opening the stores itself would exit 2); the session then
sees what the command did. The HTTP side server is off, so health and stats cannot ask it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from memory_service import __version__
from memory_service.daemon.client import DaemonSession
from memory_service.settings import Settings
from memory_service.stores.owner_lock import read_owner
from tests.conftest import NOT_APPLICABLE, PROFILE, REPO, process_alive, require_model, server_env
from tests.e2e.conftest import call_ok
from tests.e2e.test_cli import _cli

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    # The server-profile run repeats e2e for the store adapters; this does not depend on them.
    pytest.mark.skipif(
        PROFILE == "server",
        reason=f"{NOT_APPLICABLE} memory-cli's routing to the daemon does not depend on the store backends",
    ),
]

DUP = "Refunds are issued to the original payment method only."


def _env(root: Path) -> dict[str, str]:
    env = server_env(root / "data", model=require_model())
    (root / "project").mkdir(parents=True, exist_ok=True)
    env["MEMORY_PROJECT_ROOT"] = str(root / "project")
    env["MEMORY_SERVER__HTTP_ENABLED"] = "false"  # the daemon path, not the side server's
    env["COLUMNS"] = "200"
    return env


def _daemon_pid(root: Path) -> int:
    return int(json.loads((root / "data" / "daemon.json").read_text())["pid"])


def _session(env: dict[str, str], *args: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service", *args], env=env, cwd=str(REPO)
    )
    return Client(params)


async def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """memory-cli in a worker thread: the session's client keeps running meanwhile."""
    return await anyio.to_thread.run_sync(lambda: _cli(*args, env=env))


def _row(stdout: str, figure: str) -> str:
    """A summary table's value for ``figure``."""
    line = next(line for line in stdout.splitlines() if f" {figure} " in line)
    return line.split()[-2]


async def test_index_goes_through_the_daemon_and_the_session_sees_the_code(tmp_path: Path) -> None:
    env = _env(tmp_path)
    src = tmp_path / "project" / "src"
    src.mkdir()
    for name in ("sample.py", "sample.go", "sample.rs"):
        (src / name).write_bytes((REPO / "tests" / "fixtures" / "languages" / name).read_bytes())
    async with _session(env) as client:
        pid = _daemon_pid(tmp_path)
        out = await _run("index", str(src), env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "index completed" in out.stdout and _row(out.stdout, "files_indexed") == "3", out.stdout
        # The daemon ran the job: the session sees it and the code at once.
        status = await call_ok(client, "index_status", {})
        assert status["index"]["total_files"] == 3
        assert [j["kind"] for j in status["recent_jobs"] if j["status"] == "completed"] == ["index_directory"]
        found = await call_ok(client, "code_search", {"query": "add items called name to the inventory"})
        assert any(hit["file_path"].endswith("sample.py") for hit in found["results"]), found

        full = await _run("index", str(src), "--full", env=env)  # reindex(scope=full) in the daemon
        assert full.returncode == 0, full.stdout + full.stderr
        assert _row(full.stdout, "files_indexed") == "3", full.stdout
        status = await call_ok(client, "index_status", {})
        assert {j["kind"] for j in status["recent_jobs"]} == {"index_directory", "reindex_full"}

        # The daemon reads only inside its own roots; the CLI says so instead of working around it.
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        refused = await _run("index", str(elsewhere), env=env)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "outside the allowed roots" in refused.stderr
        assert "MEMORY_INDEXER__ALLOWED_ROOTS" in refused.stderr and f"pid {pid}" in refused.stderr
        assert (
            _daemon_pid(tmp_path) == pid
            and (await call_ok(client, "index_status", {}))["index"]["total_files"] == 3
        )


async def test_normalize_export_import_go_through_the_daemon(tmp_path: Path) -> None:
    env = _env(tmp_path)
    async with _session(env) as client:
        pid = _daemon_pid(tmp_path)
        for tags in (["x"], ["y"]):
            metadata = {"tags": tags, "source": tags[0]}  # two sources: two stores of one text
            await call_ok(client, "memory_add", {"type": "design", "content": DUP, "metadata": metadata})

        normalized = await _run("--json", "normalize", env=env)
        assert normalized.returncode == 0, normalized.stdout + normalized.stderr
        report = json.loads(normalized.stdout)
        assert report["status"] == "completed" and report["stats"]["duplicates_merged"] == 1, report
        figures = await call_ok(client, "memory_statistics", {})
        assert figures["memories"]["total"] == 1  # the session sees the merge at once
        table = await _run("normalize", "--dry-run", env=env)
        assert table.returncode == 0 and "normalize (dry run) completed" in table.stdout, table.stdout

        file = tmp_path / "project" / "memories.jsonl"
        exported = await _run("--json", "export", str(file), env=env)
        assert exported.returncode == 0, exported.stdout + exported.stderr
        summary = json.loads(exported.stdout)
        assert summary["memories_exported"] == 1 and summary["file_path"] == str(file) and file.exists()
        again = await _run("export", str(file), env=env)  # the tool never replaces a file...
        assert again.returncode == 1 and "already exists" in again.stderr, again.stderr
        forced = await _run("--json", "export", str(file), "--force", "--include-deleted", env=env)
        assert forced.returncode == 0, forced.stdout + forced.stderr  # ...--force does, here too
        assert json.loads(forced.stdout)["memories_exported"] == 2 and len(file.read_text().splitlines()) == 4
        assert [p.name for p in file.parent.iterdir()] == ["memories.jsonl"]  # no temporary file left

        imported = await _run("--json", "import", str(file), "--dry-run", env=env)
        assert imported.returncode == 0, imported.stdout + imported.stderr
        counts = json.loads(imported.stdout)
        assert counts["dry_run"] is True and counts["imported"] == 0 and counts["skipped"] == 2, counts

        # Outside the daemon's roots: its refusal, shown as it is.
        outside = tmp_path / "outside.jsonl"
        refused = await _run("export", str(outside), env=env)
        assert refused.returncode == 1 and "outside" in refused.stderr, refused.stderr
        assert f"daemon (pid {pid})" in refused.stderr and not outside.exists()
        assert _daemon_pid(tmp_path) == pid


async def test_restore_and_repair_refuse_while_a_daemon_runs(tmp_path: Path) -> None:
    """A backup is taken by the daemon (test_backup_online.py); these two need the stores closed."""
    env = _env(tmp_path)
    target = tmp_path / "backup"
    async with _session(env) as client:
        await call_ok(client, "memory_add", {"type": "design", "content": "Back up nightly."})
        pid = _daemon_pid(tmp_path)
        for args in (("restore", str(target)), ("repair",)):
            out = await _run(*args, env=env)
            assert out.returncode == 2, out.stdout + out.stderr
            assert f"The memory-service daemon (pid {pid}) owns" in out.stderr, out.stderr
            assert "needs the stores closed" in out.stderr and "memory-cli daemon stop" in out.stderr
        assert not target.exists()
        assert (await call_ok(client, "memory_statistics", {}))["memories"]["total"] == 1


async def test_daemon_status_and_stop(tmp_path: Path) -> None:
    env = _env(tmp_path)
    none = _cli("daemon", "status", env=env)
    assert none.returncode == 1 and "no memory-service daemon is running" in none.stdout, none.stdout
    assert json.loads(_cli("daemon", "status", "--json", env=env).stdout)["running"] is False
    idle = _cli("daemon", "stop", env=env)
    assert idle.returncode == 0 and "no memory-service daemon is running" in idle.stdout, idle.stdout

    async with _session(env) as client:
        added = await call_ok(client, "memory_add", {"type": "design", "content": "Stop and go on."})
        info = json.loads((tmp_path / "data" / "daemon.json").read_text())
        pid = info["pid"]
        out = await _run("daemon", "status", "--json", env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        report = json.loads(out.stdout)
        assert report["running"] is True and report["pid"] == pid and report["version"] == __version__
        assert report["socket"] == info["socket"] and report["started_at"] == info["started_at"]
        assert report["data_dir"] == str((tmp_path / "data").resolve())
        assert report["clients"] == 1  # the session's forwarder
        assert report["http"] is None and report["side_server"] is None
        text = await _run("daemon", "status", env=env)
        assert text.returncode == 0 and f"pid           {pid}" in text.stdout, text.stdout

        stopped = await _run("daemon", "stop", env=env)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert f"stopped the memory-service daemon (pid {pid})" in stopped.stdout
        assert not process_alive(pid) and read_owner(tmp_path / "data") != pid
        # The session goes on: its forwarder started a new daemon, which has the memory.
        got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
        assert got["memory"]["content"] == "Stop and go on."
        assert _daemon_pid(tmp_path) != pid


async def test_a_no_daemon_server_keeps_the_directory_to_itself(tmp_path: Path) -> None:
    env = _env(tmp_path)
    async with _session(env, "--no-daemon") as client:
        await call_ok(client, "memory_add", {"type": "design", "content": "One process only."})
        owner = read_owner(tmp_path / "data")
        assert owner is not None
        busy = await _run("stats", "--json", env=env)
        assert busy.returncode == 2 and f"in use by a running memory-service (pid {owner})" in busy.stderr
        status = await _run("daemon", "status", env=env)
        assert status.returncode == 1 and f"pid {owner}" in status.stdout, status.stdout


def test_a_daemon_stopped_mid_command_hands_over_to_the_stores(tmp_path: Path) -> None:
    """The daemon is stopped while the CLI follows its index job: the CLI waits until the stores
    are free, then indexes in its own process, and the operator reads a normal summary."""
    env = _env(tmp_path)
    env["MEMORY_DAEMON__IDLE_TIMEOUT_S"] = "600"
    src = tmp_path / "project" / "src"
    src.mkdir()
    for i in range(2000):  # a job of several seconds: long enough to stop the daemon during it
        (src / f"m{i}.py").write_text(f'def f{i}(x):\n    """Doc {i}."""\n    return x + {i}\n')
    log = (tmp_path / "daemon.out").open("wb")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "memory_service", "daemon"], env=env, cwd=REPO, stdout=log, stderr=log
    )
    cli = None
    try:
        settings = Settings(data_dir=tmp_path / "data")
        deadline = time.monotonic() + 120
        while not (tmp_path / "data" / "daemon.json").exists():
            assert daemon.poll() is None and time.monotonic() < deadline, "the daemon did not start"
            time.sleep(0.05)
        cli = subprocess.Popen(
            [sys.executable, "-m", "memory_service.cli.main", "index", str(src)],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with DaemonSession(settings) as session:  # wait for the CLI's job to run in the daemon
            while not any(
                j["status"] == "running" and j["progress"] > 0
                for j in session.call("index_status", {})["recent_jobs"]
            ):
                assert time.monotonic() < deadline and cli.poll() is None, "the job did not start"
                time.sleep(0.05)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(60) == 0
        out, err = cli.communicate(timeout=300)
    finally:
        for proc in (daemon, cli):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        log.close()
    assert cli.returncode == 0, out + err
    assert "went away during the command" in err, err
    assert "index completed" in out, out
    # Files the daemon's job stored before it stopped read unchanged in the second run.
    assert int(_row(out, "files_indexed")) + int(_row(out, "files_unchanged")) == 2000, out
    assert "2000 / 2000 / 0" in out, out
    assert read_owner(tmp_path / "data") is None  # the CLI opened the stores itself, and closed them
