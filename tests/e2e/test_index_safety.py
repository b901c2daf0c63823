"""Indexing through the MCP client is safe: only regular files, within the size limit, and never
a file outside the project reached through a directory swapped for a symlink mid-job."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memory_service.core.code import index as index_module
from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, IndexerSettings, Settings
from tests.conftest import profile_settings, require_model
from tests.e2e.conftest import call_error, call_ok
from tests.fifo_guard import fifo_guard

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

MAX_FILE_BYTES = 2_000


@pytest.fixture(scope="module")
async def project(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, Path]]:
    root = tmp_path_factory.mktemp("safety")
    repo = root / "repo"
    repo.mkdir()
    settings = Settings(
        data_dir=root / "data",
        project_root=repo,
        project="safety",
        embedding=EmbeddingSettings(model_path=require_model()),
        indexer=IndexerSettings(max_file_bytes=MAX_FILE_BYTES),
        **profile_settings(root / "data"),
    )
    async with Client(build_server(settings)) as client:
        yield client, repo


async def test_index_file_refuses_a_file_over_the_size_limit(project: tuple[Client, Path]) -> None:
    client, repo = project
    (repo / "huge.py").write_text("def huge():\n" + "    x = 1\n" * 300)
    error = await call_error(client, "index_file", {"file_path": "huge.py"})
    assert error["code"] == "VAL_FILE_TOO_LARGE", error
    assert f"{MAX_FILE_BYTES:,}-byte limit" in error["message"]
    assert "MEMORY_INDEXER__MAX_FILE_BYTES" in error["suggestion"]
    assert error["details"]["max_file_bytes"] == MAX_FILE_BYTES


async def test_index_file_refuses_a_fifo(project: tuple[Client, Path]) -> None:
    client, repo = project
    os.mkfifo(repo / "pipe.py")
    with fifo_guard(repo / "pipe.py") as unblocked:
        error = await call_error(client, "index_file", {"file_path": "pipe.py"})
    assert unblocked == []
    assert error["code"] == "VAL_NOT_REGULAR_FILE", error
    assert "FIFO" in error["message"] and error["details"]["file_type"] == "FIFO (named pipe)"


async def test_a_fifo_does_not_stall_the_directory_job(project: tuple[Client, Path]) -> None:
    client, repo = project
    case = repo / "fifo_case"
    case.mkdir()
    (case / "ok.py").write_text("def fine_function():\n    return 1\n")
    os.mkfifo(case / "stuck.py")
    with fifo_guard(case / "stuck.py", grace_seconds=20) as unblocked, anyio.fail_after(300):
        out = await call_ok(client, "index_directory", {"directory_path": "fifo_case", "wait": True})
    assert unblocked == [], "the index job waited on a FIFO"
    job = out["job"]
    assert job["status"] == "completed", job
    assert job["stats"]["files_indexed"] == 1
    assert job["stats"]["skipped_by_reason"] == {"special": 1}


@pytest.fixture
def swap_after_walk(project: tuple[Client, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Once the job's walk is over, swap swap_case/pkg for a symlink to a directory outside."""
    _, repo = project
    case, outside = repo / "swap_case", repo.parent / "outside"
    (case / "pkg").mkdir(parents=True)
    (case / "a.py").write_text("def ordinary_helper():\n    return 2\n")
    (case / "pkg" / "mod.py").write_text("def inside_function():\n    return 3\n")
    outside.mkdir()
    (outside / "mod.py").write_text("def leaked_outside_secret():\n    return 'secret'\n")
    walk = index_module.iter_source_files

    def walk_then_swap(*args: Any, **kwargs: Any) -> Iterator[Any]:
        yield from walk(*args, **kwargs)
        (case / "pkg").rename(repo.parent / "pkg.old")
        (case / "pkg").symlink_to(outside, target_is_directory=True)

    monkeypatch.setattr(index_module, "iter_source_files", walk_then_swap)
    return case


async def test_a_directory_swapped_for_a_symlink_mid_job_is_not_read(
    project: tuple[Client, Path], swap_after_walk: Path
) -> None:
    client, _ = project
    out = await call_ok(client, "index_directory", {"directory_path": "swap_case", "wait": True})
    stats = out["job"]["stats"]
    assert out["job"]["status"] == "completed", out
    assert stats["files_seen"] == 2 and stats["files_indexed"] == 1, stats
    assert stats["skipped_by_reason"] == {"symlink": 1}
    found = await call_ok(client, "code_search", {"query": "leaked outside secret", "limit": 10})
    assert "leaked_outside_secret" not in {r["name"] for r in found["results"]}
