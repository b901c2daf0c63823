"""memory-cli backup while the daemon serves sessions (issue 30): the daemon pauses its writes for
the copy, and the backup restores every write acknowledged before it began, whole.

Real processes throughout: sessions are ``python -m memory_service`` stdio forwarders driven by the
Python SDK's client (the first starts the daemon), the backup and the restore are ``memory-cli``
runs, and the restored directory is opened with the real engines.
"""

from __future__ import annotations

import json
import random
import socket
import sqlite3
import time
from contextlib import AsyncExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memory_service.app import open_services
from memory_service.core.models import content_hash
from memory_service.core.records import MEMORIES, MEMORY_LABEL, from_payload
from memory_service.daemon.hello import BACKUP_METHOD
from memory_service.settings import EmbeddingSettings, ServerSettings, Settings
from tests.conftest import PROFILE, daemon_gone, profile_settings, require_model, server_env
from tests.e2e.conftest import call_error, call_ok
from tests.e2e.test_cli import _cli
from tests.e2e.test_daemon import _env, _project, _session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _restored_settings(data_dir: Path, root: Path) -> Settings:
    return Settings(
        data_dir=data_dir,
        project_root=root,
        project="e2e",
        embedding=EmbeddingSettings(model_path=require_model(), load_timeout_seconds=120),
        server=ServerSettings(http_port=0),
        **profile_settings(data_dir),
    )


async def _backup(env: dict[str, str], dest: Path) -> dict[str, Any]:
    out = await anyio.to_thread.run_sync(lambda: _cli("backup", str(dest), "--json", env=env))
    assert out.returncode == 0, out.stdout + out.stderr
    summary: dict[str, Any] = json.loads(out.stdout)
    return summary


