"""Server backends are not in this version: asking for one is refused, never silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_service.core.errors import ValidationError
from memory_service.settings import GraphSettings, RedisSettings, Settings, VectorSettings
from memory_service.stores.factory import build_stores


@pytest.mark.parametrize(
    "override",
    [
        {"qdrant": VectorSettings(url="http://127.0.0.1:6333")},
        {"graph": GraphSettings(uri="bolt://127.0.0.1:7687")},
        {"redis": RedisSettings(url="redis://127.0.0.1:6379")},
        {"qdrant": VectorSettings(backend="server")},
    ],
)
def test_server_settings_are_refused(tmp_path: Path, override: dict) -> None:
    settings = Settings(data_dir=tmp_path / "data", project_root=tmp_path, **override)
    with pytest.raises(ValidationError) as info:
        build_stores(settings)
    assert info.value.code == "VAL_BACKEND_UNSUPPORTED"
    assert not (tmp_path / "data").exists()  # nothing opened, nothing written
