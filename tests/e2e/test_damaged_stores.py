"""Store files damaged or removed while the server was stopped (issue 12, item 3).

One data directory is seeded once (memories with a derivable and an explicit relationship, indexed
code); each test damages a copy of it, starts the real server through an MCP client, and checks
what health says, which tools answer SERVICE_UNAVAILABLE, that memories stay readable and
searchable, and that ``memory-cli repair`` (run as a user does) brings the graph back.
Embedded profile only: the damages are to the embedded engines' files.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from memory_service.settings import Settings
from tests.conftest import NOT_APPLICABLE, PROFILE, REPO, require_model
from tests.e2e.conftest import TRACE_PROJECT, call_error, call_ok, make_settings

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} damages the embedded engines' files"),
]
REQ = "REQ-DMG-001"


@pytest.fixture(scope="module")
async def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("seed")
    shutil.copytree(TRACE_PROJECT, root, dirs_exist_ok=True)
    async with Client(build_server(_settings(root))) as client:
        job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
        assert job["job"]["status"] == "completed", job
        req = await _add(client, "requirements", f"{REQ}: a login session survives a web node restart.",
                         {"requirement_id": REQ})  # fmt: skip
        design = await _add(client, "design", f"Sessions are kept in a shared store to satisfy {REQ}.")
        note = await _add(
            client, "session", "Tried sticky sessions first; they broke on deploys.",
            relationships=[{"type": "RELATES_TO", "target_id": design}],
        )  # fmt: skip
        related = await _related(client, design)
        assert ("SATISFIES", req) in related and ("RELATES_TO", note) in related, related
    return root, {"req": req, "design": design, "note": note}


def _settings(root: Path) -> Settings:
    return make_settings(root, require_model())


async def _add(
    client: Client, kind: str, content: str, metadata: dict[str, Any] | None = None, **extra: Any
) -> str:
    body = {"type": kind, "content": content, "metadata": metadata or {}, **extra}
    return str((await call_ok(client, "memory_add", body))["memory_id"])


async def _related(client: Client, memory_id: str) -> set[tuple[str, str]]:
    got = await call_ok(client, "get_related", {"entity_id": memory_id})
    return {(r["relationship"], r["entity_id"]) for r in got["related"]}


@pytest.fixture
def copy(seeded: tuple[Path, dict[str, str]], tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "project"
    shutil.copytree(seeded[0], root, symlinks=True)
    yield root, seeded[1]
    for path in root.rglob("*"):  # undo any immutable flag so the tmp dir can be removed
        _writable(path)


def _read_only(path: Path) -> None:
    """Read-only for whoever runs the tests: root ignores file modes, not the immutable flag."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        path.chmod(0o444)


def _writable(path: Path) -> None:
    if os.geteuid() == 0 and path.is_file():
        subprocess.run(["chattr", "-i", str(path)], check=False, capture_output=True)
    with contextlib.suppress(OSError):
        path.chmod(0o644 if path.is_file() else 0o755)


def _cli(*args: str, root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env.update({
        "MEMORY_DATA_DIR": str(root / "data"), "MEMORY_PROJECT_ROOT": str(root), "MEMORY_PROJECT": "test",
        "MEMORY_EMBEDDING__MODEL_PATH": str(require_model()), "HF_HUB_OFFLINE": "1",
    })  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "memory_service.cli.main", *args],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@contextlib.asynccontextmanager
async def _server(root: Path) -> AsyncIterator[Client]:
    async with Client(build_server(_settings(root))) as client:
        yield client


async def _health(client: Client) -> tuple[dict[str, str], list[str]]:
    stats = await call_ok(client, "memory_statistics", {})
    return stats["health"], stats["warnings"]


async def _memories_usable(client: Client, ids: dict[str, str]) -> None:
    got = await call_ok(client, "memory_get", {"memory_id": ids["design"]})
    assert got["memory"]["content"].startswith("Sessions are kept")
    found = await call_ok(client, "memory_search", {"query": "shared session store web node restart"})
    assert ids["design"] in {r["memory_id"] for r in found["results"]}


async def _graph_unavailable(client: Client, ids: dict[str, str]) -> None:
    health, warnings = await _health(client)
    assert health["graph"] == "unavailable", health
    assert any("memory-cli repair" in w for w in warnings), warnings
    error = await call_error(client, "get_related", {"entity_id": ids["design"]})
    assert error["category"] == "SERVICE_UNAVAILABLE", error
    error = await call_error(client, "graph_query", {"cypher": "MATCH (n) RETURN count(n) AS n"})
    assert error["category"] == "SERVICE_UNAVAILABLE", error
    await _memories_usable(client, ids)
    # Writes go on: the record is stored, its graph change waits in the outbox.
    added = await _add(client, "session", "Written while the graph was damaged.")
    assert (await call_ok(client, "memory_get", {"memory_id": added}))["memory"]["status"] == "active"


