"""export_memory / import_memory through the MCP client, between two servers on two data
directories, and memory-cli export / import run as a user runs them (both test profiles)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.app import open_services
from memory_service.core.memory.schemas import MemoryAddInput
from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import profile_settings, require_model, server_env
from tests.e2e.conftest import call_error, call_ok, make_settings
from tests.e2e.test_cli import _cli

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@asynccontextmanager
async def server(root: Path, *, also: Path | None = None) -> AsyncIterator[Client]:
    settings = make_settings(root, require_model())
    if also is not None:  # let this server read files the other one wrote
        settings.indexer.allowed_roots = [also.resolve()]
    async with Client(build_server(settings)) as client:
        yield client


def body(path: str | Path) -> list[str]:
    lines = Path(path).read_text().splitlines()
    return lines[1:-1]


async def add(client: Client, kind: str, content: str, **extra: Any) -> str:
    return (await call_ok(client, "memory_add", {"type": kind, "content": content, **extra}))["memory_id"]


async def corpus(client: Client) -> dict[str, str]:
    ids = {
        "design": await add(
            client, "design", "Queue graph writes in an outbox.", metadata={"tags": ["graph"]}
        )
    }
    ids["req"] = await add(
        client,
        "requirements",
        "REQ-SYNC-001 graph writes are never lost.",
        relationships=[{"type": "RELATES_TO", "target_id": ids["design"]}],
    )
    await call_ok(
        client, "memory_update", {"memory_id": ids["design"], "content": "Queue graph writes durably."}
    )
    ids["fact"] = await add(client, "fact", "The outbox lives in SQLite.")
    chain = await call_ok(
        client,
        "memory_supersede",
        {
            "old_fact_id": ids["fact"],
            "new_fact": {"content": "The outbox lives in Redis streams on servers."},
            "change": {"content": "PR-9 added the Redis queue."},
        },
    )
    ids["new_fact"], ids["change"] = chain["new_fact_id"], chain["change_id"]
    ids["problem"] = await add(client, "problem", "Graph edges went missing after a crash.")
    for vote in (1, -0.5):
        await call_ok(
            client,
            "memory_feedback",
            {"memory_id": ids["design"], "problem_id": ids["problem"], "vote": vote},
        )
    ids["gone"] = await add(
        client,
        "design",
        "Write the graph first.",
        relationships=[{"type": "RELATES_TO", "target_id": ids["req"]}],
    )
    await call_ok(client, "memory_delete", {"memory_id": ids["gone"]})
    return ids


async def test_round_trip_between_two_servers(tmp_path_factory: pytest.TempPathFactory) -> None:
    root_a, root_b = tmp_path_factory.mktemp("export-a"), tmp_path_factory.mktemp("export-b")
    async with server(root_a) as a:
        ids = await corpus(a)
        out = await call_ok(a, "export_memory", {"include_deleted": True, "include_embeddings": True})
        assert out["memories_exported"] == len(ids) and out["votes_exported"] == 2
        assert out["relationships_exported"] == 4  # RELATES_TO, 2 x SUPERSEDES, INTRODUCES
        assert Path(out["file_path"]).parent == root_a / "data" / "exports"
        active = await call_ok(
            a, "export_memory", {"output_path": "active.jsonl", "memory_types": ["design"]}
        )
        assert active["memories_exported"] == 1  # the deleted design is left out by default
    first = out["file_path"]
    async with server(root_b, also=root_a) as b:
        done = await call_ok(b, "import_memory", {"file_path": first})
        assert (done["imported"], done["skipped"], done["errors"]) == (len(ids), 0, [])
        assert (done["relationships_imported"], done["votes_imported"]) == (4, 2)
        again = await call_ok(b, "export_memory", {"include_deleted": True, "include_embeddings": True})
        lines, copies = body(first), body(again["file_path"])
        strip = [{k: v for k, v in json.loads(x).items() if k != "embedding"} for x in lines]
        assert strip == [{k: v for k, v in json.loads(x).items() if k != "embedding"} for x in copies]
        for mine, theirs in zip(lines, copies, strict=True):  # vectors: equal (a server renormalises)
            assert json.loads(theirs)["embedding"] == pytest.approx(json.loads(mine)["embedding"], abs=1e-6)
        got = await call_ok(b, "memory_get", {"memory_id": ids["fact"], "include_relationships": True})
        assert got["memory"]["metadata"]["superseded_by"] == ids["new_fact"] and got["memory"]["version"] == 2
        assert {r["type"] for r in got["relationships"]} == {"SUPERSEDES"}
        hits = await call_ok(b, "memory_search", {"query": "where does the outbox live", "limit": 3})
        assert hits["results"][0]["memory_id"] == ids["new_fact"]  # the superseded fact stays hidden
        await call_error(b, "memory_get", {"memory_id": ids["gone"]})  # still deleted
        # Conflict modes on the same file: nothing changes, nothing is counted twice.
        for mode in ("skip", "merge"):
            same = await call_ok(b, "import_memory", {"file_path": first, "conflict_resolution": mode})
            assert (same["imported"], same["skipped"], same["votes_imported"]) == (0, len(ids), 0)
        dry = await call_ok(
            b, "import_memory", {"file_path": first, "conflict_resolution": "overwrite", "dry_run": True}
        )
        assert (dry["updated"], dry["dry_run"]) == (len(ids), True)
        over = await call_ok(b, "import_memory", {"file_path": first, "conflict_resolution": "overwrite"})
        assert (over["updated"], over["votes_imported"]) == (len(ids), 0)
        final = await call_ok(b, "export_memory", {"include_deleted": True})
        assert [json.loads(x) for x in body(final["file_path"])] == strip


async def test_bad_files_and_paths_are_refused(tmp_path_factory: pytest.TempPathFactory) -> None:
    root, empty = tmp_path_factory.mktemp("export-bad"), tmp_path_factory.mktemp("export-empty")
    async with server(root) as client:
        for i in range(3):
            await add(client, "design", f"Bad input corpus {i}.")
        good = await call_ok(client, "export_memory", {"output_path": "good.jsonl"})
        lines = Path(good["file_path"]).read_text().splitlines()
        header = json.loads(lines[0])
        cases = {
            "truncated.jsonl": ("\n".join(lines[:-1]) + "\n" + lines[-1][:10], "VAL_IMPORT_FILE", 5),
            "corrupt.jsonl": ("\n".join([*lines[:2], "{not json", *lines[3:]]) + "\n", "VAL_IMPORT_FILE", 3),
            "version.jsonl": (
                "\n".join([json.dumps({**header, "format_version": 2}), *lines[1:]]) + "\n",
                "VAL_IMPORT_VERSION",
                None,
            ),
            "headless.jsonl": ("\n".join(lines[1:]) + "\n", "VAL_IMPORT_FILE", 1),
        }
        for name, (text, _, _) in cases.items():
            (root / name).write_text(text)
        (root / "folder").mkdir()
        checks = [
            ("export_memory", {"output_path": "good.jsonl"}, "CON_EXPORT_FILE_EXISTS"),
            ("export_memory", {"output_path": "/tmp/../etc/out.jsonl"}, "VAL_PATH_OUTSIDE_ROOTS"),
            ("export_memory", {"output_path": "good.jsonl/sub/out.jsonl"}, "VAL_INVALID_PATH"),
            ("export_memory", {"output_path": "good.jsonl/out.jsonl"}, "VAL_NOT_A_DIRECTORY"),
            ("export_memory", {"memory_types": ["nonsense"]}, "VAL_INVALID_TYPE"),
            ("export_memory", {"since": "yesterday"}, "VAL_INVALID_FIELD_TYPE"),
            ("export_memory", {"format": "csv"}, "VAL_UNKNOWN_FIELD"),
        ]
        for tool, args, code in checks:
            error = await call_error(client, tool, args)
            assert error["code"] == code, (tool, args, error)
    async with server(empty, also=root) as other:  # an empty server: a refused import leaves it empty
        for name, (_, code, line) in cases.items():
            error = await call_error(other, "import_memory", {"file_path": str(root / name)})
            assert error["code"] == code, (name, error)
            if line is not None:
                assert error["details"]["errors"][0]["line"] == line, (name, error)
                assert error["message"].startswith(f"Line {line} of {name}")
        checks = [
            ("import_memory", {"file_path": str(root / "folder")}, "VAL_NOT_A_FILE"),
            ("import_memory", {"file_path": "missing.jsonl"}, "NF_PATH"),
            ("import_memory", {"file_path": "/etc/hostname"}, "VAL_PATH_OUTSIDE_ROOTS"),
            (
                "import_memory",
                {"file_path": str(root / "good.jsonl"), "conflict_resolution": "x"},
                "VAL_INVALID_ENUM",
            ),
            ("import_memory", {}, "VAL_MISSING_FIELD"),
        ]
        for tool, args, code in checks:
            error = await call_error(other, tool, args)
            assert error["code"] == code, (tool, args, error)
        left = await call_ok(other, "export_memory", {"include_deleted": True})
        assert left["memories_exported"] == 0  # nothing half-imported
        assert not list((empty / "data" / "imports").glob("*"))  # no working copy left behind


def test_cli_export_then_import_into_a_fresh_data_dir(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    settings = Settings(
        data_dir=source,
        project_root=source,
        project="e2e",
        embedding=EmbeddingSettings(model_path=require_model()),
        **profile_settings(source),
    )
    source.mkdir()
    services = open_services(settings, housekeeping=False)
    try:
        assert services.stores.embedder.wait_ready(60)
        first = services.memory.add(MemoryAddInput(type="design", content="CLI export keeps everything."))
        services.memory.add(
            MemoryAddInput(
                type="requirements",
                content="REQ-CLI-001 exports round-trip.",
                relationships=[{"type": "RELATES_TO", "target_id": first.memory_id}],
            )
        )
    finally:
        services.close()
    file = tmp_path / "out.jsonl"
    env_a, env_b = server_env(source, model=require_model()), server_env(target, model=require_model())
    exported = _cli("export", str(file), "--include-embeddings", env=env_a)
    assert exported.returncode == 0, exported.stderr
    assert "memories_exported" in exported.stdout and "2" in exported.stdout  # the summary table
    again = _cli("export", str(file), env=env_a)
    assert again.returncode == 1 and "already exists" in again.stderr and "--force" in again.stderr
    imported = _cli("--json", "import", str(file), env=env_b)
    assert imported.returncode == 0, imported.stderr
    figures = json.loads(imported.stdout)
    assert (figures["imported"], figures["relationships_imported"], figures["vectors_reused"]) == (2, 1, 2)
    copy = tmp_path / "copy.jsonl"
    assert _cli("export", str(copy), "--include-embeddings", env=env_b).returncode == 0
    mine, theirs = [json.loads(x) for x in body(file)], [json.loads(x) for x in body(copy)]
    for line in (*mine, *theirs):
        line.pop("embedding")
    assert mine == theirs
    broken = tmp_path / "broken.jsonl"
    broken.write_text(file.read_text()[:-20])
    refused = _cli("import", str(broken), "--data-dir", str(tmp_path / "c"), env=env_b)
    assert refused.returncode == 1 and "Line 4 of broken.jsonl" in refused.stderr


async def test_export_and_import_report_progress(tmp_path_factory: pytest.TempPathFactory) -> None:
    root_a, root_b = tmp_path_factory.mktemp("progress-a"), tmp_path_factory.mktemp("progress-b")
    seen: dict[str, list[tuple[float, float | None]]] = {"export": [], "import": []}

    def listener(name: str) -> Any:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen[name].append((progress, total))

        return on_progress

    async with server(root_a) as a:
        items = [
            {"type": "session", "content": f"Progress note {i} for the export test."} for i in range(300)
        ]
        await call_ok(a, "memory_bulk_add", {"memories": items[:100]})
        await call_ok(a, "memory_bulk_add", {"memories": items[100:200]})
        await call_ok(a, "memory_bulk_add", {"memories": items[200:]})
        out = await a.call_tool("export_memory", {}, progress_callback=listener("export"))
        assert not out.is_error
        path = json.loads(out.content[0].text)["file_path"]  # type: ignore[union-attr]
    async with server(root_b, also=root_a) as b:
        done = await b.call_tool("import_memory", {"file_path": path}, progress_callback=listener("import"))
        assert not done.is_error and json.loads(done.content[0].text)["imported"] == 300  # type: ignore[union-attr]
    for name, reports in seen.items():
        assert len(reports) >= 2, (name, reports)  # more than one batch of 256
        assert [p for p, _ in reports] == sorted(p for p, _ in reports), reports
        assert reports[-1][0] == reports[-1][1] == 300, (name, reports)
