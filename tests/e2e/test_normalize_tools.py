"""normalize_memory / normalize_status through the MCP client, and memory-cli normalize as a user
runs it. The stores-level cases (each gap planted in an engine) are in tests/integration."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO, require_model, server_env
from tests.e2e.conftest import call_error, call_ok
from tests.e2e.test_cli import _cli

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

DUP = "Invoices are numbered per tenant and per year, without gaps."


async def test_dry_run_then_merge_keeps_history_and_edges(client: Client) -> None:
    req = await call_ok(client, "memory_add", {"type": "requirements", "content": "Invoices need numbers."})
    first = await call_ok(
        client, "memory_add", {"type": "design", "content": DUP, "metadata": {"tags": ["a"]}}
    )
    second = await call_ok(
        client,
        "memory_add",
        {
            "type": "design",
            "content": DUP,
            "metadata": {"tags": ["b"], "source": "wiki"},  # another source: not a repeat of the first
            "relationships": [{"type": "IMPLEMENTS", "target_id": req["memory_id"]}],
        },
    )
    keep, gone = first["memory_id"], second["memory_id"]

    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    dry = await client.call_tool(
        "normalize_memory", {"options": {"dry_run": True}, "wait": True}, progress_callback=on_progress
    )
    assert not dry.is_error and seen and seen[-1] == 100 and seen == sorted(seen)
    started = dry.structured_content or {}
    assert started["status"] == "started" and started["dry_run"] is True
    assert started["job"]["status"] == "completed"
    status = await call_ok(client, "normalize_status", {"job_id": started["job_id"]})
    assert status["status"] == "completed" and status["progress"] == 100 and status["phase"] == "done"
    assert status["stats"]["duplicates_merged"] >= 1
    merge = next(a for a in status["stats"]["planned"] if a["action"] == "merge" and a["survivor"] == keep)
    assert [a["id"] for a in merge["absorbed"]] == [gone]
    untouched = await call_ok(client, "memory_get", {"memory_id": gone})  # the dry run changed nothing
    assert untouched["memory"]["status"] == "active"

    done = await call_ok(client, "normalize_memory", {"wait": True})
    assert done["job"]["status"] == "completed", done
    assert done["estimated_duration_minutes"] >= 1 and done["dry_run"] is False
    assert done["job"]["stats"]["duplicates_merged"] >= 1
    error = await call_error(client, "memory_get", {"memory_id": gone})  # soft-deleted, not lost
    assert error["code"] == "NF_MEMORY"
    survivor = await call_ok(client, "memory_get", {"memory_id": keep, "include_relationships": True})
    memory = survivor["memory"]
    assert [m["id"] for m in memory["metadata"]["merged_from"]] == [gone]
    assert set(memory["tags"]) == {"a", "b"}
    edges = {(r["type"], r["other_id"]) for r in survivor["relationships"]}
    assert ("IMPLEMENTS", req["memory_id"]) in edges
    audit = await call_ok(client, "memory_audit", {"memory_id": gone, "limit": 5})
    assert "merged_into" in json.dumps(audit)

    again = await call_ok(client, "normalize_memory", {"wait": True})
    assert again["job"]["stats"]["duplicates_merged"] == 0 and again["job"]["stats"]["orphans_removed"] == 0


async def test_status_without_waiting_reports_a_phase(client: Client) -> None:
    started = await call_ok(client, "normalize_memory", {"options": {"skip_deduplication": True}})
    assert started["status"] == "started" and started.get("job") is None
    status = await call_ok(client, "normalize_status", {"job_id": started["job_id"]})
    assert status["status"] in ("queued", "running", "completed") and "stats" in status


@pytest.mark.parametrize(
    ("tool", "args", "code", "field"),
    [
        (
            "normalize_memory",
            {"options": {"skip_everything": True}},
            "VAL_UNKNOWN_FIELD",
            "options.skip_everything",
        ),
        ("normalize_memory", {"force": True}, "VAL_UNKNOWN_FIELD", "force"),
        ("normalize_memory", {"options": {"dry_run": "maybe"}}, None, "options.dry_run"),
        ("normalize_memory", {"options": {"similarity_threshold": 0.5}}, "VAL_OUT_OF_RANGE", None),
        ("normalize_memory", {"options": "all"}, None, "options"),
        ("normalize_status", {}, "VAL_MISSING_FIELD", "job_id"),
        ("normalize_status", {"job_id": "job-1"}, "VAL_INVALID_UUID", "job_id"),
        ("normalize_status", {"job_id": str(uuid.uuid4())}, "NF_JOB", "job_id"),
    ],
)
async def test_bad_inputs_are_clear_errors(
    client: Client, tool: str, args: dict[str, Any], code: str | None, field: str | None
) -> None:
    error = await call_error(client, tool, args)
    if code is not None:
        assert error["code"] == code, error
    else:
        assert error["code"].startswith("VAL_"), error
    if field is not None:
        assert error["details"].get("field") == field, error
    if tool == "normalize_status" and code != "VAL_MISSING_FIELD":
        assert "normalize_memory" in error["suggestion"], error


async def test_status_of_an_index_job_is_not_found(client: Client, tmp_path: Path) -> None:
    job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
    error = await call_error(client, "normalize_status", {"job_id": job["job_id"]})
    assert error["code"] == "NF_JOB" and "not a normalization job" in error["message"]
    assert "normalize_memory" in error["suggestion"]


async def test_cli_normalize_dry_run_then_real_run(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=require_model())
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO)
    )
    async with Client(params) as client:
        for tags in (["x"], ["y"]):
            metadata = {"tags": tags, "source": tags[0]}  # two sources: two stores of one text
            await call_ok(client, "memory_add", {"type": "design", "content": DUP, "metadata": metadata})

    dry = _cli("normalize", "--dry-run", "--json", env=env)
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["status"] == "completed" and report["dry_run"] is True
    assert report["stats"]["duplicates_merged"] == 1 and report["stats"]["planned"]

    real = _cli("normalize", env=env)  # the table
    assert real.returncode == 0, real.stdout + real.stderr
    assert "duplicates_merged" in real.stdout and "completed" in real.stdout

    skipped = _cli("--json", "normalize", "--skip-deduplication", "--skip-orphan-cleanup", env=env)
    assert skipped.returncode == 0, skipped.stderr
    stats = json.loads(skipped.stdout)["stats"]
    assert stats["duplicates_merged"] == 0 and stats["memories_processed"] == 1

    again = json.loads(_cli("normalize", "--json", env=env).stdout)
    assert again["stats"]["duplicates_merged"] == 0 and again["stats"]["orphans_removed"] == 0
