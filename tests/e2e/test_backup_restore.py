"""memory-cli backup / restore, run as a user runs them, on a data directory the MCP server wrote.

The round trip: memories (relationships, a supersede chain, votes) and an indexed copy of
tests/fixtures/traceproject are written through a real MCP client; the CLI backs the directory
up; the directory is deleted and restored; the restored store must answer exactly as the
original did. Then every way a backup can be damaged must be refused, naming the file, with
nothing written.

On ``MEMORY_TEST_PROFILE=server`` the same round trip runs on Neo4j, Redis and Qdrant (local
mode): the backup is the data directory's files plus an export of the memories; the data
directory and the project's data on every server are deleted before the restore, which imports
the export; the code index is rebuilt by indexing again, after which every answer must match.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.backup import servers as backup_servers
from memory_service.backup.files import walk
from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, RedisSettings, Settings, VectorSettings
from tests.conftest import NOT_APPLICABLE, PROFILE, SERVERS, require_model, server_env
from tests.e2e.conftest import TRACE_PROJECT, call_ok, make_settings
from tests.e2e.test_cli import _cli

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

QUERIES = ("ledger entries must balance", "search results cache", "checkout calls the payment gateway")


SERVER = PROFILE == "server"
# The file a damage test spoils: the biggest one each profile's backup holds.
BIG = "memories.jsonl" if SERVER else "graph"


def _env(root: Path, data_dir: Path | None = None) -> dict[str, str]:
    """The CLI's environment for the server :func:`make_settings` builds on ``root`` (another
    ``data_dir``: on the server profile, that directory's own fresh namespace on the servers)."""
    env = server_env(data_dir or root / "data", model=require_model())
    env.update({"MEMORY_PROJECT_ROOT": str(root), "MEMORY_PROJECT": "test", "COLUMNS": "200"})
    return env


