"""Services on the real engines, in process: index audit events and housekeeping across restarts."""

from __future__ import annotations

import gc
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from indexer import safe_read
from memory_service.app import open_services
from memory_service.core.code import paths as paths_module
from memory_service.core.code.schemas import IndexDirectoryInput, IndexFileInput
from memory_service.core.errors import ValidationError
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import REPO, require_model


def _settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        project_root=tmp_path / "proj",
        project="p",
        embedding=EmbeddingSettings(model_path=require_model()),
    )


def test_index_changes_are_audited(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "languages", tmp_path / "proj" / "src")
    services = open_services(_settings(tmp_path), housekeeping=False)
    try:
        started = services.index.start_directory(IndexDirectoryInput(directory_path="src"))
        assert services.index.jobs.wait(started.job_id, 120)
        job_events = services.stores.audit.list(started.job_id)
        assert [e.operation for e in job_events] == ["index_directory"]
        assert job_events[0].details["files_indexed"] == 9
        out = services.index.index_file(IndexFileInput(file_path="src/sample.py", force=True))
        assert out.status == "indexed"
        assert [e.operation for e in services.stores.audit.list("src/sample.py")] == ["index_file"]
        skipped = services.index.index_file(IndexFileInput(file_path="src/sample.py"))
        assert skipped.status == "skipped"
        assert len(services.stores.audit.list("src/sample.py")) == 1  # no change, no event
    finally:
        services.close()


def test_index_state_survives_restart(tmp_path: Path) -> None:
    shutil.copytree(REPO / "tests" / "fixtures" / "languages", tmp_path / "proj" / "src")
    services = open_services(_settings(tmp_path), housekeeping=False)
    try:
        started = services.index.start_directory(IndexDirectoryInput(directory_path="src"))
        services.index.jobs.wait(started.job_id, 120)
        before = services.index.totals()
    finally:
        services.close()
    services = open_services(_settings(tmp_path))
    try:
        assert services.index.totals() == before
        assert services.index.index_file(IndexFileInput(file_path="src/sample.go")).status == "skipped"
        finished = services.index.jobs.get(started.job_id)
        assert finished is not None and finished.status == "completed"  # job state read back from disk
    finally:
        services.close()


def test_unreadable_file_is_an_error_not_a_skip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root reads any file, so the read failure is injected; the stores stay real."""
    shutil.copytree(REPO / "tests" / "fixtures" / "languages", tmp_path / "proj" / "src")
    services = open_services(_settings(tmp_path), housekeeping=False)
    real_read = safe_read.read_source

    def failing_read(path: Path, *args: Any, **kwargs: Any) -> bytes:
        if path.name == "sample.rs":
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(paths_module, "read_source", failing_read)
    try:
        with pytest.raises(ValidationError) as info:
            services.index.index_file(IndexFileInput(file_path="src/sample.rs"))
        assert info.value.code == "VAL_FILE_UNREADABLE" and "Permission denied" in info.value.message
        started = services.index.start_directory(IndexDirectoryInput(directory_path="src"))
        services.index.jobs.wait(started.job_id, 120)
        job = services.index.jobs.get(started.job_id)
        assert job is not None and job.status == "completed"
        assert job.stats["files_failed"] == 1 and job.stats["files_indexed"] == 8
        assert job.stats["failures"][0]["file"] == "src/sample.rs"
    finally:
        services.close()


def test_housekeeping_freezes_the_start_up_objects_once_the_model_is_loaded(tmp_path: Path) -> None:
    """Full collections then skip the ~150,000 objects a started server keeps for its lifetime
    (housekeeping.settle_heap): they were a 40-60 ms pause inside one request in ~500."""
    gc.unfreeze()  # whatever an earlier test in this process froze
    services = open_services(_settings(tmp_path), housekeeping=True)
    try:
        assert services.stores.embedder.wait_ready(60)
        deadline = time.monotonic() + 30
        while gc.get_freeze_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        frozen = gc.get_freeze_count()
        assert frozen > 50_000
        time.sleep(4.5)  # two more ticks: settled once, not at every tick
        assert gc.get_freeze_count() <= frozen  # frozen objects that die leave it; none joined
    finally:
        services.close()
        gc.unfreeze()