def _repair(root: Path, *extra: str) -> dict[str, Any]:
    done = _cli("repair", "--json", *extra, root=root)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    return dict(json.loads(done.stdout))


def _graph_file(root: Path) -> Path:
    """The embedded graph database (``data/graph``) and, beside it, its WAL (``data/graph.wal``)."""
    return root / "data" / "graph"


# --------------------------------------------------------------------------- the graph


async def test_read_only_graph_refuses_to_start_and_recovers_when_writable(
    copy: tuple[Path, dict[str, str]],
) -> None:
    root, ids = copy
    graph_file = _graph_file(root)
    _read_only(graph_file)
    with pytest.raises(Exception) as refused_start:  # the MCP initialize fails with the reason
        async with _server(root):
            pass
    text = repr(refused_start.value)
    assert f"The store file {graph_file} cannot be written" in text and "chattr -i" in text, text
    # repair does not move a healthy graph aside for a permission problem: it says what to fix.
    refused = _cli("repair", root=root)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert "chattr -i" in refused.stderr or "chmod u+w" in refused.stderr, refused.stderr
    _writable(graph_file)
    async with _server(root) as client:
        health, _ = await _health(client)
        assert health["graph"] == "ok", health
        related = await _related(client, ids["design"])
        assert ("SATISFIES", ids["req"]) in related and ("RELATES_TO", ids["note"]) in related


async def test_corrupt_graph_is_set_aside_and_rebuilt_by_repair(copy: tuple[Path, dict[str, str]]) -> None:
    root, ids = copy
    graph_file = _graph_file(root)
    with open(graph_file, "r+b") as f:
        f.write(b"\xff" * 64)  # the header: the engine refuses the file
    async with _server(root) as client:
        await _graph_unavailable(client, ids)
    outcome = _repair(root)
    assert outcome["status"] == "completed", outcome
    moved = Path(outcome["graph_files"]["moved_to"])
    assert (moved / "graph").read_bytes()[:64] == b"\xff" * 64  # kept, not deleted
    assert outcome["graph_files"]["salvaged"] is False
    # The 3 seeded memories rebuilt from their records; the one written while the graph was
    # damaged came from the outbox, where its graph change had waited.
    assert outcome["graph_nodes_repaired"] == 3, outcome
    assert outcome["graph"]["memory_nodes"] == outcome["graph"]["memories"] == 4, outcome
    assert "--full" in outcome["code_index"]["hint"], outcome["code_index"]  # the code graph went too
    async with _server(root) as client:
        health, warnings = await _health(client)
        assert health["graph"] == "ok" and health["stores"] == "ok", (health, warnings)
        related = await _related(client, ids["design"])
        # Derivable from the records: back. Given only at memory_add: in the set-aside file.
        assert ("SATISFIES", ids["req"]) in related, related
        job = await call_ok(client, "reindex", {"scope": "full", "directory_path": ".", "wait": True})
        assert job["job"]["status"] == "completed", job
        stats = await call_ok(client, "memory_statistics", {})
        assert stats["relationships"]["nodes_by_label"].get("File", 0) > 0, stats["relationships"]


