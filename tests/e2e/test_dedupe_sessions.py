"""Identical stores racing from several client processes (stdio sessions of one daemon) make
exactly one record, and every session is told its id."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO, require_model, server_env
from tests.e2e.conftest import call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SESSIONS = 4
CALLS = 60  # per session, all in flight at once: 240 racing stores


def _session(env: dict[str, str]) -> Client:
    return Client(
        StdioServerParameters(command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO))
    )


async def test_racing_identical_stores_from_several_processes_write_once(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=require_model())
    answers: list[tuple[int, dict[str, Any]]] = []

    async def session(me: int) -> None:
        async with _session(env) as client:

            async def store(i: int) -> None:
                args: dict[str, Any] = {"type": "design", "content": "Every process stores this once."}
                if i % 3 == 0:  # a third carry one idempotency key, each with its own text
                    args = {"type": "session", "content": f"Keyed {me}/{i}.", "idempotency_key": "k-1"}
                answers.append((i % 3, await call_ok(client, "memory_add", args)))

            async with anyio.create_task_group() as tg:
                for i in range(CALLS):
                    tg.start_soon(store, i)

    async with anyio.create_task_group() as tg:
        for me in range(SESSIONS):
            tg.start_soon(session, me)

    assert len(answers) == SESSIONS * CALLS
    for group in ({1, 2}, {0}):
        mine = [a for g, a in answers if g in group]
        assert len({a["memory_id"] for a in mine}) == 1, mine[:3]  # one id for every answer
        assert sum(a["status"] == "created" for a in mine) == 1
        assert all(a["status"] in ("created", "skipped_dedupe") for a in mine)
    async with _session(env) as client:
        stats = await call_ok(client, "memory_statistics", {})
        assert stats["memories"]["total"] == 2, stats["memories"]
        creates = await call_ok(client, "memory_audit", {"operation": "create", "limit": 500})
        assert creates["total"] == 2
