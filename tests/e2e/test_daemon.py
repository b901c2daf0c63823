"""Several sessions, one store (issue 13): stdio forwarders in front of one daemon per data directory.

Real processes throughout: each session is ``python -m memory_service`` driven by the Python SDK's
stdio client; the first one starts the daemon, the others find it. The daemon is killed with -9
in the middle of traffic; the forwarders must start a new one and re-send what had no answer,
so that no call fails and no acknowledged write is lost or applied twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import (
    INITIALIZE_LINE,
    NOT_APPLICABLE,
    PROFILE,
    REPO,
    daemon_gone,
    process_alive,
    require_model,
    server_env,
)
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
# The process model does not depend on the store backends: on the server profile only the kill -9
# test runs again (its writes are recovered through the server adapters' queue and journal).
process_only = pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} the process model only")


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = server_env(root / "data", model=require_model())
    env["MEMORY_PROJECT_ROOT"] = str(root / "project")
    env.update(extra)
    return env


def _session(env: dict[str, str], *args: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service", *args], env=env, cwd=str(REPO)
    )
    return Client(params)


def _project(root: Path, files: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (root / f"mod_{i}.py").write_text(
            f'"""Module {i}."""\n\n\ndef step_{i}(x):\n    """Step {i}."""\n    return x + {i}\n\n\n'
            f"class Holder{i}:\n    def get(self):\n        return step_{i}({i})\n"
        )


def _daemon_pid(root: Path) -> int:
    info = json.loads((root / "data" / "daemon.json").read_text())
    return int(info["pid"])


async def _wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await anyio.sleep(0.05)


@process_only
async def test_sessions_share_one_daemon_and_see_each_others_writes(tmp_path: Path) -> None:
    env = _env(tmp_path)
    async with _session(env) as first, _session(env) as second:
        pid = _daemon_pid(tmp_path)
        added = await call_ok(first, "memory_add", {"type": "design", "content": "Sessions share one store."})
        got = await call_ok(second, "memory_get", {"memory_id": added["memory_id"]})
        assert got["memory"]["content"] == "Sessions share one store."
        found = await call_ok(second, "memory_search", {"query": "sessions share a store"})
        assert found["results"][0]["memory_id"] == added["memory_id"]
        await call_ok(second, "memory_delete", {"memory_id": added["memory_id"]})
        gone = await call_error(first, "memory_get", {"memory_id": added["memory_id"]})
        assert gone["code"] == "NF_MEMORY"
        assert _daemon_pid(tmp_path) == pid and process_alive(pid)
    # No session left and no job running: the daemon leaves (idle timeout 1 s), cleaning up.
    await _wait_for(lambda: not process_alive(pid), 30, "the idle daemon to exit")
    assert not (tmp_path / "data" / "daemon.json").exists()


@process_only
async def test_racing_sessions_start_one_daemon(tmp_path: Path) -> None:
    """Four sessions start at once on a fresh data directory: one daemon, one store."""
    env = _env(tmp_path)
    ids: dict[int, str] = {}
    all_written = anyio.Event()

    async def session(i: int) -> None:
        async with _session(env) as client:  # the four forwarders race to start the daemon
            added = await call_ok(
                client, "memory_add", {"type": "session", "content": f"Session {i} was here."}
            )
            ids[i] = added["memory_id"]
            if len(ids) == 4:
                all_written.set()
            await all_written.wait()
            for memory_id in ids.values():  # every session reads every other's write
                await call_ok(client, "memory_get", {"memory_id": memory_id})

    async with anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(session, i)
    # One daemon started (the spawn lock): no second one tried and found the directory taken.
    log = (tmp_path / "data" / "daemon.log").read_text()
    assert log.count(" serving ") == 1 and "SVC_DATA_DIR_LOCKED" not in log, log


@dataclass
class Ledger:
    """What the daemon acknowledged: the latest content of each live memory, and deletions; the
    calls each session completed, and whether the traffic is to stop."""

    live: dict[str, str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    calls: list[int] = field(default_factory=lambda: [0] * SESSIONS)
    done: anyio.Event = field(default_factory=anyio.Event)


SESSIONS = 4
CALLS_BETWEEN_KILLS = 10  # every session completes this many calls before each kill and after the last
TRAFFIC_DEADLINE_S = 600.0  # a bound on a hung test, not a speed: a loaded machine may be slow


async def _traffic(client: Client, me: int, ledger: Ledger, seed: int) -> None:
    rng = random.Random(seed)
    mine: list[str] = []
    n = 0
    while not ledger.done.is_set():
        n += 1
        op = rng.choice(["add", "add", "bulk", "search", "update", "delete", "get", "index"])
        try:
            await _one_call(client, me, n, op, rng, mine, ledger)
        except AssertionError as exc:  # say which call of which session, at what time
            raise AssertionError(f"session {me}, call {n} ({op}) at {time.time():.3f}: {exc}") from None
        ledger.calls[me] += 1


async def _one_call(
    client: Client, me: int, n: int, op: str, rng: random.Random, mine: list[str], ledger: Ledger
) -> None:
    topic = rng.choice(["cache", "retry", "login", "export"])
    text = f"Session {me} note {n}: {topic} {rng.getrandbits(40):x}."
    if op == "add" or (op in ("update", "delete", "get") and not mine):
        out = await call_ok(client, "memory_add", {"type": "session", "content": text})
        ledger.live[out["memory_id"]] = text
        mine.append(out["memory_id"])
    elif op == "bulk":
        bodies = [{"type": "session", "content": f"{text} part {k}"} for k in range(rng.choice([2, 5, 10]))]
        out = await call_ok(client, "memory_bulk_add", {"memories": bodies})
        assert not out["errors"], out
        for memory_id, body in zip(out["memory_ids"], bodies, strict=True):
            ledger.live[memory_id] = body["content"]
            mine.append(memory_id)
    elif op == "search":
        await call_ok(client, "memory_search", {"query": text, "limit": 5})
    elif op == "update":
        target = rng.choice(mine)
        await call_ok(client, "memory_update", {"memory_id": target, "content": text})
        ledger.live[target] = text
    elif op == "delete":
        target = mine.pop(rng.randrange(len(mine)))
        await call_ok(client, "memory_delete", {"memory_id": target})
        ledger.live.pop(target)
        ledger.deleted.add(target)
    elif op == "get":
        target = rng.choice(mine)
        got = await call_ok(client, "memory_get", {"memory_id": target})
        assert got["memory"]["content"] == ledger.live[target]
    else:
        job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
        assert job["job"]["status"] in ("completed", "interrupted"), job


async def _every_session_calls(ledger: Ledger, calls: int) -> None:
    """Until every session has completed ``calls`` more calls (however long a loaded machine takes)."""
    start = list(ledger.calls)
    await _wait_for(
        lambda: all(now - then >= calls for now, then in zip(ledger.calls, start, strict=True)),
        TRAFFIC_DEADLINE_S,
        f"every session to complete {calls} calls (done: {ledger.calls}, before: {start})",
    )


async def _kill_daemon_twice(root: Path, killed: list[int], ledger: Ledger) -> None:
    """Kill the daemon twice in the middle of traffic: each time after every session made calls
    through it; then let every session make calls through the third, and stop the traffic."""
    try:
        for _ in range(2):
            await _every_session_calls(ledger, CALLS_BETWEEN_KILLS)
            pid = _daemon_pid(root)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            print(f"killed daemon {pid} at {time.time():.3f}")  # shown with a failure
            await _wait_for(lambda pid=pid: not process_alive(pid), 60, "the daemon to die")
        await _every_session_calls(ledger, CALLS_BETWEEN_KILLS)
    finally:
        ledger.done.set()


async def test_four_sessions_mixed_traffic_survive_daemon_kill_9(tmp_path: Path) -> None:
    _project(tmp_path / "project", 12)
    env = _env(tmp_path)
    ledger = Ledger()
    killed: list[int] = []
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(_session(env)) for _ in range(SESSIONS)]
        async with anyio.create_task_group() as tg:
            for i, client in enumerate(clients):
                tg.start_soon(_traffic, client, i, ledger, 100 + i)
            tg.start_soon(_kill_daemon_twice, tmp_path, killed, ledger)
        # Behaviour, not speed: every session's calls went on through three daemons.
        assert len(killed) == 2 and min(ledger.calls) >= 3 * CALLS_BETWEEN_KILLS, (killed, ledger.calls)
        survivor = _daemon_pid(tmp_path)
        assert survivor not in killed and process_alive(survivor)

        check = clients[0]
        for memory_id, content in ledger.live.items():
            got = await call_ok(check, "memory_get", {"memory_id": memory_id})
            assert got["memory"]["content"] == content, memory_id
        for memory_id in ledger.deleted:
            assert (await call_error(check, "memory_get", {"memory_id": memory_id}))["code"] == "NF_MEMORY"
        stats = await call_ok(check, "memory_statistics", {})
        # Re-sent writes were applied once: exactly the acknowledged memories, no duplicates.
        assert stats["memories"]["by_type"].get("session", 0) == len(ledger.live), stats["memories"]
        sample = random.Random(1).sample(sorted(ledger.live.items()), min(20, len(ledger.live)))
        for memory_id, content in sample:
            hits = await call_ok(check, "memory_search", {"query": content, "limit": 5})
            assert memory_id in [h["memory_id"] for h in hits["results"]], content
        for _ in range(100):  # the graph-sync outbox drains to 0
            sync = stats["sync"]
            if sync["pending"] == sync["inflight"] == sync["failed"] == 0:
                break
            await anyio.sleep(0.2)
            stats = await call_ok(check, "memory_statistics", {})
        assert stats["sync"]["pending"] == stats["sync"]["failed"] == 0, stats["sync"]


@process_only
async def test_an_index_job_outlives_the_session_that_started_it(tmp_path: Path) -> None:
    _project(tmp_path / "project", 600)
    env = _env(tmp_path)
    async with _session(env) as starter:
        started = await call_ok(starter, "index_directory", {"directory_path": "."})
        await _wait_for(lambda: (tmp_path / "data" / "daemon.json").exists(), 10, "daemon.json")
        status = await call_ok(starter, "index_status", {"job_id": started["job_id"]})
        assert status["job"]["status"] in ("queued", "running") and status["job"]["progress"] < 100, status
    # The session is gone while its job runs; the job keeps the daemon past its 1 s idle timeout.
    await anyio.sleep(2.0)
    async with _session(env) as later:  # the same daemon, or a successor reading the job's state
        for _ in range(1200):
            status = await call_ok(later, "index_status", {"job_id": started["job_id"]})
            if status["job"]["status"] not in ("queued", "running"):
                break
            await anyio.sleep(0.1)
    # "completed" only comes from the job finishing; a daemon that died with it says "interrupted".
    assert status["job"]["status"] == "completed", status
    assert status["index"]["total_files"] == 600


@process_only
async def test_a_killed_daemons_socket_and_info_are_replaced(tmp_path: Path) -> None:
    env = _env(tmp_path)
    async with _session(env) as client:
        await call_ok(client, "memory_add", {"type": "design", "content": "Kept across a daemon's death."})
        old = _daemon_pid(tmp_path)
        info = json.loads((tmp_path / "data" / "daemon.json").read_text())
    os.kill(old, signal.SIGKILL)
    await _wait_for(lambda: not process_alive(old), 30, "the daemon to die")
    socket = Path(info["socket"])
    assert socket.exists() and _daemon_pid(tmp_path) == old  # what a dead daemon leaves behind
    async with _session(env) as client:
        found = await call_ok(client, "memory_search", {"query": "kept across a daemon's death"})
        assert found["results"], found
        new = _daemon_pid(tmp_path)
        assert new != old and process_alive(new) and socket.exists()


@process_only
async def test_a_daemon_of_another_version_is_refused_clearly(tmp_path: Path) -> None:
    env = _env(tmp_path, MEMORY_DAEMON__IDLE_TIMEOUT_S="120")
    log = (tmp_path / "other-daemon.log").open("wb")
    other = subprocess.Popen(
        [sys.executable, "-m", "memory_service", "daemon"],
        env={**env, "MEMORY_TEST_DAEMON_VERSION": "0.0.0-other"},
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    try:
        await _wait_for(lambda: (tmp_path / "data" / "daemon.json").exists(), 120, "the other daemon")
        socket = Path(json.loads((tmp_path / "data" / "daemon.json").read_text())["socket"])
        session = await anyio.to_thread.run_sync(
            lambda: subprocess.run(
                [sys.executable, "-m", "memory_service"],
                env=env,
                cwd=REPO,
                input=INITIALIZE_LINE,
                capture_output=True,
                timeout=60,
            )
        )
        reply = json.loads(session.stdout.splitlines()[0])
        message = reply["error"]["message"]
        assert "0.0.0-other" in message and "memory-cli daemon stop" in message, reply
        assert reply["error"]["data"]["code"] == "SVC_DAEMON_VERSION"
        stderr = session.stderr.decode()
        assert session.returncode == 1 and "0.0.0-other" in stderr and "Traceback" not in stderr, stderr
        assert other.poll() is None  # refused, not disturbed
        other.send_signal(signal.SIGTERM)
        assert other.wait(timeout=60) == 0
        assert not (tmp_path / "data" / "daemon.json").exists()
        assert not socket.exists()
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()
        log.close()
    daemon_gone(tmp_path / "data")
