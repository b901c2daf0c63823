"""Shared test fixtures: the real embedding model, per-test data directories, MCP clients."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def model_path() -> Path:
    """The ONNX export of all-MiniLM-L6-v2 (tests never download weights)."""
    return Path(os.environ.get("MEMORY_TEST_MODEL_PATH") or SHARED / "models" / "all-MiniLM-L6-v2-onnx")


def require_model() -> Path:
    path = model_path()
    if not (path / "model.onnx").exists():
        message = (
            f"embedding model not found at {path}: set MEMORY_TEST_MODEL_PATH to a folder holding "
            "the ONNX export of all-MiniLM-L6-v2"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def model_dir() -> Path:
    return require_model()


def server_env(data_dir: Path, *, model: Path | None) -> dict[str, str]:
    """Environment for a server subprocess: isolated data dir, the local model, no network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update(
        {
            "MEMORY_DATA_DIR": str(data_dir),
            "MEMORY_PROJECT_ROOT": str(data_dir),
            "MEMORY_PROJECT": "e2e",
            "HF_HUB_OFFLINE": "1",
        }
    )
    env["MEMORY_EMBEDDING__MODEL_PATH"] = str(model) if model else str(data_dir / "no-model-here")
    return env
