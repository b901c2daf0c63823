"""Services on real engines and the real model, opened in-process without housekeeping."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memory_service.app import Services, open_services
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import PROFILE, SERVERS, profile_settings, require_model


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    """A fresh data directory with the model loaded; closed after the test."""
    settings = Settings(
        data_dir=tmp_path / "data",
        project_root=tmp_path,
        project="integration",
        embedding=EmbeddingSettings(model_path=require_model()),
    )
    with opened_services(settings) as opened:
        yield opened


@contextmanager
def opened_services(settings: Settings) -> Iterator[Services]:
    """The services of ``settings``' data directory with the model loaded; closed on exit."""
    opened = open_services(settings, housekeeping=False)
    try:
        assert opened.stores.embedder.wait_ready(60), opened.stores.embedder.failure_reason
        yield opened
    finally:
        opened.close()


@contextmanager
def reopened(data: Path, project: str) -> Iterator[Services]:
    """The services of ``data`` on the active test profile's backends (opening replays the write
    journal, as a restarted server does); closed on exit."""
    settings = Settings(
        data_dir=data,
        project_root=data.parent,
        project=project,
        embedding=EmbeddingSettings(model_path=require_model()),
        **profile_settings(data),
    )
    with opened_services(settings) as opened:
        yield opened


@pytest.fixture
def profile_servers(request: pytest.FixtureRequest) -> None:
    """On the server profile, the session's Neo4j and Redis (tests/servers) for ``reopened``."""
    if PROFILE == "server":
        SERVERS["neo4j"] = request.getfixturevalue("neo4j_uri")
        SERVERS["redis"] = request.getfixturevalue("redis_url")
