"""Damage never loses acknowledged data silently: 24 kinds of damage, each detected and repaired;
6 read-only files (and a read-only folder), each refused at start-up with nothing changed.

The kinds: {deleted, emptied, truncated to half, zeroed (the first MiB)} x {the memories vector
collection's segment (``segment.json``), its WAL (every file of ``wal/``), the graph file
(``graph``), its WAL (``graph.wal``), ``local.sqlite3``, its WAL (``local.sqlite3-wal``)}. A
read-only (``chattr +i``) file of the same six is a permission problem, not damage: the start and
``memory-cli repair`` refuse with ``SVC_STORE_READONLY`` naming it, and nothing is moved.

One data directory is written once through a real MCP server process (``python -m
memory_service`` over stdio): memories with explicit relationships, a clean stop (so every main
file holds data), more memories and relationships, then kill -9 (so every WAL holds the rest).
Each case damages a copy of it, then checks, as a user would see it through an MCP client:

* before repair: either the server refuses to start and says to run ``memory-cli repair``, or
  every acknowledged memory, relationship and audit history it does not serve is reported (health
  not ok, the lost memories named by id);
* ``memory-cli repair`` (the CLI, as run by hand) exits 0 having brought everything back, or exits
  1 naming the memories no surviving store holds; nothing damaged is deleted;
* after repair: every acknowledged memory is served except those named, with an audit history,
  every relationship between served memories is back, and health names exactly what is still
  missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from tests.conftest import NOT_APPLICABLE, PROFILE, REPO, missing, require_model, server_env
from tests.e2e.conftest import call_ok, make_settings
from tests.e2e.crash_client import StdioServer

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} damages the embedded engines' files"),
]

WAYS = ("deleted", "emptied", "truncated", "zeroed")
FILES = ("vectors", "vectors-wal", "graph", "graph-wal", "sqlite", "sqlite-wal")
CASES = [(f, w) for f in FILES for w in WAYS]


class Written:
    """What the MCP server acknowledged: memory ids, and (source, target) RELATES_TO edges."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.edges: list[tuple[str, str]] = []

    def add(self, server: StdioServer, n: int) -> None:
        for _ in range(n):
            targets = self.ids[-3:]
            body = {
                "type": "session",
                "content": f"Damage drill memory {len(self.ids)}: topic {len(self.ids) * 7} was settled.",
                "relationships": [{"type": "RELATES_TO", "target_id": t} for t in targets],
            }
            memory_id = str(server.call("memory_add", body)["memory_id"])
            self.ids.append(memory_id)
            self.edges += [(memory_id, t) for t in targets]


def _env(root: Path) -> dict[str, str]:
    env = server_env(root / "data", model=require_model())
    # The same project and root as make_settings(root): the in-process servers see the same scope.
    return {
        **env,
        "MEMORY_DAEMON__ENABLED": "false",
        "MEMORY_PROJECT": "test",
        "MEMORY_PROJECT_ROOT": str(root),
    }


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Written]:
    root = tmp_path_factory.mktemp("template")
    env, log, written = _env(root), root / "server.log", Written()
    first = StdioServer(env, log)
    written.add(first, 3)
    assert first.proc.stdin is not None
    first.proc.stdin.close()  # a clean stop: the engines checkpoint into their main files
    assert first.proc.wait(timeout=120) == 0, log.read_text()
    first.close()
    second = StdioServer(env, log)
    written.add(second, 3)
    second.close()  # kill -9: what came since the clean stop is in the WALs only
    return root, written


def _copy(template: Path, dest: Path) -> Path:
    # cp keeps the engines' preallocated files sparse (shutil would write them out in full).
    subprocess.run(["cp", "-a", "--sparse=always", str(template / "data"), str(dest / "data")], check=True)
    return dest


def _targets(data: Path, kind: str) -> list[Path]:
    if kind == "vectors":
        segments = sorted((data / "vectors" / "memories" / "segments").iterdir())
        return [s / "segment.json" for s in segments]
    if kind == "vectors-wal":
        return sorted(p for p in (data / "vectors" / "memories" / "wal").iterdir() if p.is_file())
    name = {"graph": "graph", "graph-wal": "graph.wal", "sqlite": "local.sqlite3"}.get(
        kind, "local.sqlite3-wal"
    )
    return [data / name]


