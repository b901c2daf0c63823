"""Where the embedder looks for weights: the offline switches and fastembed's cache folder."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from memory_service.embeddings.model_source import fastembed_cache_dir, offline_flag


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "FASTEMBED_CACHE_PATH"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
@pytest.mark.parametrize("name", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_offline_switches_are_read_as_huggingface_hub_reads_them(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    assert offline_flag() == name


@pytest.mark.parametrize("value", ["", "0", "false", "no"])
def test_other_values_allow_the_network(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert offline_flag() is None


def test_cache_dir_follows_fastembed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastembed_cache_dir() == Path(tempfile.gettempdir()) / "fastembed_cache"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path))
    assert fastembed_cache_dir() == tmp_path
