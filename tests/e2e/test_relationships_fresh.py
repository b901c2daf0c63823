"""Relationships are visible from the first one (issue 8, item 6), in one server process.

On a fresh data directory no relationship table exists until the first relationship is written.
Reading relationships before that must be an empty answer, and the first relationship must show
at once (no restart), in ``memory_get`` and in the statistics.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memory_service import server as server_module
from memory_service.app import Services
from memory_service.server import build_server
from memory_service.settings import Settings
from tests.conftest import require_model
from tests.e2e.conftest import call_ok, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
async def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Client, Services]]:
    """A server on an empty data directory, and the services it opened (to read its statistics)."""
    opened: list[Services] = []
    real_open = server_module.open_services

    def open_and_keep(settings: Settings, **kwargs: Any) -> Services:
        services = real_open(settings, **kwargs)
        opened.append(services)
        return services

    monkeypatch.setattr(server_module, "open_services", open_and_keep)
    async with Client(build_server(make_settings(tmp_path, require_model()))) as client:
        yield client, opened[0]


async def _relationships(client: Client, memory_id: str) -> set[tuple[str, str, str]]:
    got = await call_ok(client, "memory_get", {"memory_id": memory_id, "include_relationships": True})
    assert "warnings" not in got or not got["warnings"], got.get("warnings")
    return {(r["type"], r["direction"], r["other_id"]) for r in got["relationships"]}


async def test_first_relationship_is_visible_in_the_same_process(fresh: tuple[Client, Services]) -> None:
    client, services = fresh
    a = (await call_ok(client, "memory_add", {"type": "design", "content": "Sessions live in Redis."}))[
        "memory_id"
    ]
    assert await _relationships(client, a) == set()  # no relationship table yet: empty, no warning

    b = (
        await call_ok(
            client,
            "memory_add",
            {
                "type": "requirements",
                "content": "A session survives a restart of one web node.",
                "relationships": [{"type": "RELATES_TO", "target_id": a}],
            },
        )
    )["memory_id"]

    assert await _relationships(client, a) == {("RELATES_TO", "incoming", b)}
    assert await _relationships(client, b) == {("RELATES_TO", "outgoing", a)}
    stats = await anyio.to_thread.run_sync(services.stats)
    assert stats["relationships"] == {
        "total": 1,
        "by_type": {"RELATES_TO": 1},
        "nodes_by_label": {"Memory": 2},
    }
    assert stats["sync"] == {"pending": 0, "inflight": 0, "failed": 0, "dead": 0}
    counted = await anyio.to_thread.run_sync(services.stores.graph.count_edges_by_type)
    assert counted == {"RELATES_TO": 1}


async def test_delete_before_the_first_relationship_does_not_block_the_graph(
    fresh: tuple[Client, Services],
) -> None:
    """A delete queues "remove its edges" before any relationship table exists; it must apply, not
    fail until dead while the relationships queued after it wait."""
    client, services = fresh
    gone = (await call_ok(client, "memory_add", {"type": "session", "content": "Tried sticky sessions."}))[
        "memory_id"
    ]
    deleted = await call_ok(client, "memory_delete", {"memory_id": gone})
    assert deleted["relationships_removed"] == 0 and not deleted.get("warnings")
    a = (await call_ok(client, "memory_add", {"type": "design", "content": "Tokens are signed JWTs."}))[
        "memory_id"
    ]
    b = (
        await call_ok(
            client,
            "memory_add",
            {
                "type": "requirements",
                "content": "Tokens expire after fifteen minutes.",
                "relationships": [{"type": "DEPENDS_ON", "target_id": a}],
            },
        )
    )["memory_id"]
    assert await _relationships(client, a) == {("DEPENDS_ON", "incoming", b)}
    stats = await anyio.to_thread.run_sync(services.stats)
    assert stats["relationships"]["by_type"] == {"DEPENDS_ON": 1}
    assert stats["sync"] == {"pending": 0, "inflight": 0, "failed": 0, "dead": 0}
