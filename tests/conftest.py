"""Shared test fixtures: the real embedding model, per-test data directories, MCP clients."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

from memory_service.settings import GraphSettings, RedisSettings, VectorSettings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# Servers the tests start themselves (fixtures: redis_url, redis_servers).
pytest_plugins = ["tests.servers.redis_server", "tests.servers.neo4j_harness"]


def model_path() -> Path:
    """The ONNX export of all-MiniLM-L6-v2 (tests never download weights)."""
    return Path(os.environ.get("MEMORY_TEST_MODEL_PATH") or SHARED / "models" / "all-MiniLM-L6-v2-onnx")


# A skip whose reason starts with this says the test does not apply (another platform, a backend
# without the feature); any other skip means something the suite needs is missing.
NOT_APPLICABLE = "not applicable:"


def missing(message: str) -> NoReturn:
    """Something a test needs is absent: a failure in CI (``CI`` set), a visible skip locally."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so a missing test dependency fails instead of skipping)")
    pytest.skip(message)


def require_model() -> Path:
    path = model_path()
    if not (path / "model.onnx").exists():
        missing(
            f"embedding model not found at {path}: set MEMORY_TEST_MODEL_PATH to a folder holding "
            "the ONNX export of all-MiniLM-L6-v2"
        )
    return path


def _skip_reasons(config: pytest.Config) -> dict[str, int]:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    reasons: dict[str, int] = {}
    for report in reporter.stats.get("skipped", []) if reporter else []:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    return reasons


def _missing_parts(reasons: dict[str, int]) -> list[str]:
    return [r for r in reasons if not r.startswith(NOT_APPLICABLE)]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say how many tests were skipped and why."""
    reasons = _skip_reasons(config)
    if not reasons:
        return
    terminalreporter.section(f"{sum(reasons.values())} skipped, by reason")
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        terminalreporter.line(f"{count:5d}  {reason}")
    if os.environ.get("CI") and _missing_parts(reasons):
        terminalreporter.line("CI is set: a skip for a missing part fails the run.", red=True)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI, a run that skipped anything for a missing part fails, even if every test passed."""
    if os.environ.get("CI") and exitstatus == 0 and _missing_parts(_skip_reasons(session.config)):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def model_dir() -> Path:
    return require_model()


# MEMORY_TEST_PROFILE=server runs the e2e suite on the server adapters: qdrant-client's local
# mode per server, and the Neo4j and Redis processes the session started (tests/e2e/conftest.py).
PROFILE = os.environ.get("MEMORY_TEST_PROFILE", "embedded")
SERVERS: dict[str, str] = {}  # "neo4j" / "redis" -> address, filled by the e2e session fixture


def profile_env(data_dir: Path) -> dict[str, str]:
    """MEMORY_* variables that put one server on the test profile (none for the embedded one).

    Each data directory gets its own Qdrant folder, graph namespace and Redis key prefix, so
    servers sharing the session's Neo4j and Redis never see each other's data, and a restarted
    server on the same directory finds its own again.
    """
    if PROFILE != "server":
        return {}
    tag = "t" + hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]  # same dir, same tag
    return {
        "MEMORY_QDRANT__PATH": str(data_dir.parent / f"{data_dir.name}-qdrant"),
        "MEMORY_GRAPH__URI": SERVERS["neo4j"],
        "MEMORY_GRAPH__NAMESPACE": tag,
        "MEMORY_REDIS__URL": SERVERS["redis"],
        "MEMORY_REDIS__KEY_PREFIX": f"{tag}:",
    }


def profile_settings(data_dir: Path) -> dict[str, Any]:
    """The same as :func:`profile_env`, as settings sections for an in-process server."""
    env = profile_env(data_dir)
    if not env:
        return {}
    return {
        "qdrant": VectorSettings(path=Path(env["MEMORY_QDRANT__PATH"])),
        "graph": GraphSettings(uri=env["MEMORY_GRAPH__URI"], namespace=env["MEMORY_GRAPH__NAMESPACE"]),
        "redis": RedisSettings(url=env["MEMORY_REDIS__URL"], key_prefix=env["MEMORY_REDIS__KEY_PREFIX"]),
    }


def server_env(data_dir: Path, *, model: Path | None) -> dict[str, str]:
    """Environment for a server subprocess: isolated data dir, the local model, no network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update(profile_env(data_dir))
    env.update(
        {
            "MEMORY_DATA_DIR": str(data_dir),
            "MEMORY_PROJECT_ROOT": str(data_dir),
            "MEMORY_PROJECT": "e2e",
            "HF_HUB_OFFLINE": "1",
            "MEMORY_SERVER__HTTP_PORT": "0",  # a free port each: test servers never fight over 9090
            # `memory-service` forwards to a daemon it starts; a test's daemon leaves soon after
            # its sessions (a test that opens the data directory next waits for that: daemon_gone).
            "MEMORY_DAEMON__IDLE_TIMEOUT_S": "1",
        }
    )
    env["MEMORY_EMBEDDING__MODEL_PATH"] = str(model) if model else str(data_dir / "no-model-here")
    return env


def daemon_gone(data_dir: Path, timeout: float = 60.0) -> None:
    """Wait until no process owns ``data_dir`` (a test's daemon leaves 1 s after its last
    session, MEMORY_DAEMON__IDLE_TIMEOUT_S in server_env); fail the test if it does not."""
    import time

    from memory_service.stores.owner_lock import read_owner

    deadline = time.monotonic() + timeout
    while (owner := read_owner(data_dir)) is not None:
        assert time.monotonic() < deadline, f"pid {owner} still owns {data_dir} after {timeout:.0f} s"
        time.sleep(0.05)
    # A daemon removes its daemon.json after releasing the lock (daemon/service.py): wait for that
    # too, so that a test reading the data directory next finds no file vanishing under it.
    while (pid := _daemon_info_pid(data_dir)) is not None and process_alive(pid):
        assert time.monotonic() < deadline, f"daemon {pid} of {data_dir} still exiting after {timeout:.0f} s"
        time.sleep(0.05)


def _daemon_info_pid(data_dir: Path) -> int | None:
    """The pid daemon.json names, None when there is none (or it is being rewritten)."""
    import json

    try:
        return int(json.loads((data_dir / "daemon.json").read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def process_alive(pid: int) -> bool:
    """Running (a zombie, dead but not yet reaped by its parent, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# A raw MCP initialize request, for tests that read a server's first answer off its stdout.
INITIALIZE_LINE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
)


def resident_kb(wanted: Path | Callable[[str], bool]) -> int:
    """Resident KB of this process's mappings of the file ``wanted``, or of the files whose path
    it accepts (/proc/self/smaps)."""
    if isinstance(wanted, Path):
        wanted = str(wanted).__eq__
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()
            if re.match(r"^[0-9a-f]+-[0-9a-f]+$", head[0]):  # a mapping's first line
                inside = len(head) > 5 and wanted(head[5])
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total
