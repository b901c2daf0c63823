"""memory_statistics reflects live activity; memory_audit shows every mutation, filtered and paged."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from tests.conftest import require_model
from tests.e2e.conftest import call_error, call_ok, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _server(root: Path) -> Client:
    return Client(build_server(make_settings(root, require_model())))


async def _add(client: Client, kind: str, content: str, **extra: Any) -> str:
    return str(
        (await call_ok(client, "memory_add", {"type": kind, "content": content, **extra}))["memory_id"]
    )


async def test_statistics_follow_what_the_session_did(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\nclass Calc:\n    pass\n")
    async with _server(tmp_path) as client:
        before = await call_ok(client, "memory_statistics", {})
        assert before["memories"]["total"] == 0 and before["audit_events"] == 0
        assert "unavailable" not in before["health"].values(), before["health"]  # the model may load

        design = await _add(client, "design", "Sessions share one store through a daemon.")
        req = await _add(
            client,
            "requirements",
            "Two sessions in one project must see each other's writes at once.",
            relationships=[{"type": "RELATES_TO", "target_id": design}],
        )
        doomed = await _add(client, "design", "Give every session its own data directory.")
        await call_ok(client, "memory_update", {"memory_id": req, "metadata": {"priority": "high"}})
        await call_ok(client, "memory_delete", {"memory_id": doomed})
        for query in ("shared store daemon", "sessions see writes"):
            await call_ok(client, "memory_search", {"query": query})
        await call_error(client, "memory_get", {"memory_id": str(uuid.uuid4())})
        await call_ok(client, "index_file", {"file_path": "calc.py"})

        stats = await call_ok(client, "memory_statistics", {})
    assert set(stats["health"].values()) == {"ok"}, stats["health"]
    memories = stats["memories"]
    assert memories["total"] == 2 and memories["by_type"] == {"design": 1, "requirements": 1}
    assert memories["deleted"] == 1 and memories["embedding_pending"] == 0 and memories["stale"] == 0
    assert stats["relationships"]["by_type"].get("RELATES_TO") == 1
    assert (
        stats["index"]["files"] == 1 and stats["index"]["functions"] == 1 and stats["index"]["classes"] == 1
    )
    assert stats["sync"] == {"pending": 0, "inflight": 0, "failed": 0, "dead": 0}
    # 3 creates, 1 update, 1 delete, 1 index_file.
    assert stats["audit_events"] == 6
    perf = stats["performance"]
    tools = perf["tools"]
    assert tools["memory_search"]["calls"] == 2 and tools["memory_search"]["errors"] == 0
    assert tools["memory_add"]["calls"] == 3
    assert tools["memory_get"] == {**tools["memory_get"], "calls": 1, "errors": 1}
    assert tools["memory_statistics"]["calls"] == 1  # the first call; this one is counted after it answers
    assert 0 < perf["search_p50_ms"] <= perf["search_p95_ms"]
    assert perf["avg_search_ms"] > 0 and perf["avg_write_ms"] > 0 and perf["write_p95_ms"] > 0
    assert 0 <= perf["cache_hit_rate"] <= 1 and perf["uptime_seconds"] > 0
    storage = stats["storage"]
    assert storage["qdrant_size_mb"] > 0 and storage["local_db_size_mb"] > 0
    assert stats["jobs"] == [] and stats["warnings"] == []


async def test_statistics_take_no_arguments(client: Client) -> None:
    error = await call_error(client, "memory_statistics", {"verbose": True})
    assert error["code"].startswith("VAL_") and "verbose" in error["message"] + str(error["details"])


async def test_audit_shows_every_mutation_of_a_memory_newest_first(tmp_path: Path) -> None:
    async with _server(tmp_path) as client:
        problem = await _add(client, "problem", "Search slows down after a day of use.")
        old = await _add(client, "fact", "The cache never expires entries.")
        await call_ok(client, "memory_update", {"memory_id": old, "metadata": {"source": "review"}})
        await call_ok(
            client,
            "memory_supersede",
            {
                "old_fact_id": old,
                "new_fact": {"content": "Cache entries expire after ten minutes."},
                "change": {"content": "Added a TTL to the search cache."},
                "rationale": "the TTL shipped",
            },
        )
        await call_ok(client, "memory_feedback", {"memory_id": old, "problem_id": problem, "vote": -0.5})
        await call_ok(client, "memory_update", {"memory_id": old, "archived": True})  # facts stay

        trail = await call_ok(client, "memory_audit", {"memory_id": old})
        ops = [e["operation"] for e in trail["events"]]
        assert ops[0] == "archive" and ops[-1] == "create" and "update" in ops and "utility_vote" in ops
        assert any(op.startswith("supersede") for op in ops), ops
        assert trail["total"] == len(ops) and trail["next_cursor"] is None
        assert [e["seq"] for e in trail["events"]] == sorted(
            (e["seq"] for e in trail["events"]), reverse=True
        )
        assert all(
            e["entity_id"] == old and e["actor"] == "mcp" for e in trail["events"]
        )  # the client's name
        versions = [e["details"].get("version") for e in trail["events"] if e["operation"] != "utility_vote"]
        assert [v for v in versions if v is not None] == sorted(
            (v for v in versions if v is not None), reverse=True
        )

        everything = await call_ok(client, "memory_audit", {"limit": 500})
        creates = await call_ok(client, "memory_audit", {"operation": "create"})
        # The problem, the old fact, and the new fact and change memory_supersede wrote.
        assert creates["total"] == 4 and {problem, old} <= {e["entity_id"] for e in creates["events"]}
        assert everything["total"] == trail["total"] + 3  # + the problem, the new fact, the change

        by_actor = await call_ok(client, "memory_audit", {"actor": "mcp", "limit": 500})
        assert by_actor["total"] == everything["total"]
        assert (await call_ok(client, "memory_audit", {"actor": "somebody-else"}))["total"] == 0

        newest = everything["events"][0]["timestamp"]
        oldest = everything["events"][-1]["timestamp"]
        window = await call_ok(client, "memory_audit", {"since": oldest, "until": newest, "limit": 500})
        assert window["total"] == everything["total"]
        assert (await call_ok(client, "memory_audit", {"since": "2999-01-01T00:00:00Z"}))["total"] == 0
        assert (await call_ok(client, "memory_audit", {"until": "2000-01-01T00:00:00Z"}))["total"] == 0


async def test_audit_pages_cover_the_log_once(tmp_path: Path) -> None:
    async with _server(tmp_path) as client:
        for i in range(7):
            await _add(client, "session", f"Session note {i} about paging the audit log.")
        seen: list[int] = []
        cursor = None
        pages = 0
        while True:
            args: dict[str, Any] = {"limit": 3, **({"cursor": cursor} if cursor else {})}
            page = await call_ok(client, "memory_audit", args)
            assert page["total"] == 7 + pages  # the total counts what was written since; pages do not
            seen += [e["seq"] for e in page["events"]]
            pages += 1
            cursor = page["next_cursor"]
            if cursor is None:
                break
            await _add(client, "session", f"Written while paging {pages}.")  # must not shift the pages
        assert pages == 3 and len(seen) == 7 and seen == sorted(set(seen), reverse=True)


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"memory_id": "not-a-uuid"}, "VAL_INVALID_UUID", "memory_id"),
        ({"cursor": "abc"}, "VAL_INVALID_CURSOR", "cursor"),
        ({"limit": 0}, None, "limit"),
        ({"limit": 501}, None, "limit"),
        ({"since": "yesterday"}, None, "since"),
        ({"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, "VAL_INVALID_RANGE", "since"),
        ({"memory_id": str(uuid.UUID(int=1)), "entity_id": "other"}, "VAL_CONFLICTING_FILTERS", "entity_id"),
        ({"operation": "x" * 65}, None, "operation"),
        ({"who": "me"}, None, "who"),
    ],
)
async def test_audit_bad_inputs(client: Client, args: dict[str, Any], code: str | None, field: str) -> None:
    error = await call_error(client, "memory_audit", args)
    assert error["code"].startswith("VAL_")
    if code:
        assert error["code"] == code
    assert field in str(error["details"]) + error["message"], error
