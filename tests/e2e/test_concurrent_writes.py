"""Concurrent writes on one memory lose nothing (issue 8, item 5), through the MCP client.

The server runs each handler in a worker thread, so calls made at once really race. Every change
the server acknowledges must hold afterwards: each acknowledged metadata key is on the record, and
each acknowledged delete stays deleted (no racing update brings the memory back).
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok, payload

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

MEMORIES = 100
KEYS = 5
DELETES = 130
UPDATES_PER_DELETE = 5


async def _add_many(client: Client, contents: list[str]) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(contents), 100):
        items = [{"type": "session", "content": c} for c in contents[start : start + 100]]
        out = await call_ok(client, "memory_bulk_add", {"memories": items})
        assert not out["errors"], out["errors"]
        ids.extend(out["memory_ids"])
    return ids


async def _call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return payload(await client.call_tool(tool, args))


async def test_concurrent_updates_of_one_memory_keep_every_key(client: Client) -> None:
    ids = await _add_many(client, [f"Racing updates target number {i}." for i in range(MEMORIES)])
    acked: dict[str, set[str]] = {mid: set() for mid in ids}
    failures: list[dict[str, Any]] = []

    async def update(mid: str, key: str) -> None:
        out = await _call(client, "memory_update", {"memory_id": mid, "metadata": {key: f"value-{key}"}})
        if out.get("status") == "updated":
            acked[mid].add(key)
        else:
            failures.append(out)

    calls = [(mid, f"k{j}") for mid in ids for j in range(KEYS)]
    random.Random(5).shuffle(calls)
    async with anyio.create_task_group() as tg:
        for mid, key in calls:
            tg.start_soon(update, mid, key)
    assert not failures, failures[:3]
    assert sum(len(keys) for keys in acked.values()) == MEMORIES * KEYS
    lost = {}
    for mid, keys in acked.items():
        got = (await call_ok(client, "memory_get", {"memory_id": mid}))["memory"]
        missing = sorted(keys - set(got["metadata"]))
        if missing or got["version"] != 1 + len(keys):
            lost[mid] = {"missing": missing, "version": got["version"]}
    assert not lost, f"{len(lost)} memories lost acknowledged updates: {list(lost.items())[:3]}"


async def test_acknowledged_deletes_stay_deleted_under_racing_updates(client: Client) -> None:
    contents = [
        f"Deletion race subject {i}: the {i}th racing memory about teal lanterns." for i in range(DELETES)
    ]
    ids = await _add_many(client, contents)
    deleted: set[str] = set()
    outcomes = {"updated": 0, "NF_MEMORY": 0}
    unexpected: list[dict[str, Any]] = []

    async def delete(mid: str) -> None:
        out = await _call(client, "memory_delete", {"memory_id": mid})
        if out.get("status") == "deleted":
            deleted.add(mid)
        else:
            unexpected.append(out)

    async def update(mid: str, key: str) -> None:
        out = await _call(client, "memory_update", {"memory_id": mid, "metadata": {key: "x"}})
        code = out["error"]["code"] if out["status"] == "error" else out["status"]
        if code in outcomes:  # before the delete it lands; after it, NF_MEMORY
            outcomes[code] += 1
        else:
            unexpected.append(out)

    calls: list[tuple[Any, ...]] = []
    for mid in ids:
        calls += [(delete, mid)] + [(update, mid, f"k{j}") for j in range(UPDATES_PER_DELETE)]
    random.Random(130).shuffle(calls)
    async with anyio.create_task_group() as tg:
        for fn, *args in calls:
            tg.start_soon(fn, *args)
    assert not unexpected, unexpected[:3]
    assert deleted == set(ids)  # each memory had exactly one delete, so each was acknowledged
    assert outcomes["updated"] and outcomes["NF_MEMORY"], outcomes  # the calls really interleaved
    resurrected = []
    for mid, content in zip(ids, contents, strict=True):
        result = await client.call_tool("memory_get", {"memory_id": mid})
        if not result.is_error:
            resurrected.append(mid)
            continue
        assert payload(result)["error"]["code"] == "NF_MEMORY"
        found = await call_ok(client, "memory_search", {"query": content, "limit": 20})
        assert mid not in {r["memory_id"] for r in found["results"]}
    assert not resurrected, f"{len(resurrected)} acknowledged deletes were undone: {resurrected[:3]}"


async def test_expected_version_refuses_a_stale_update_or_delete(client: Client) -> None:
    mid = (await call_ok(client, "memory_add", {"type": "session", "content": "Versioned memory."}))[
        "memory_id"
    ]
    first = await call_ok(
        client, "memory_update", {"memory_id": mid, "metadata": {"step": 1}, "expected_version": 1}
    )
    assert first["updated_fields"] == ["metadata.step"]
    stale = await call_error(
        client, "memory_update", {"memory_id": mid, "metadata": {"step": 2}, "expected_version": 1}
    )
    assert stale["code"] == "CON_VERSION_MISMATCH" and stale["category"] == "CONFLICT"
    assert stale["details"]["expected"] == 1 and stale["details"]["current"] == 2
    assert stale["details"]["field"] == "expected_version"
    assert "memory_get" in stale["suggestion"]
    got = await call_ok(client, "memory_get", {"memory_id": mid})
    assert got["memory"]["metadata"]["step"] == 1 and got["memory"]["version"] == 2
    stale_delete = await call_error(client, "memory_delete", {"memory_id": mid, "expected_version": 1})
    assert stale_delete["code"] == "CON_VERSION_MISMATCH" and stale_delete["details"]["current"] == 2
    await call_ok(client, "memory_get", {"memory_id": mid})  # the refused delete deleted nothing
    bad = await call_error(client, "memory_delete", {"memory_id": mid, "expected_version": 0})
    assert bad["code"] == "VAL_OUT_OF_RANGE" and bad["details"]["field"] == "expected_version"
    done = await call_ok(client, "memory_delete", {"memory_id": mid, "expected_version": 2})
    assert done["status"] == "deleted"
    gone = await call_error(client, "memory_update", {"memory_id": mid, "metadata": {"step": 3}})
    assert gone["code"] == "NF_MEMORY"


async def test_racing_writers_with_expected_version_succeed_once_per_version(client: Client) -> None:
    mid = (await call_ok(client, "memory_add", {"type": "session", "content": "Contended memory."}))[
        "memory_id"
    ]
    codes: list[str] = []

    async def writer(n: int) -> None:
        args = {"memory_id": mid, "metadata": {f"w{n}": n}, "expected_version": 1}
        out = await _call(client, "memory_update", args)
        codes.append(out["error"]["code"] if out["status"] == "error" else out["status"])

    async with anyio.create_task_group() as tg:
        for n in range(10):
            tg.start_soon(writer, n)
    assert sorted(codes) == ["CON_VERSION_MISMATCH"] * 9 + ["updated"]
    got = await call_ok(client, "memory_get", {"memory_id": mid})
    assert got["memory"]["version"] == 2


async def _facts(client: Client, contents: list[str]) -> list[str]:
    items = [{"type": "fact", "content": c} for c in contents]
    out = await call_ok(client, "memory_bulk_add", {"memories": items})
    assert not out["errors"], out["errors"]
    return list(out["memory_ids"])


async def test_opposite_supersedes_racing_never_make_a_loop(client: Client) -> None:
    pairs = 40
    facts = await _facts(
        client,
        [f"Racing pair {i} side {side}: the {side} queue is primary." for i in range(pairs) for side in "ab"],
    )
    change = (await call_ok(client, "memory_add", {"type": "change", "content": "Swapped queues."}))[
        "memory_id"
    ]
    codes: dict[int, list[str]] = {i: [] for i in range(pairs)}

    async def supersede(i: int, old: str, new: str) -> None:
        out = await _call(
            client, "memory_supersede", {"old_fact_id": old, "new_fact_id": new, "change_id": change}
        )
        codes[i].append(out["error"]["code"] if out["status"] == "error" else out["status"])

    async with anyio.create_task_group() as tg:
        for i in range(pairs):
            a, b = facts[2 * i], facts[2 * i + 1]
            tg.start_soon(supersede, i, a, b)
            tg.start_soon(supersede, i, b, a)
    for i in range(pairs):
        assert sorted(codes[i]) == ["CON_ALREADY_SUPERSEDED", "committed"], (i, codes[i])
        a, b = facts[2 * i], facts[2 * i + 1]
        got = [(await call_ok(client, "memory_get", {"memory_id": m}))["memory"] for m in (a, b)]
        live = [m["id"] for m in got if not m["metadata"].get("superseded")]
        assert len(live) == 1, got  # one live fact: never both superseded (a loop), never neither
        found = await call_ok(client, "memory_search", {"query": got[0]["content"], "limit": 20})
        ids = {r["memory_id"] for r in found["results"]}
        assert live[0] in ids and ({a, b} - set(live)).isdisjoint(ids)


async def test_a_supersede_racing_an_archive_does_not_bring_the_fact_back(client: Client) -> None:
    n = 40
    olds = await _facts(client, [f"Archive-race fact {i}: port {8000 + i} is open." for i in range(n)])
    news = await _facts(client, [f"Archive-race fact {i}: port {9000 + i} is open." for i in range(n)])
    change = (await call_ok(client, "memory_add", {"type": "change", "content": "Moved ports."}))["memory_id"]
    codes: list[str] = []

    async def supersede(old: str, new: str) -> None:
        out = await _call(
            client, "memory_supersede", {"old_fact_id": old, "new_fact_id": new, "change_id": change}
        )
        codes.append(out["error"]["code"] if out["status"] == "error" else out["status"])

    async def archive(mid: str) -> None:  # a fact is never deleted (seed 002): archiving hides it
        await call_ok(client, "memory_update", {"memory_id": mid, "archived": True})

    calls: list[tuple[Any, ...]] = []
    for old, new in zip(olds, news, strict=True):
        calls += [(supersede, old, new), (archive, old)]
    random.Random(40).shuffle(calls)
    async with anyio.create_task_group() as tg:
        for fn, *args in calls:
            tg.start_soon(fn, *args)
    assert set(codes) <= {"committed", "NF_MEMORY"}, codes  # before the archive, or refused after it
    for old in olds:
        assert (await call_ok(client, "memory_get", {"memory_id": old}))["memory"]["status"] == "archived"