def _damage(data: Path, kind: str, way: str) -> None:
    files = _targets(data, kind)
    assert files and all(f.exists() for f in files), (kind, files)
    for file in files:
        size = file.stat().st_size
        if way == "deleted":
            file.unlink()
        elif way == "emptied":
            file.write_bytes(b"")
        elif way == "truncated":
            os.truncate(file, size // 2)
        else:
            with open(file, "r+b") as out:
                out.write(b"\0" * min(size, 1 << 20))


def _repair(root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    env = {k: v for k, v in _env(root).items() if k != "MEMORY_DAEMON__ENABLED"}
    done = subprocess.run(
        [sys.executable, "-m", "memory_service.cli.main", "repair", "--json", *extra],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, dict(json.loads(done.stdout))


async def _served(client: Client, written: Written) -> tuple[set[str], set[tuple[str, str]]]:
    """The acknowledged memories memory_get serves, and the acknowledged edges get_related shows."""
    found: set[str] = set()
    for memory_id in written.ids:
        got = await client.call_tool("memory_get", {"memory_id": memory_id})
        if not got.is_error:
            found.add(memory_id)
    edges: set[tuple[str, str]] = set()
    for memory_id in found:
        related = await client.call_tool("get_related", {"entity_id": memory_id})
        if related.is_error:
            continue
        body = json.loads(related.content[0].text)  # type: ignore[union-attr]
        edges |= {(memory_id, r["entity_id"]) for r in body["related"] if r["relationship"] == "RELATES_TO"}
    return found, edges & set(written.edges)


async def _look(root: Path, written: Written) -> dict[str, Any] | None:
    """Served memories and edges with health and warnings, or None when the server refuses to start
    (then its reason must say what to run)."""
    try:
        async with Client(build_server(make_settings(root, require_model()))) as client:
            found, edges = await _served(client, written)
            audited = set()
            for memory_id in written.ids:
                history = await call_ok(client, "memory_audit", {"memory_id": memory_id})
                if history["total"]:
                    audited.add(memory_id)
            stats = await call_ok(client, "memory_statistics", {})
    except Exception as exc:  # the MCP initialize failed with the reason
        assert "memory-cli repair" in str(exc) or "memory-cli repair" in repr(exc), exc
        return None
    return {
        "found": found, "edges": edges, "audited": audited,
        "health": stats["health"], "warnings": stats["warnings"],
    }  # fmt: skip


@pytest.mark.parametrize(("kind", "way"), CASES, ids=[f"{k}-{w}" for k, w in CASES])
async def test_damage_is_reported_and_repaired(
    template: tuple[Path, Written], tmp_path: Path, kind: str, way: str
) -> None:
    root, written = _copy(template[0], tmp_path), template[1]
    _damage(root / "data", kind, way)
    every_edge = set(written.edges)

    before = await _look(root, written)
    if before is not None:  # it started: what it does not serve is reported, never "ok"
        lost = set(written.ids) - before["found"]
        missing_edges = {e for e in every_edge - before["edges"] if set(e) <= before["found"]}
        unaudited = set(written.ids) - before["audited"]
        if lost or missing_edges or unaudited:
            assert any(state != "ok" for state in before["health"].values()), before
        text = " ".join(before["warnings"])
        assert all(memory_id in text for memory_id in lost), (lost, before["warnings"])

    code, outcome = _repair(root)
    unrecoverable = set(outcome.get("memories_unrecoverable", []))
    assert unrecoverable <= set(written.ids), outcome
    if unrecoverable:
        assert code == 1 and outcome["status"] == "incomplete", outcome
        assert f"{len(unrecoverable)} memories could not be recovered" in outcome["error"], outcome
    else:
        assert code == 0 and outcome["status"] == "completed", outcome
    if kind != "vectors" and kind != "vectors-wal":  # the records survived: nothing may be lost
        assert not unrecoverable, outcome
    moved = [*(outcome.get("vector_files") or {}).get("moved", [])]
    moved += [m for m in [(outcome.get("graph_files") or {}).get("moved_to")] if m]
    assert all(Path(m).exists() and any(Path(m).rglob("*")) for m in moved), outcome  # never deleted

    after = await _look(root, written)
    assert after is not None, "the server does not start after repair"
    assert after["found"] == set(written.ids) - unrecoverable, (after["found"], outcome)
    served = after["found"]
    # Every edge between served memories is back; the graph keeps the nodes (id, title) of the
    # unrecoverable ones, with their edges, until they are written off (--accept-loss).
    assert after["edges"] >= {e for e in every_edge if set(e) <= served}, outcome
    assert all(set(e) <= served | unrecoverable for e in after["edges"]), outcome
    assert after["audited"] >= served, after  # each has its history, or one rebuilt from its record
    assert after["health"]["graph"] == "ok" and after["health"]["vectors"] == "ok", after
    if unrecoverable:
        assert after["health"]["stores"] == "degraded", after
        text = " ".join(after["warnings"])
        assert all(memory_id in text for memory_id in unrecoverable), after["warnings"]
    else:
        assert after["health"]["stores"] == "ok", after


async def test_unrecoverable_memories_can_be_written_off(
    template: tuple[Path, Written], tmp_path: Path
) -> None:
    root, written = _copy(template[0], tmp_path), template[1]
    _damage(root / "data", "vectors-wal", "zeroed")
    code, outcome = _repair(root, "--accept-loss")
    lost = set(outcome["memories_written_off"])
    assert code == 0 and outcome["status"] == "completed" and lost, outcome
    assert not outcome["memories_unrecoverable"], outcome
    after = await _look(root, written)
    assert after is not None and after["found"] == set(written.ids) - lost, (after, outcome)
    assert after["health"]["stores"] == "ok", after
    assert all(set(e) <= after["found"] for e in after["edges"]), after  # their nodes went too


# --------------------------------------------------------------------------- read-only files


def _immutable(files: list[Path], on: bool) -> None:
    """``chattr +i``: unwritable even for root (the tests often run as root; file modes bind no root)."""
    if shutil.which("chattr") is None:
        missing("chattr (e2fsprogs) is needed to make a store file unwritable")
    done = subprocess.run(["chattr", "+i" if on else "-i", *map(str, files)], capture_output=True, text=True)
    if on and done.returncode:
        missing(f"chattr +i is not permitted here: {done.stderr.strip()}")


def _state(data: Path) -> dict[str, tuple[int, int, str]]:
    """Every file of the data directory but the lock: size, mtime, content digest."""
    return {
        str(p.relative_to(data)): (
            p.stat().st_size,
            p.stat().st_mtime_ns,
            hashlib.sha256(p.read_bytes()).hexdigest(),
        )
        for p in sorted(data.rglob("*"))
        if p.is_file() and p.name not in ("owner.lock", "daemon.log")
    }


def _session(root: Path) -> subprocess.CompletedProcess[str]:
    """``python -m memory_service`` as an MCP client starts it (through its daemon): initialize."""
    env = {k: v for k, v in _env(root).items() if k != "MEMORY_DAEMON__ENABLED"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    return subprocess.run(
        [sys.executable, "-m", "memory_service"], input=json.dumps(hello) + "\n",
        env=env, cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.parametrize("kind", [*FILES, "vectors-wal-folder"])
async def test_read_only_store_refuses_to_start_and_changes_nothing(
    template: tuple[Path, Written], tmp_path: Path, kind: str
) -> None:
    """Not damage: the server (through its daemon), health and repair refuse with SVC_STORE_READONLY
    naming the file (or the folder holding it), nothing is moved or written; once writable again,
    everything is there."""
    root, written = _copy(template[0], tmp_path), template[1]
    data = root / "data"
    files = [data / "vectors" / "memories" / "wal"] if kind.endswith("folder") else _targets(data, kind)
    _immutable(files, True)
    try:
        before = _state(data)
        session = _session(root)
        log = (data / "daemon.log").read_text()
        assert session.returncode != 0 and "SVC_STORE_READONLY" in session.stdout, session
        assert str(files[0]) in session.stdout and "chattr -i" in session.stdout, session.stdout
        assert str(files[0]) in log and "Traceback" not in session.stderr + log, session.stderr + log
        env = {k: v for k, v in _env(root).items() if k != "MEMORY_DAEMON__ENABLED"}
        health = subprocess.run(
            [sys.executable, "-m", "memory_service.cli.main", "health"],
            env=env, cwd=REPO, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert health.returncode == 1 and str(files[0]) in health.stderr, health
        assert "chattr -i" in health.stderr and "Traceback" not in health.stderr, health.stderr
        repair = subprocess.run(
            [sys.executable, "-m", "memory_service.cli.main", "repair", "--json"],
            env=env, cwd=REPO, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert repair.returncode == 2 and "Traceback" not in repair.stderr, repair
        error = json.loads(repair.stdout)["error"]
        assert error["code"] == "SVC_STORE_READONLY" and str(files[0]) in error["details"]["paths"], error
        assert _state(data) == before  # nothing moved aside, nothing written
    finally:
        _immutable(files, False)
    after = await _look(root, written)
    assert after is not None, "the server does not start once the file is writable again"
    assert after["found"] == set(written.ids) and after["edges"] == set(written.edges), after
    assert after["audited"] == set(written.ids), after
    assert (after["health"]["vectors"], after["health"]["graph"], after["health"]["stores"]) == ("ok",) * 3, (
        after
    )
