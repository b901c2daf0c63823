"""Degradation (seed 001 §6.3, issue 12): a store pulled out from under a running server.

* Neo4j down (server profile; the test owns its harness, stops it mid-traffic and starts it
  again on the same port): memory tools keep working, graph tools answer SERVICE_UNAVAILABLE
  "Graph queries disabled; vector search still works", graph changes wait in the outbox and are
  applied by housekeeping once Neo4j is back. The harness keeps no data across a restart, so it
  comes back empty: what the outbox replays (every write made during the outage, nodes and edges)
  must be there; what was in the graph before is the business of normalize's repair.
* Redis down (server profile; the test owns its redis-server, AOF on): no tool call fails,
  graph sync goes through the local queue, and new messages go to Redis again once it is back.
* Vector store unwritable (its files made immutable under the running server): memory_add
  fails with SERVICE_UNAVAILABLE and leaves nothing behind. Server profile only for now: the
  embedded engine dies with SIGBUS (marked xfail).
* The embedded graph cannot stop at run time: its outage is a graph file that cannot be opened
  at start, after which the graph tools answer as they do with Neo4j down.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memory_service.core.graph.down import GRAPH_DISABLED
from memory_service.server import build_server
from memory_service.settings import GraphSettings, RedisSettings, Settings
from tests.conftest import NOT_APPLICABLE, PROFILE, SERVERS, missing, profile_settings, require_model
from tests.e2e.conftest import call_error, call_ok, make_settings
from tests.servers.neo4j_harness import INSTALL_HINT, Neo4jHarness, launcher_command
from tests.servers.redis_server import RedisServer

pytestmark = pytest.mark.anyio
server_only = pytest.mark.skipif(
    PROFILE != "server", reason=f"{NOT_APPLICABLE} Neo4j and Redis run only on the server profile"
)


def _settings(root: Path, **sections: Any) -> Settings:
    """The test profile's settings with some sections replaced (validated again: backends are
    derived from the addresses)."""
    base = make_settings(root, require_model()).model_dump(exclude_unset=True)
    base.update(profile_settings(root / "data"), **sections)
    return Settings(**base)


@asynccontextmanager
async def _server(settings: Settings) -> AsyncIterator[Client]:
    async with Client(build_server(settings)) as client:
        yield client


async def _add(client: Client, content: str, **extra: Any) -> str:
    return str(
        (await call_ok(client, "memory_add", {"type": "design", "content": content, **extra}))["memory_id"]
    )


async def _sync(client: Client) -> dict[str, int]:
    return dict((await call_ok(client, "memory_statistics", {}))["sync"])


async def _wait_synced(client: Client, timeout: float = 180.0) -> None:
    with anyio.fail_after(timeout):
        while (sync := await _sync(client))["pending"] or sync["inflight"]:
            await anyio.sleep(0.5)


async def _graph(client: Client) -> tuple[set[str], set[tuple[str, str, str]]]:
    nodes = await call_ok(
        client, "graph_query", {"cypher": "MATCH (n:Memory) WHERE n.ns = $namespace AND n.type IS NOT NULL "
                                          "RETURN n.id AS id", "limit": 1000},
    )  # fmt: skip
    edges = await call_ok(
        client, "graph_query", {"cypher": "MATCH (a:Memory)-[e]->(b:Memory) WHERE a.ns = $namespace "
                                          "RETURN a.id AS a, type(e) AS t, b.id AS b", "limit": 1000},
    )  # fmt: skip
    return {r["id"] for r in nodes["results"]}, {(r["a"], r["t"], r["b"]) for r in edges["results"]}


GRAPH_CALLS = [
    ("graph_query", {"cypher": "MATCH (n) RETURN count(n) AS n"}),
    ("get_related", {"entity_id": "00000000-0000-4000-8000-000000000001"}),
    ("trace_requirements", {"requirement_id": "REQ-DEG-001"}),
    ("get_design_context", {"component_id": "cachelayer"}),
    ("check_consistency", {"component_id": "cachelayer"}),
    ("validate_fix", {"fix_description": "retry the call", "component_id": "cachelayer"}),
]
REQUIREMENT = {
    "type": "requirements",
    "content": "The service keeps working when a store is down.",
    "metadata": {"requirement_id": "REQ-DEG-001", "title": "Degrade", "status": "Approved"},
}
COMPONENT = {
    "type": "component",
    "content": "Cache layer component; implements REQ-DEG-001.",
    "metadata": {"component_id": "cachelayer", "name": "Cache layer", "file_path": "cache.py"},
}


@server_only
async def test_neo4j_down_then_back(tmp_path: Path) -> None:
    command = launcher_command()
    if command is None:
        missing(INSTALL_HINT)
    harness = Neo4jHarness(command)
    harness.start()
    harness.pin_port()
    settings = _settings(tmp_path, graph=GraphSettings(uri=harness.uri, namespace="outage"))
    try:
        async with _server(settings) as client:
            for body in (REQUIREMENT, COMPONENT):  # so the graph tools get as far as the graph
                await call_ok(client, "memory_add", body)
            before = await _add(client, "The cache layer wraps Redis behind the Cache port.")
            gone = await _add(client, "A note about the cache layer that will be deleted.")
            harness.stop()

            # Writes are acknowledged; their graph changes wait in the outbox.
            during = await _add(
                client, "Outage design: the queue falls back to SQLite.",
                relationships=[{"type": "refines", "target_id": before}],
            )  # fmt: skip
            child = await _add(
                client, "Outage detail: local queue drained before Redis again.",
                relationships=[{"type": "refines", "target_id": during}],
            )  # fmt: skip
            await call_ok(client, "memory_update", {"memory_id": during, "metadata": {"status": "accepted"}})
            await call_ok(client, "memory_delete", {"memory_id": gone})
            found = await call_ok(client, "memory_search", {"query": "queue falls back to SQLite"})
            assert during in [r["memory_id"] for r in found["results"]]
            got = await call_ok(client, "memory_get", {"memory_id": child, "include_relationships": True})
            assert got["warnings"] and "relationships unavailable" in got["warnings"][0]
            assert (await _sync(client))["pending"] >= 4

            for tool, args in GRAPH_CALLS:
                error = await call_error(client, tool, args)
                assert error["category"] == "SERVICE_UNAVAILABLE", (tool, error)
                assert error["code"] == "SVC_GRAPH_STORE" and GRAPH_DISABLED in error["message"], (
                    tool,
                    error,
                )
                assert "memory_search" in error["suggestion"] and "MEMORY_GRAPH__URI" in error["suggestion"]

            harness.start()  # same port; the harness comes back with an empty graph
            await _wait_synced(client)
            nodes, edges = await _graph(client)
            assert {during, child} <= nodes and gone not in nodes
            assert {(child, "REFINES", during), (during, "REFINES", before)} <= edges, edges
            assert (await _sync(client))["failed"] == 0
    finally:
        harness.stop()


@server_only
async def test_redis_down_then_back(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path / "redis", appendonly=True)
    redis.start()
    settings = _settings(
        tmp_path, redis=RedisSettings(url=redis.url, key_prefix="deg:"),
        graph=GraphSettings(uri=SERVERS["neo4j"], namespace="redisdown"),
    )  # fmt: skip
    try:
        async with _server(settings) as client:
            ids = [await _add(client, f"Before the Redis outage, note {i}.") for i in range(2)]
            redis.stop()
            for i in range(3):  # nothing fails because of the cache or the queue
                ids.append(await _add(client, f"During the Redis outage, note {i}.", relationships=[
                    {"type": "refines", "target_id": ids[-1]}]))  # fmt: skip
                await call_ok(client, "memory_search", {"query": f"Redis outage note {i}"})
            health = (await call_ok(client, "memory_statistics", {}))["health"]
            assert health["cache"] == "degraded" and health["queue"] == "degraded", health
            await _wait_synced(client)  # applied through the local queue (Redis was seen empty)
            redis.start()
            ids.append(await _add(client, "After the Redis outage.", relationships=[
                {"type": "refines", "target_id": ids[-1]}]))  # fmt: skip
            await _wait_synced(client)
            nodes, edges = await _graph(client)
            assert set(ids) <= nodes
            assert {(ids[i + 1], "REFINES", ids[i]) for i in range(1, len(ids) - 1)} <= edges
            health = (await call_ok(client, "memory_statistics", {}))["health"]
            assert health["queue"] == "ok" and health["cache"] == "ok", health
    finally:
        redis.stop()


def _freeze(paths: list[Path], *, on: bool) -> None:
    """Make files and directories unwritable under a running server: ``chattr +i`` (immutable,
    which binds root too; the tests often run as root) or, without it, read-only modes."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            missing("chattr (e2fsprogs) is needed to make the vector store unwritable as root")
        subprocess.run(["chattr", "+i" if on else "-i", *map(str, paths)], check=True)
        return
    for path in paths:
        path.chmod((stat.S_IRUSR | (stat.S_IXUSR if path.is_dir() else 0)) if on else stat.S_IRWXU)


