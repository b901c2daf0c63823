"""The process every session keeps running: a small relay, without the settings model.

Real processes: ``memory-service`` over stdio starts (or finds) the daemon and relays MCP to it.
Once it has checked its settings it replaces itself, same pid, with the relay (daemon/relay.py),
which must not map pydantic-core and must stay small: the forwarder that kept the settings model
loaded held 37.5 MB, the relay 15.9 MB (CPython 3.11, x86_64).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tests.conftest import INITIALIZE_LINE, NOT_APPLICABLE, PROFILE, REPO, daemon_gone, missing, server_env

pytestmark = [
    pytest.mark.e2e,
    # The relay does not depend on the store backends: once, on the embedded profile.
    pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} the process model only"),
]

RSS_LIMIT_KB = 20 * 1024
INITIALIZED_LINE = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def _start(
    command: list[str], env: dict[str, str], stderr: IO[bytes], cwd: Path = REPO
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
    )


def _ask(proc: subprocess.Popen[bytes], line: bytes) -> dict[str, Any]:
    """Send one request; its answer (notifications before it are skipped)."""
    assert proc.stdin is not None and proc.stdout is not None
    sent = json.loads(line)
    proc.stdin.write(line)
    proc.stdin.flush()
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == sent["id"]:
            return answer


def _session(proc: subprocess.Popen[bytes], calls: int) -> None:
    """The MCP handshake, then ``calls`` memory_add calls answered through the relay."""
    assert "result" in _ask(proc, INITIALIZE_LINE)
    assert proc.stdin is not None
    proc.stdin.write(INITIALIZED_LINE)
    for i in range(calls):
        request = {
            "jsonrpc": "2.0",
            "id": 10 + i,
            "method": "tools/call",
            "params": {"name": "memory_add", "arguments": {"type": "design", "content": f"Relayed {i}."}},
        }
        answer = _ask(proc, json.dumps(request).encode() + b"\n")
        assert not answer["result"].get("isError"), answer


def _close(proc: subprocess.Popen[bytes]) -> int:
    assert proc.stdin is not None
    proc.stdin.close()  # the client leaves: the relay exits
    return proc.wait(timeout=30)


def _rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0])


def test_a_session_relays_through_a_small_process_without_pydantic(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=None)
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        proc = _start([sys.executable, "-m", "memory_service"], env, stderr)
        try:
            _session(proc, calls=20)
            maps = Path(f"/proc/{proc.pid}/maps").read_text()  # the pid the client started
            rss = _rss_kb(proc.pid)
            assert "pydantic_core" not in maps, "the session's process has the settings model loaded"
            assert rss < RSS_LIMIT_KB, f"the session's process holds {rss} kB (limit {RSS_LIMIT_KB} kB)"
        finally:
            code = _close(proc)
    assert code == 0
    # The relay logs to stderr at the configured level (INFO by default), one line per record.
    text = log.read_text()
    assert " INFO memory_service.daemon.forwarder: forwarding to the memory-service daemon " in text, text
    daemon_gone(tmp_path / "data")


def _script() -> Path:
    script = Path(sys.executable).with_name("memory-service")  # what Claude Code runs
    if not script.exists():
        missing(f"{script} is not installed: run `make install`")
    return script


def test_a_session_in_another_checkout_runs_this_package_and_its_daemon(tmp_path: Path) -> None:
    """A session opened in a folder holding another ``memory_service`` package (a checkout of this
    project, another version) runs the installed one: the relay, and the daemon it starts."""
    checkout = tmp_path / "checkout"
    (checkout / "memory_service").mkdir(parents=True)
    (checkout / "memory_service" / "__init__.py").write_text('raise SystemExit("the wrong memory_service")\n')
    env = server_env(tmp_path / "data", model=None)
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        proc = _start([str(_script())], env, stderr, cwd=checkout)
        try:
            _session(proc, calls=1)
        finally:
            code = _close(proc)
    assert code == 0, log.read_text()
    daemon_log = (tmp_path / "data" / "daemon.log").read_text()
    assert "the wrong memory_service" not in daemon_log + log.read_text()
    daemon_gone(tmp_path / "data")


def test_the_relay_keeps_the_commands_name_and_log_level(tmp_path: Path) -> None:
    script = _script()
    env = {**server_env(tmp_path / "data", model=None), "MEMORY_SERVER__LOG_LEVEL": "WARNING"}
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        proc = _start([str(script)], env, stderr)
        try:
            _session(proc, calls=1)
            assert Path(f"/proc/{proc.pid}/comm").read_text().strip() == "memory-service"  # in ps and top
        finally:
            code = _close(proc)
    assert code == 0
    assert log.read_text() == ""  # WARNING: the INFO line is not written
    daemon_gone(tmp_path / "data")
