"""A fresh folder just works: outside git and without MEMORY_PROJECT, the folder names the project
(as it names the data directory), memory_statistics says so, and the first write's warning too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO, daemon_gone, require_model, server_env
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _outside_git(folder: Path) -> bool:
    found = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True, check=False
    )
    return found.returncode != 0


async def test_a_fresh_folder_outside_git_names_the_project(tmp_path: Path) -> None:
    folder = tmp_path / "notes-app"
    folder.mkdir()
    assert _outside_git(folder)
    home = tmp_path / "home"
    env = server_env(tmp_path / "unused", model=require_model())
    for name in ("MEMORY_DATA_DIR", "MEMORY_PROJECT", "MEMORY_PROJECT_ROOT", "XDG_DATA_HOME"):
        env.pop(name, None)
    # The data directory falls to its default under this HOME; the package is this checkout's.
    env.update({"HOME": str(home), "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])})
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(folder)
    )
    async with Client(params) as client:
        stats = await call_ok(client, "memory_statistics", {})
        project = stats["project"]
        assert project["name"] == "notes-app" and project["source"] == "folder", project
        assert str(folder) in project["reason"] and "MEMORY_PROJECT" in project["reason"]

        named = await call_ok(
            client, "memory_add", {"type": "design", "content": "Elsewhere.", "scope": {"project": "other"}}
        )
        assert named["scope"] == {"project": "other"} and named["warnings"] == []  # not its project
        first = await call_ok(client, "memory_add", {"type": "design", "content": "Notes sync over WebDAV."})
        assert first["status"] == "created" and first["scope"] == {"project": "notes-app"}
        assert any("notes-app" in w and "MEMORY_PROJECT" in w for w in first["warnings"]), first
        second = await call_ok(client, "memory_add", {"type": "design", "content": "Conflicts keep both."})
        assert second["status"] == "created" and second["warnings"] == []  # said once
        bulk = await call_ok(
            client, "memory_bulk_add", {"memories": [{"type": "session", "content": "Bulk."}]}
        )
        assert bulk["created"] == 1 and bulk["warnings"] == []

        found = await call_ok(client, "memory_search", {"query": "WebDAV sync", "limit": 5})
        assert first["memory_id"] in {r["memory_id"] for r in found["results"]}
        error = await call_error(
            client, "memory_add", {"type": "design", "content": "Nowhere.", "scope": {"project": None}}
        )
        assert error["code"] == "VAL_INVALID_SCOPE"

    data = list((home / ".local" / "share" / "memory-service").glob("notes-app-*"))
    assert len(data) == 1, data  # the data directory is named after the same project
    daemon_gone(data[0])