@pytest.mark.xfail(
    PROFILE != "server",
    run=False,  # it would take the test process down with it
    reason="known defect: qdrant-edge memory-maps its segments, and files made unwritable under a "
    "running server end the process with SIGBUS instead of a SVC_VECTOR_STORE error",
)
async def test_vector_store_unwritable_fails_cleanly(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, require_model())
    async with _server(settings) as client:
        await _add(client, "A memory written while the disk was fine.")
        before = await call_ok(client, "memory_statistics", {})
        audit_before = await call_ok(client, "memory_audit", {"limit": 100})
        vector_root = Path(settings.qdrant.path or "") if PROFILE == "server" else (
            settings.resolved_data_dir / "vectors")  # fmt: skip
        paths = [*vector_root.rglob("*"), vector_root]
        _freeze(paths, on=True)
        try:
            error = await call_error(
                client, "memory_add", {"type": "design", "content": "Lost to a read-only disk."}
            )
        finally:
            _freeze(paths, on=False)
        assert error["category"] == "SERVICE_UNAVAILABLE" and error["code"] == "SVC_VECTOR_STORE", error
        after = await call_ok(client, "memory_statistics", {})
        assert after["sync"] == before["sync"]
        assert (await call_ok(client, "memory_audit", {"limit": 100}))["total"] == audit_before["total"]
        found = await call_ok(client, "memory_search", {"query": "Lost to a read-only disk"})
        assert all("read-only disk" not in r["content"] for r in found["results"])


@pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} the embedded graph's files")
async def test_embedded_graph_unreadable_graph_tools_say_what_still_works(tmp_path: Path) -> None:
    """The embedded graph cannot stop at run time; a graph file that cannot be opened at start is
    its outage (the server starts without it, stores/resilience/unavailable.py)."""
    settings = make_settings(tmp_path, require_model())
    settings.resolved_data_dir.mkdir(parents=True)
    (settings.resolved_data_dir / "graph").write_bytes(b"not a graph database" * 512)
    async with _server(settings) as client:
        for body in (REQUIREMENT, COMPONENT):
            await call_ok(client, "memory_add", body)
        memory = await _add(client, "Written while the graph file is unreadable.")
        assert (await _sync(client))["pending"] >= 1  # kept for when the graph is repaired
        found = await call_ok(client, "memory_search", {"query": "graph file is unreadable"})
        assert memory in [r["memory_id"] for r in found["results"]]
        for tool, args in GRAPH_CALLS:
            error = await call_error(client, tool, args)
            assert error["category"] == "SERVICE_UNAVAILABLE" and GRAPH_DISABLED in error["message"], error
            assert error["code"].startswith("SVC_GRAPH_STORE") and "memory_search" in error["suggestion"]
