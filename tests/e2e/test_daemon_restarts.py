"""A session outlives its daemon's deaths (issue 30, items 8 and 13), within the documented budget.

Real processes: ``python -m memory_service`` (the relay) starts the daemon, which the test kills
with -9: once it serves the session, or as soon as it appears, before it listens. A reconnect
must give the new connection the session's protocol era before anything else crosses it, and a
daemon that dies before it listens is started again while the restart budget allows (more than
5 deaths in a minute: docs/daemon.md, Faults).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import mcp.client.session
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from tests.conftest import NOT_APPLICABLE, PROFILE, REPO, daemon_gone, process_alive, server_env
from tests.e2e.conftest import call_ok
from tests.e2e.raw_stdio import INITIALIZE, RawSession

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} the process model only"),
]

MODERN = {  # the per-request envelope of a 2026-07-28 session (what the SDK client stamps)
    PROTOCOL_VERSION_META_KEY: "2026-07-28",
    CLIENT_INFO_META_KEY: {"name": "raw-test", "version": "1"},
    CLIENT_CAPABILITIES_META_KEY: {},
}


def _daemon_pid(data: Path) -> int:
    return int(json.loads((data / "daemon.json").read_text())["pid"])


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while process_alive(pid):
        assert time.monotonic() < deadline, f"daemon {pid} still alive"
        time.sleep(0.02)


def _daemon_children(parent: int) -> list[int]:
    """The ``memory-service daemon`` processes ``parent`` (the relay) started and that still run."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent and fields[0] != "Z" and b"daemon" in cmdline:
            found.append(int(entry.name))
    return found


def _kill_daemons_as_they_appear(parent: int, count: int) -> list[int]:
    """kill -9 the next ``count`` daemons ``parent`` starts, each as soon as it is seen."""
    killed: list[int] = []
    deadline = time.monotonic() + 300
    while len(killed) < count:
        assert time.monotonic() < deadline, f"only {len(killed)} daemons were started: {killed}"
        for pid in _daemon_children(parent):
            if pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.005)
    return killed


def _modern_call(session: RawSession, request_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return session.call(request_id, tool, args, **MODERN)


def test_a_reconnect_replays_the_era_the_session_settled_first(tmp_path: Path) -> None:
    """A 2026-07-28 session whose client also sent ``initialize`` (its discover probe timed out
    on a slow start, and the connection, already modern, refused the handshake): after the daemon
    dies, the new connection must be modern again, not opened by that refused initialize."""
    data = tmp_path / "data"
    session = RawSession(server_env(data, model=None), tmp_path / "stderr.log")
    try:
        found = session.request("discover", "server/discover", {"_meta": MODERN}, timeout=300)
        assert "2026-07-28" in found["result"]["supportedVersions"], found
        refused = session.request("init", "initialize", INITIALIZE)
        assert refused["error"]["code"] == -32022, refused  # the connection serves 2026-07-28
        added = _modern_call(session, "add", "memory_add", {"type": "design", "content": "Era kept."})
        for n in range(2):
            _kill(_daemon_pid(data))
            got = _modern_call(session, f"get-{n}", "memory_get", {"memory_id": added["memory_id"]})
            assert got["memory"]["content"] == "Era kept."
    finally:
        assert session.close() == 0
    daemon_gone(data)


def test_a_handshake_session_keeps_its_era_across_a_reconnect(tmp_path: Path) -> None:
    data = tmp_path / "data"
    session = RawSession(server_env(data, model=None), tmp_path / "stderr.log")
    try:
        session.initialize()
        added = session.call("add", "memory_add", {"type": "design", "content": "Handshake kept."})
        _kill(_daemon_pid(data))
        got = session.call("get", "memory_get", {"memory_id": added["memory_id"]})
        assert got["memory"]["content"] == "Handshake kept."
    finally:
        assert session.close() == 0
    daemon_gone(data)


def _send(session: RawSession, request_id: str, method: str, params: dict[str, Any]) -> None:
    session.send(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    )


def test_daemons_killed_before_they_listen_are_started_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    session = RawSession(server_env(data, model=None), tmp_path / "stderr.log")
    try:
        _send(session, "init", "initialize", INITIALIZE)
        killed = _kill_daemons_as_they_appear(session.proc.pid, 5)  # the budget: 5 in a minute
        answer = session.answer("init", timeout=300)
        assert "result" in answer, answer
        session.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        session.call("add", "memory_add", {"type": "design", "content": "Started at last."})
        assert _daemon_pid(data) not in killed
    finally:
        assert session.close() == 0
    daemon_gone(data)


def test_the_replacement_of_a_dead_daemon_killed_before_it_listens_is_started_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    session = RawSession(server_env(data, model=None), tmp_path / "stderr.log")
    try:
        session.initialize()
        added = session.call("add", "memory_add", {"type": "design", "content": "Started again."})
        _kill(_daemon_pid(data))  # the forwarder starts a replacement at once: it is killed too
        _send(
            session,
            "get",
            "tools/call",
            {"name": "memory_get", "arguments": {"memory_id": added["memory_id"]}},
        )
        _kill_daemons_as_they_appear(session.proc.pid, 3)  # 1 + 3 deaths, within the budget
        got = session.answer("get", timeout=300)
        assert "result" in got and not got["result"].get("isError"), got
    finally:
        assert session.close() == 0
    daemon_gone(data)


def test_a_daemon_dying_past_the_budget_ends_the_session_with_an_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    session = RawSession(server_env(data, model=None), tmp_path / "stderr.log")
    try:
        _send(session, "init", "initialize", INITIALIZE)
        _kill_daemons_as_they_appear(session.proc.pid, 6)
        answer = session.answer("init", timeout=300)
        error = answer["error"]
        assert error["code"] == -32603 and "6 times in 60 s" in error["message"], answer
        assert error["data"]["suggestion"] and str(data / "daemon.log") in error["message"]
        later = session.request("later", "ping", {})
        assert later["error"]["data"]["code"] == error["data"]["code"], later
    finally:
        session.close()


@pytest.mark.anyio
async def test_an_sdk_session_whose_discover_probe_timed_out_goes_on_after_its_daemon_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a loaded machine did to ``memory-cli daemon stop`` (test_cli_daemon): the SDK client's
    ``server/discover`` probe timed out while the daemon started, so it also sent ``initialize``,
    which the connection (settled modern by the late probe) refused. Here the probe's timeout is
    made tiny for the first probe (the second, after the refusal, waits as usual), so that this
    happens on any machine."""
    probe = ClientSession.send_discover
    probes: list[str] = []

    async def first_probe_times_out(self: ClientSession, version: str) -> dict[str, Any]:
        probes.append(version)
        monkeypatch.setattr(
            mcp.client.session, "DISCOVER_TIMEOUT_SECONDS", 0.001 if len(probes) == 1 else 120.0
        )
        return await probe(self, version)

    monkeypatch.setattr(ClientSession, "send_discover", first_probe_times_out)
    data = tmp_path / "data"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=server_env(data, model=None), cwd=str(REPO)
    )
    async with Client(params) as client:
        assert client.protocol_version == "2026-07-28" and len(probes) == 2, probes
        added = await call_ok(client, "memory_add", {"type": "design", "content": "Probe timed out."})
        _kill(_daemon_pid(data))
        got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
        assert got["memory"]["content"] == "Probe timed out."
    daemon_gone(data)
