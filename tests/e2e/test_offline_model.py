"""No model path and no network: the server and ``memory-cli health`` go lexical at once.

The network is simulated the way huggingface_hub allows: ``HF_ENDPOINT`` points at a closed port on
127.0.0.1, and ``FASTEMBED_CACHE_PATH`` at an empty folder, so nothing is ever downloaded. Both
run as subprocesses, because huggingface_hub reads ``HF_ENDPOINT`` once, at import.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import REPO, daemon_gone, server_env
from tests.e2e.conftest import call_ok

pytestmark = [pytest.mark.e2e]

# A line our one-line log format (or fastembed's loguru) writes at warning level or above.
_LOUD = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def offline_env(tmp_path: Path) -> dict[str, str]:
    """The server's environment with no model path, an empty fastembed cache and an unreachable hub."""
    env = server_env(tmp_path / "data", model=None)
    del env["MEMORY_EMBEDDING__MODEL_PATH"], env["HF_HUB_OFFLINE"]
    env.pop("TRANSFORMERS_OFFLINE", None)
    env["FASTEMBED_CACHE_PATH"] = str(tmp_path / "fastembed-cache")
    env["HF_HOME"] = str(tmp_path / "hf-home")
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{_closed_port()}"
    return env


def _one_warning(stderr: str, endpoint: str) -> str:
    """The single loud line, which says why and what to set."""
    loud = [line for line in stderr.splitlines() if _LOUD.search(line)]
    assert len(loud) == 1, stderr
    (line,) = loud
    assert endpoint in line and "MEMORY_EMBEDDING__MODEL_PATH" in line and "--model-path" in line
    return line


@pytest.mark.anyio
async def test_memory_add_goes_lexical_without_a_model(offline_env: dict[str, str], tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=offline_env, cwd=str(REPO)
    )
    with (tmp_path / "server.stderr").open("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            added = await call_ok(
                client,
                "memory_add",
                {"type": "design", "content": "Retry webhooks with exponential backoff."},
            )
            got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
            found = await call_ok(client, "memory_search", {"query": "webhook retry backoff"})
        errlog.seek(0)
        stderr = errlog.read()
    daemon_gone(tmp_path / "data")  # the daemon, which loads the model, logs to its own file
    stderr += (tmp_path / "data" / "daemon.log").read_text(errors="replace")
    assert got["memory"]["embedding_pending"] is True
    assert found["search_mode"] == "lexical"
    assert offline_env["HF_ENDPOINT"] in found["model_status"]
    assert [r["memory_id"] for r in found["results"]] == [added["memory_id"]]
    assert "WARNING" in _one_warning(stderr, offline_env["HF_ENDPOINT"])
    assert not any((tmp_path / "fastembed-cache").rglob("*.onnx"))


def test_health_reports_the_model_unavailable_with_the_reason(offline_env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memory_service.cli.main", "health", "--json"],
        env=offline_env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    (embedding,) = [c for c in report["components"] if c["component"] == "embedding"]
    assert embedding["state"] == "unavailable"
    assert "not in fastembed's cache" in embedding["detail"]
    assert offline_env["HF_ENDPOINT"] in embedding["detail"]
    # The CLI leaves logging unconfigured: Python prints the bare message of a warning.
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    assert "embedding model" in line and "MEMORY_EMBEDDING__MODEL_PATH" in line