def _restore(env: dict[str, str], source: Path, target: Path) -> dict[str, Any]:
    out = _cli("restore", str(source), "--data-dir", str(target), "--json", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report


async def test_a_backup_while_the_daemon_serves_restores(tmp_path: Path) -> None:
    """Sessions stay connected (the daemon would not leave for minutes): the backup no longer
    asks to stop it, sessions go on writing after it, and the restore holds what it saw."""
    _project(tmp_path / "project", 3)
    env = _env(tmp_path)
    dest = tmp_path / "backup"
    async with _session(env) as first, _session(env) as second:
        job = await call_ok(first, "index_directory", {"directory_path": ".", "wait": True})
        assert job["job"]["status"] == "completed", job
        kept = await call_ok(first, "memory_add", {"type": "design", "content": "Backups run while serving."})
        other = await call_ok(second, "memory_add", {"type": "fact", "content": "The daemon pauses writes."})
        summary = await _backup(env, dest)
        later = await call_ok(second, "memory_add", {"type": "fact", "content": "Written after the backup."})
        assert (await call_ok(first, "memory_get", {"memory_id": later["memory_id"]}))["memory"]
    assert summary["memories"] == 2 and summary["code_files"] == 3, summary
    assert summary["writes_paused_seconds"] >= 0 and (dest / "manifest.json").is_file()
    names = {f["path"] for f in json.loads((dest / "manifest.json").read_text())["files"]}
    assert not names & {"owner.lock", "daemon.json", "daemon.log", "local.sqlite3-wal", "local.sqlite3-shm"}
    daemon_gone(tmp_path / "data")

    target = tmp_path / "restored"  # on the server profile, with its own fresh namespace
    env = server_env(target, model=require_model()) | {"MEMORY_PROJECT_ROOT": str(tmp_path / "project")}
    report = _restore(env, dest, target)
    assert report["memories"] == 2 and report["files"] == len(names), report
    async with _session(env) as client:
        for added, content in ((kept, "Backups run while serving."), (other, "The daemon pauses writes.")):
            got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
            assert got["memory"]["content"] == content
        missing = await call_error(client, "memory_get", {"memory_id": later["memory_id"]})
        assert missing["code"] == "NF_MEMORY"
        status = await call_ok(client, "index_status", {})
        # A server backup holds no code index: restore says to index again (docs/backup.md).
        assert status["index"]["total_files"] == (0 if PROFILE == "server" else 3), status
    daemon_gone(target)


@dataclass
class Acks:
    """Every write the daemon acknowledged: per memory, (time acknowledged, content) in order, or
    (time, None) for its deletion."""

    versions: dict[str, list[tuple[float, str | None]]] = field(default_factory=dict)
    writes: int = 0

    def note(self, memory_id: str, content: str | None) -> None:
        self.versions.setdefault(memory_id, []).append((time.monotonic(), content))
        self.writes += 1


async def _write_until(client: Client, me: int, acks: Acks, stop: anyio.Event) -> None:
    """Adds, bulk adds, updates and deletes, one after another, until ``stop``."""
    rng = random.Random(300 + me)
    mine: list[str] = []
    n = 0
    while not stop.is_set():
        n += 1
        text = f"Session {me} write {n}: {rng.choice(['cache', 'retry', 'login'])} {rng.getrandbits(40):x}."
        op = rng.choice(["add", "add", "bulk", "update", "delete"]) if mine else "add"
        if op == "add":
            out = await call_ok(client, "memory_add", {"type": "session", "content": text})
            acks.note(out["memory_id"], text)
            mine.append(out["memory_id"])
        elif op == "bulk":
            bodies = [{"type": "session", "content": f"{text} part {k}"} for k in range(rng.choice([2, 5]))]
            out = await call_ok(client, "memory_bulk_add", {"memories": bodies})
            assert not out["errors"], out
            for memory_id, body in zip(out["memory_ids"], bodies, strict=True):
                acks.note(memory_id, body["content"])
                mine.append(memory_id)
        elif op == "update":
            target = rng.choice(mine)
            await call_ok(client, "memory_update", {"memory_id": target, "content": text})
            acks.note(target, text)
        else:
            target = mine.pop(rng.randrange(len(mine)))
            await call_ok(client, "memory_delete", {"memory_id": target})
            acks.note(target, None)


def _allowed(versions: list[tuple[float, str | None]], began: float) -> tuple[list[str | None], bool]:
    """What the restored memory may hold: its last version acknowledged before the backup began
    or any later one; and whether it must exist at all (it was acknowledged before)."""
    before = [i for i, (at, _) in enumerate(versions) if at < began]
    start = before[-1] if before else 0
    return [content for _, content in versions[start:]], bool(before)


async def test_a_backup_taken_while_four_sessions_write_restores_every_acknowledged_write(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    dest = tmp_path / "backup"
    acks = Acks()
    stop = anyio.Event()
    timing: dict[str, float] = {}

    async def back_up_amid_writes() -> None:
        try:
            while acks.writes < 40:  # the sessions are well under way
                await anyio.sleep(0.05)
            timing["began"] = time.monotonic()
            timing["writes_before"] = acks.writes
            timing["summary"] = await _backup(env, dest)  # type: ignore[assignment]
            timing["ended"] = time.monotonic()
            while acks.writes < timing["writes_before"] + 80:  # writes go on after it too
                await anyio.sleep(0.05)
        finally:
            stop.set()

    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(_session(env)) for _ in range(4)]
        with anyio.fail_after(600):
            async with anyio.create_task_group() as tg:
                for i, client in enumerate(clients):
                    tg.start_soon(_write_until, client, i, acks, stop)
                tg.start_soon(back_up_amid_writes)
    daemon_gone(tmp_path / "data")
    began, ended = timing["began"], timing["ended"]
    during = sum(1 for v in acks.versions.values() for at, _ in v if began <= at <= ended)
    print(f"{acks.writes} writes, {during} acknowledged while the backup ran; summary {timing['summary']}")
    assert during > 0, "the sessions' writes did not race the backup"

    manifest = json.loads((dest / "manifest.json").read_text())
    rows = manifest["sqlite_rows"]
    assert rows["write_journal"] == 0, "a write was caught half-way in the backup"
    with closing(sqlite3.connect(dest / "local.sqlite3")) as db:  # the graph outbox was drained first
        assert db.execute("SELECT count(*) FROM queue").fetchone()[0] == 0

    target = tmp_path / "restored"  # on the server profile, with its own fresh namespace
    restore_env = server_env(target, model=require_model()) | {
        "MEMORY_PROJECT_ROOT": env["MEMORY_PROJECT_ROOT"]
    }
    report = _restore(restore_env, dest, target)  # every file checked against the manifest, then counts
    assert report["memories"] == manifest["counts"]["memories"]["total"]

    services = open_services(_restored_settings(target, tmp_path / "project"), housekeeping=False)
    try:
        records, offset = {}, None
        while True:
            page, offset = services.stores.vectors.scroll(MEMORIES, None, limit=256, offset=offset)
            records.update({p.id: from_payload(p.payload) for p in page})
            if offset is None:
                break
        nodes = set(services.stores.graph.node_ids(MEMORY_LABEL))
        assert services.sync.pending().get("pending", 0) == 0
    finally:
        services.close()
    assert set(records) == nodes, "a memory in the vectors without its graph node, or the reverse"
    for record in records.values():
        assert record.content_hash == content_hash(record.content), record.id
    checked = 0
    for memory_id, versions in acks.versions.items():
        allowed, required = _allowed(versions, began)
        record = records.get(memory_id)
        if record is None:
            assert not required, f"{memory_id}, acknowledged before the backup began, is missing"
            continue
        held = None if record.status == "deleted" else record.content
        assert held in allowed, (memory_id, held, allowed)
        checked += required
    assert checked >= timing["writes_before"] // 5 and set(records) <= set(acks.versions)


async def test_a_backup_whose_client_leaves_is_abandoned_and_writes_go_on(tmp_path: Path) -> None:
    """memory-cli stopped (Ctrl-C) mid-backup: the daemon stops at its next progress report,
    removes its partial copy and opens the gate again."""
    env = _env(tmp_path)
    dest = tmp_path / "backup"
    async with _session(env) as client:
        await call_ok(client, "memory_add", {"type": "design", "content": "Left half-way."})
        socket_path = json.loads((tmp_path / "data" / "daemon.json").read_text())["socket"]
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(socket_path)
            sock.recv(65536)  # the daemon's hello
            request = {"jsonrpc": "2.0", "id": 1, "method": BACKUP_METHOD, "params": {"path": str(dest)}}
            sock.sendall(json.dumps(request).encode() + b"\n")
        log = tmp_path / "data" / "daemon.log"
        deadline = time.monotonic() + 60
        while "backup abandoned" not in log.read_text():
            assert time.monotonic() < deadline, "the daemon did not notice the client leave"
            await anyio.sleep(0.1)
        assert not dest.exists() and not list(tmp_path.glob(".backup.partial-*"))
        with anyio.fail_after(60):  # the gate is open again
            later = await call_ok(client, "memory_add", {"type": "design", "content": "Written after."})
        assert later["memory_id"]
    daemon_gone(tmp_path / "data")
