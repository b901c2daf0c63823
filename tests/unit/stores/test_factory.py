"""Backend selection: one backend per settings section, from its address; contradictions refused."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from memory_service.settings import GraphSettings, RedisSettings, Settings, VectorSettings
from memory_service.stores import factory


def _settings(tmp_path: Path, **override: object) -> Settings:
    return Settings(data_dir=tmp_path / "data", project_root=tmp_path, project="demo proj", **override)  # type: ignore[arg-type]


def test_defaults_are_embedded(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    assert (s.qdrant.backend, s.graph.backend, s.redis.backend) == ("edge", "embedded", "sqlite")
    assert s.qdrant.collection_prefix == "demo_proj__" and s.redis.key_prefix == "memory:demo_proj:"


@pytest.mark.parametrize(
    ("override", "section", "backend"),
    [
        ({"qdrant": VectorSettings(url="http://127.0.0.1:6333")}, "qdrant", "server"),
        ({"graph": GraphSettings(uri="bolt://127.0.0.1:7687")}, "graph", "neo4j"),
        ({"redis": RedisSettings(url="redis://127.0.0.1:6379")}, "redis", "redis"),
    ],
)
def test_an_address_selects_its_server_alone(
    tmp_path: Path, override: dict[str, object], section: str, backend: str
) -> None:
    s = _settings(tmp_path, **override)
    chosen = {"qdrant": s.qdrant.backend, "graph": s.graph.backend, "redis": s.redis.backend}
    assert chosen.pop(section) == backend
    assert set(chosen.values()) <= {"edge", "embedded", "sqlite"}  # the others stay embedded


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"qdrant": VectorSettings(backend="server")}, "MEMORY_QDRANT__URL is not set"),
        ({"graph": GraphSettings(backend="neo4j")}, "MEMORY_GRAPH__URI is not set"),
        ({"redis": RedisSettings(backend="redis")}, "MEMORY_REDIS__URL is not set"),
        ({"graph": GraphSettings(backend="embedded", uri="bolt://x:1")}, "unset one of them"),
    ],
)
def test_contradictions_are_refused(tmp_path: Path, override: dict[str, object], message: str) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        _settings(tmp_path, **override)
    assert message in str(info.value)


def test_every_backend_has_an_opener() -> None:
    assert set(factory.VECTORS) == {"edge", "server"}
    assert set(factory.GRAPHS) == {"embedded", "neo4j"}
    assert set(factory.CACHES) == set(factory.QUEUES) == {"sqlite", "redis"}


def test_long_project_names_make_bounded_distinct_slugs() -> None:
    from memory_service.project import project_slug

    a, b = project_slug("x" * 100), project_slug("x" * 99 + "y")
    assert len(a) == len(b) == 48 and a != b
    assert project_slug("my project/v2") == "my_project_v2" and project_slug("") == "default"