def _wipe_servers(settings: Settings) -> None:
    """Delete the project's data on every server: its Qdrant folder, Neo4j namespace, Redis keys."""
    import redis

    from memory_service.stores import factory

    assert settings.qdrant.path is not None and settings.redis.url is not None
    shutil.rmtree(settings.qdrant.path)
    graph = factory.GRAPHS["neo4j"](settings, None)  # type: ignore[arg-type]
    try:
        for label in graph.count_nodes_by_label():
            graph.delete_nodes(label, graph.node_ids(label))
        assert graph.count_nodes_by_label() == {}
    finally:
        graph.close()
    client = redis.Redis.from_url(settings.redis.url.get_secret_value())
    try:
        keys = list(client.scan_iter(match=f"{settings.redis.key_prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
    assert backup_servers.servers_holdings(settings) == {"qdrant_memories": 0, "neo4j_memory_nodes": 0}


def _votes(data_dir: Path) -> int:
    conn = sqlite3.connect(data_dir / "local.sqlite3")
    try:
        return int(conn.execute("SELECT count(*) FROM votes").fetchone()[0])
    finally:
        conn.close()


async def _write(client: Client) -> dict[str, str]:
    """Memories of every shape a backup must keep, and the indexed project."""
    job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
    assert job["job"]["status"] == "completed", job

    async def add(body: dict[str, Any]) -> str:
        return str((await call_ok(client, "memory_add", body))["memory_id"])

    ids = {
        "req": await add({"type": "requirements", "content": "REQ-LEDGER-1: ledger entries must balance."})
    }
    ids["design"] = await add(
        {
            "type": "design",
            "content": "post_entry in billing/ledger.py rejects an unbalanced ledger entry.",
            "relationships": [{"type": "IMPLEMENTS", "target_id": ids["req"]}],
        }
    )
    ids["problem"] = await add({"type": "problem", "content": "The ledger test hangs on teardown."})
    ids["solution"] = await add(
        {
            "type": "solution",
            "content": "Close the ledger in teardown.",
            "metadata": {"problem_id": ids["problem"]},
        }
    )
    for vote in (1, 0.5):
        await call_ok(
            client,
            "memory_feedback",
            {"memory_id": ids["solution"], "problem_id": ids["problem"], "vote": vote},
        )
    ids["old_fact"] = await add({"type": "fact", "content": "Search results cache lives in Redis."})
    out = await call_ok(
        client,
        "memory_supersede",
        {
            "old_fact_id": ids["old_fact"],
            "new_fact": {"content": "Search results cache lives in SQLite."},
            "change": {"content": "Moved the search results cache to SQLite."},
        },
    )
    ids["new_fact"], ids["change"] = out["new_fact_id"], out["change_id"]
    ids["deleted"] = await add({"type": "design", "content": "A design note that was deleted later."})
    await call_ok(client, "memory_delete", {"memory_id": ids["deleted"]})
    return ids


async def _answers(client: Client, ids: dict[str, str]) -> dict[str, Any]:
    """What a user sees: searches (ids in order), memories with their links, the graph, the index."""
    out: dict[str, Any] = {}
    for query in QUERIES:
        for superseded in (False, True):
            found = await call_ok(client, "memory_search", {"query": query, "include_superseded": superseded})
            out[f"search:{query}:{superseded}"] = [r["memory_id"] for r in found["results"]]
    for key, memory_id in ids.items():
        if key != "deleted":
            got = await call_ok(client, "memory_get", {"memory_id": memory_id, "include_relationships": True})
            if SERVER:  # Neo4j lists edges in creation order, and an import creates them sorted
                got["relationships"].sort(key=lambda r: json.dumps(r, sort_keys=True))
            out[f"get:{key}"] = got
    for key in ("req", "old_fact", "problem"):
        got = await call_ok(client, "get_related", {"entity_id": ids[key], "depth": 2})
        out[f"related:{key}"] = sorted(json.dumps(r, sort_keys=True) for r in got["related"])
    out["index"] = (await call_ok(client, "index_status", {}))["index"]
    code = await call_ok(client, "code_search", {"query": "post a ledger entry"})
    out["code"] = [hit["function_id"] for hit in code["results"]]
    explained = await call_ok(client, "memory_explain", {"ids": [ids["solution"]]})
    out["utility"] = explained["items"][0]["score"]["components"]["utility"]
    return out


def _stats(env: dict[str, str]) -> dict[str, Any]:
    out = _cli("stats", "--json", env=env)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    return {k: figures[k] for k in ("memories", "relationships", "sync")}


@pytest.fixture(scope="module")
async def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A data directory written through the MCP server (closed again), and its backup."""
    root = tmp_path_factory.mktemp("backup-src")
    shutil.copytree(TRACE_PROJECT, root, dirs_exist_ok=True)
    async with Client(build_server(make_settings(root, require_model()))) as client:
        ids = await _write(client)
    env = _env(root)
    backup_dir = root.parent / f"{root.name}-backup"
    out = _cli("backup", str(backup_dir), "--json", env=env)
    return {"root": root, "env": env, "ids": ids, "backup": backup_dir, "out": out}


def _check_manifest(
    summary: dict[str, Any], manifest: dict[str, Any], backup_dir: Path, env: dict[str, str]
) -> None:
    names = {f["path"] for f in manifest["files"]}
    assert "owner.lock" not in names and manifest["sqlite_rows"]["votes"] == 2
    if not SERVER:
        assert manifest["kind"] == "files" and "servers" not in manifest
        assert manifest["counts"]["audit_events"] > 0 and {"local.sqlite3", "graph"} <= names
        assert summary["bytes_on_disk"] < summary["bytes"] / 10  # holes stay holes
        return
    assert manifest["kind"] == "export" and {"local.sqlite3", "memories.jsonl"} <= names
    assert not any(n.startswith(("graph", "vectors")) for n in names), names
    servers = manifest["servers"]
    assert servers["neo4j"]["namespace"] == env["MEMORY_GRAPH__NAMESPACE"]
    assert servers["redis"]["key_prefix"] == env["MEMORY_REDIS__KEY_PREFIX"]
    assert servers["qdrant"]["path"] == env["MEMORY_QDRANT__PATH"]
    exported = manifest["export"]
    assert (exported["memories"], exported["votes"]) == (8, 2)  # the deleted memory too
    assert exported["embeddings"] == 8 and exported["relationships"] > 3
    entry = next(f for f in manifest["files"] if f["path"] == "memories.jsonl")
    data = (backup_dir / "memories.jsonl").read_bytes()
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and len(data.splitlines()) == 10
    assert manifest["counts"]["code_index"]["files"] >= 5 and manifest["counts"]["memory_nodes"] >= 7


async def test_backup_delete_restore_answers_the_same(written: dict[str, Any]) -> None:
    root, env, ids, backup_dir = written["root"], written["env"], written["ids"], written["backup"]
    out = written["out"]
    assert out.returncode == 0, out.stdout + out.stderr
    summary = json.loads(out.stdout)
    assert summary["memories"] == 7 and summary["relationships"] > 5 and summary["code_files"] >= 5
    manifest = json.loads((backup_dir / "manifest.json").read_text())
    _check_manifest(summary, manifest, backup_dir, env)

    settings = make_settings(root, require_model())
    async with Client(build_server(settings)) as client:
        before = await _answers(client, ids)
    stats_before = _stats(env)
    assert before[f"search:{QUERIES[1]}:False"][0] == ids["new_fact"]
    assert ids["old_fact"] in before[f"search:{QUERIES[1]}:True"]
    assert before["utility"] == 0.75 and before["index"]["total_functions"] > 0 and before["code"]

    shutil.rmtree(root / "data")
    if SERVER:
        _wipe_servers(settings)
    restored = _cli("restore", str(backup_dir), "--json", env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    report = json.loads(restored.stdout)
    assert report["files"] == len(manifest["files"]) and report["kind"] == manifest["kind"]
    assert _votes(root / "data") == 2, "a vote in both the SQLite file and the export counted twice"

    async with Client(build_server(settings)) as client:
        after = await _answers(client, ids)
        if SERVER:  # the code index is not in a server backup: it is rebuilt by indexing again
            assert report["imported"] == 8 and report["code_files"] == 0
            assert (report["vectors_reused"], report["reembedded"]) == (8, 0)
            assert any("memory-cli index" in w for w in report["warnings"]), report
            assert any("import" in w for w in report["warnings"]), report
            assert after["index"]["total_files"] == 0 and not after["code"]
            memory_keys = [k for k in before if k.startswith(("search:", "get:")) or k == "utility"]
            assert {k: after[k] for k in memory_keys} == {k: before[k] for k in memory_keys}
            job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
            assert job["job"]["status"] == "completed", job
            after = await _answers(client, ids)
            for answers in (before, after):
                answers["index"].pop("last_indexed")
    assert after == before
    assert _stats(env) == stats_before
    assert _votes(root / "data") == 2
    missing = _cli("restore", str(backup_dir), env=env)  # the restored directory is not empty now
    assert missing.returncode == 1 and "exists and is not empty" in missing.stderr


def _damaged_copy(backup_dir: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", "--sparse=always", str(backup_dir), str(dest)], check=True)
    return dest


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _version(path: Path) -> None:
    manifest = json.loads(path.read_text())
    manifest["format_version"] = 99
    path.write_text(json.dumps(manifest))


def _stray(path: Path) -> None:
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"?")


DAMAGES = {
    "file removed": ("local.sqlite3", lambda p: p.unlink(), ["missing 'local.sqlite3'"]),
    "byte flipped": (BIG, _flip, [f"'{BIG}' does not match its SHA-256"]),
    "file grown": (BIG, lambda p: p.write_bytes(p.read_bytes() + b"x"), [f"'{BIG}' is", "manifest says"]),
    "manifest missing": ("manifest.json", lambda p: p.unlink(), ["has no manifest.json"]),
    "other format version": ("manifest.json", _version, ["format version 99"]),
    "unknown file": ("vectors/stray.bin", _stray, ["'vectors/stray.bin'", "does not list"]),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
async def test_restore_refuses_a_damaged_backup(written: dict[str, Any], tmp_path: Path, damage: str) -> None:
    assert written["out"].returncode == 0, written["out"].stderr
    name, spoil, words = DAMAGES[damage]
    copy = _damaged_copy(written["backup"], tmp_path / "backup")
    spoil(copy / name)
    target = tmp_path / "restored"
    out = _cli("restore", str(copy), env=_env(written["root"], target))
    assert out.returncode == 1, out.stdout + out.stderr
    message = " ".join(out.stderr.split())
    assert all(w in message for w in words), message
    assert not target.exists(), "nothing may be written for a damaged backup"
    assert not list(tmp_path.glob(".restored.restore-*")), "the temporary copy must be removed"


async def test_restore_refuses_a_non_empty_target(written: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    out = _cli("restore", str(written["backup"]), env=_env(written["root"], target))
    assert out.returncode == 1
    assert "exists and is not empty" in out.stderr and "move the existing one aside" in out.stderr
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


async def test_backup_refuses_while_a_server_owns_the_directory(
    written: dict[str, Any], tmp_path: Path
) -> None:
    dest = tmp_path / "bk"
    async with Client(build_server(make_settings(written["root"], require_model()))):
        out = _cli("backup", str(dest), env=written["env"])
    assert out.returncode == 2, out.stdout + out.stderr
    assert "in use by a running memory-service" in out.stderr and "stop that server" in out.stderr
    assert not dest.exists() and not list(tmp_path.glob(".bk.partial-*"))
    again = _cli("backup", str(written["backup"]), env=written["env"])  # never over a backup
    assert again.returncode == 1 and "exists and is not empty" in again.stderr


async def test_restore_refuses_servers_that_hold_memories(written: dict[str, Any], tmp_path: Path) -> None:
    """An empty data directory is not enough: the servers must hold none of the project's memories."""
    if not SERVER:
        pytest.skip(f"{NOT_APPLICABLE} the embedded profile keeps every store in the data directory")
    assert written["out"].returncode == 0, written["out"].stderr
    target = tmp_path / "fresh"  # an empty directory, but the servers of the backed-up project
    out = _cli("restore", str(written["backup"]), "--data-dir", str(target), env=written["env"])
    assert out.returncode == 1, out.stdout + out.stderr
    message = " ".join(out.stderr.split())
    assert "servers already hold memories" in message and "qdrant_memories: 8" in message, message
    assert "MEMORY_GRAPH__NAMESPACE" in message and written["env"]["MEMORY_GRAPH__NAMESPACE"] in message
    assert not target.exists() and not list(tmp_path.glob(".fresh.restore-*"))


async def test_redis_alone_is_an_export_backup_too(tmp_path: Path) -> None:
    """Redis on a server, vectors and graph embedded: the embedded stores' files are copied and
    the export is imported over them; nothing is doubled and the memories answer the same."""
    if not SERVER:
        pytest.skip(f"{NOT_APPLICABLE} needs the Redis server the server profile starts")
    root = tmp_path / "mixed"
    root.mkdir()
    prefix = "m" + hashlib.sha256(str(root).encode()).hexdigest()[:12] + ":"

    def env_for(data_dir: Path) -> dict[str, str]:
        env = {
            k: v
            for k, v in _env(root, data_dir).items()
            if not k.startswith(("MEMORY_QDRANT__", "MEMORY_GRAPH__"))
        }
        return env | {"MEMORY_REDIS__KEY_PREFIX": prefix}

    settings = Settings(
        data_dir=root / "data",
        project_root=root,
        project="test",
        embedding=EmbeddingSettings(model_path=require_model(), load_timeout_seconds=120),
        redis=RedisSettings(url=SERVERS["redis"], key_prefix=prefix),
    )

    async def answers(client: Client, solution: str) -> list[Any]:
        got = await call_ok(client, "memory_get", {"memory_id": solution, "include_relationships": True})
        found = await call_ok(client, "memory_search", {"query": "flaky teardown"})
        explained = await call_ok(client, "memory_explain", {"ids": [solution]})
        return [got, [r["memory_id"] for r in found["results"]], explained["items"][0]["score"]["components"]]

    async with Client(build_server(settings)) as client:
        body: dict[str, Any] = {"type": "problem", "content": "Flaky teardown."}
        problem = (await call_ok(client, "memory_add", body))["memory_id"]
        body = {"type": "solution", "content": "Await the pool close.", "metadata": {"problem_id": problem}}
        solution = (await call_ok(client, "memory_add", body))["memory_id"]
        vote = {"memory_id": solution, "problem_id": problem, "vote": 1}
        await call_ok(client, "memory_feedback", vote)
        before = await answers(client, solution)
    out = _cli("backup", str(tmp_path / "bk"), "--json", env=env_for(root / "data"))
    assert out.returncode == 0, out.stdout + out.stderr
    manifest = json.loads((tmp_path / "bk" / "manifest.json").read_text())
    names = {f["path"] for f in manifest["files"]}
    assert manifest["kind"] == "export" and {"graph", "memories.jsonl", "local.sqlite3"} <= names
    assert set(manifest["servers"]) == {"redis"}
    restored = _cli("restore", str(tmp_path / "bk"), "--json", env=env_for(root / "data2"))
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert json.loads(restored.stdout)["imported"] == 2
    assert _votes(root / "data2") == 1
    async with Client(build_server(settings.model_copy(update={"data_dir": root / "data2"}))) as client:
        assert await answers(client, solution) == before


def test_a_qdrant_folder_inside_the_data_directory_is_left_to_the_export(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, qdrant=VectorSettings(path=data_dir / "qdrant" / "local"))
    assert backup_servers.local_skip(settings) == {"qdrant/local"}
    outside = Settings(data_dir=data_dir, qdrant=VectorSettings(path=tmp_path / "elsewhere"))
    assert backup_servers.local_skip(outside) == set()
    assert backup_servers.local_skip(Settings(data_dir=data_dir)) == set()
    (data_dir / "qdrant" / "local").mkdir(parents=True)
    (data_dir / "qdrant" / "local" / "collection.db").write_bytes(b"x")
    (data_dir / "local.sqlite3").write_bytes(b"y")
    assert walk(data_dir, skip=frozenset({"qdrant/local"})) == (["qdrant"], ["local.sqlite3"])


async def test_restore_checks_the_restored_counts(written: dict[str, Any], tmp_path: Path) -> None:
    """The restored stores are opened and counted: a manifest that promises more is caught."""
    copy = _damaged_copy(written["backup"], tmp_path / "backup")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["counts"]["memories"]["total"] += 1
    (copy / "manifest.json").write_text(json.dumps(manifest))
    target = tmp_path / "restored"
    out = _cli("restore", str(copy), env=_env(written["root"], target))
    assert out.returncode == 1, out.stdout + out.stderr
    message = " ".join(out.stderr.split())
    total = manifest["counts"]["memories"]["total"]
    assert "does not hold what the manifest says" in message, message
    assert f"memories.total: expected {total}, found {total - 1}" in message
    assert "Do not use" in message and str(target) in message