async def test_truncated_wal_is_salvaged_with_what_was_checkpointed(
    copy: tuple[Path, dict[str, str]],
) -> None:
    root, ids = copy
    graph_file = _graph_file(root)
    # A process that dies without closing leaves its last commits in graph.wal.
    script = (
        "import os, sys\nfrom memory_service.core.ports import GraphNode\n"
        "from memory_service.stores.graph.ladybug import LadybugGraphStore\n"
        "g = LadybugGraphStore(sys.argv[1])\n"
        "g.upsert_nodes([GraphNode('Memory', f'late-{i}', {'name': 'late'}) for i in range(50)])\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(graph_file)], cwd=REPO, check=True)
    wal = graph_file.with_name("graph.wal")
    assert wal.stat().st_size > 100, "the engine left no WAL to cut"
    os.truncate(wal, wal.stat().st_size - 37)  # what a power cut leaves: the end missing
    async with _server(root) as client:
        await _graph_unavailable(client, ids)
    outcome = _repair(root)
    assert outcome["status"] == "completed", outcome
    assert outcome["graph_files"]["salvaged"] is True, outcome["graph_files"]
    assert Path(outcome["graph_files"]["moved_to"], "graph.wal").exists()
    assert outcome["code_index"]["hint"] == "The code index is intact.", outcome["code_index"]
    async with _server(root) as client:
        related = await _related(client, ids["design"])
        # The main file held everything checkpointed, explicit relationships included.
        assert ("SATISFIES", ids["req"]) in related and ("RELATES_TO", ids["note"]) in related, related
        health, _ = await _health(client)
        assert health["graph"] == "ok" and health["stores"] == "ok", health


async def test_deleted_graph_is_reported_until_repair_rebuilds_it(copy: tuple[Path, dict[str, str]]) -> None:
    root, ids = copy
    for path in _graph_file(root).parent.glob("graph*"):
        path.unlink()
    async with _server(root) as client:
        health, warnings = await _health(client)
        assert health["stores"] == "degraded", health
        assert any("relationships" in w and "memory-cli repair" in w for w in warnings), warnings
        error = await call_error(client, "get_related", {"entity_id": ids["design"]})
        assert error["code"] == "NF_ENTITY", error  # the empty graph, reported above
        await _memories_usable(client, ids)
    outcome = _repair(root)
    assert outcome["status"] == "completed" and "graph_lost" in outcome["alarms_cleared"], outcome
    async with _server(root) as client:
        health, _ = await _health(client)
        assert health["stores"] == "ok", health
        assert ("SATISFIES", ids["req"]) in await _related(client, ids["design"])


# --------------------------------------------------------------------------- vectors, SQLite, lock


async def test_removed_memories_collection_refuses_an_empty_start(copy: tuple[Path, dict[str, str]]) -> None:
    root, _ = copy
    shutil.rmtree(root / "data" / "vectors" / "memories")
    with pytest.raises(Exception) as failed:  # initialize fails with the reason
        async with _server(root):
            pass
    assert "SVC_STORE_MISSING" in repr(failed.value) or "primary store" in str(failed.value), failed.value
    health = _cli("health", "--json", root=root)
    assert health.returncode == 1 and "memory-cli repair --accept-empty" in health.stderr, health.stderr
    assert not (root / "data" / "vectors" / "memories").exists()  # nothing created in its place
    outcome = _repair(root, "--accept-empty")
    assert outcome["status"] == "completed", outcome
    async with _server(root) as client:
        stats = await call_ok(client, "memory_statistics", {})
        assert stats["memories"]["total"] == 0 and stats["health"]["stores"] == "ok", stats


async def test_refusal_names_the_memories_held_at_the_last_stop(copy: tuple[Path, dict[str, str]]) -> None:
    root, _ = copy
    async with _server(root) as client:  # 3 memories at this start; 5 when it stops
        await _add(client, "session", "Written after the last start, before a clean stop.")
        await _add(client, "session", "And another one, so the counts differ.")
    shutil.rmtree(root / "data" / "vectors" / "memories")
    health = _cli("health", "--json", root=root)
    assert health.returncode == 1, health.stdout + health.stderr
    text = " ".join(health.stderr.split())  # rich wraps the line
    assert "held 5 memories when it was last stopped" in text, health.stderr


async def test_removed_code_collections_are_reported_and_reindexed(copy: tuple[Path, dict[str, str]]) -> None:
    root, ids = copy
    for name in ("functions", "classes"):
        shutil.rmtree(root / "data" / "vectors" / name)
    async with _server(root) as client:
        health, warnings = await _health(client)
        assert health["stores"] == "degraded" and any("code index is lost" in w for w in warnings), warnings
        await _memories_usable(client, ids)
        job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
        assert job["job"]["status"] == "completed" and job["job"]["stats"]["files_indexed"] > 0, job
        health, warnings = await _health(client)
        assert health["stores"] == "ok", warnings


async def test_removed_local_db_is_an_alarm_until_repair(copy: tuple[Path, dict[str, str]]) -> None:
    root, ids = copy
    for path in (root / "data").glob("local.sqlite3*"):
        path.unlink()
    async with _server(root) as client:
        health, warnings = await _health(client)
        assert health["stores"] == "degraded", health
        assert any("audit log" in w and "memory-cli repair" in w for w in warnings), warnings
        await _memories_usable(client, ids)
        assert ("SATISFIES", ids["req"]) in await _related(client, ids["design"])
    done = _cli("health", "--json", root=root)
    report = json.loads(done.stdout)
    stores = next(c for c in report["components"] if c["component"] == "stores")
    assert stores["state"] == "degraded" and "local.sqlite3" in stores["detail"], report
    outcome = _repair(root)
    assert "local_db_lost" in outcome["alarms_cleared"], outcome
    async with _server(root) as client:
        health, _ = await _health(client)
        assert health["stores"] == "ok", health


async def test_read_only_owner_lock_still_starts(copy: tuple[Path, dict[str, str]]) -> None:
    root, ids = copy
    lock = root / "data" / "owner.lock"
    lock.touch()
    _read_only(lock)
    async with _server(root) as client:
        await _memories_usable(client, ids)
        # ...and still excludes a second owner.
        second = _cli("stats", root=root)
        assert second.returncode == 2 and "in use" in second.stderr and "Traceback" not in second.stderr
