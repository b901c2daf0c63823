"""The relay's handover, and what the relay process imports (daemon/relay.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memory_service.daemon.paths import DaemonPaths
from memory_service.daemon.relay import Handover
from memory_service.settings import DaemonSettings, ServerSettings, Settings

REPO = Path(__file__).resolve().parents[3]
# What the relay must never load: the settings model (the reason it exists), an event loop
# (anyio's asyncio loop adds 11 MB: asyncio loads OpenSSL), hashlib (OpenSSL again), the MCP SDK.
HEAVY = ("pydantic", "pydantic_core", "pydantic_settings", "memory_service.settings", "anyio", "asyncio")
HEAVY += ("ssl", "hashlib", "mcp")


def test_the_handover_carries_the_resolved_values(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        project_root=tmp_path,
        project="relay",
        daemon=DaemonSettings(socket_dir=tmp_path / "sockets", start_timeout_s=7.5),
        server=ServerSettings(profile="cortex-os", tool_names="seed", log_level="DEBUG"),
    )
    handover = Handover.of(settings)
    assert handover.paths == DaemonPaths.of(settings)
    assert (handover.start_timeout_s, handover.profile, handover.tool_names, handover.log_level) == (
        7.5,
        "cortex-os",
        "seed",
        "DEBUG",
    )
    assert Handover.from_json(handover.to_json()) == handover
    assert json.loads(handover.to_json())["paths"]["socket"] == str(handover.paths.socket)


def test_the_relay_loads_no_settings_model_and_no_event_loop() -> None:
    code = (
        "import json, sys\n"
        "import memory_service.daemon.relay, memory_service.daemon.forwarder\n"
        "import memory_service.daemon.hello, memory_service.logs\n"  # what relay.main imports
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    heavy = [m for m in loaded if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))]
    assert not heavy, f"the relay imports {heavy}"
