"""What a compatibility profile costs: each profile's search and store tools against seed 001's.

    .venv/bin/python bench/profiles_latency.py --n 10000

Two stdio sessions on one data directory share the daemon (as two Claude Code server entries
would): one in the union ``default,cortex-find-store,memory-interface-v1``, one in ``cortex-os``
(which cannot share a session with ``default``: both have memory_update). ``--n`` memories go in
through memory_bulk_add; then every query is sent to memory_search, memory-find (auto and fast),
memory-read (targeted) and memory_retrieve in turn, so the tools see the same store and machine
state, and ``--writes`` single stores go through memory_add, memory-store, memory-write and
memory_store. Times are taken at the MCP client (query embedding included). Prints a table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import call
from bench.corpus import memories, queries
from bench.search_latency import DEFAULT_MODEL, stdio_env, summary

UNION = "default,cortex-find-store,memory-interface-v1"
Args = Callable[[str], dict[str, Any]]

SEARCHES: list[tuple[str, str, Args]] = [
    ("memory_search (seed 001)", "union", lambda q: {"query": q, "limit": 10}),
    ("memory-find auto (seed 004)", "union", lambda q: {"query": q, "top_k": 10}),
    ("memory-find fast (seed 004)", "union", lambda q: {"query": q, "top_k": 10, "mode": "fast"}),
    (
        "memory-read targeted (seed 002)",
        "union",
        lambda q: {"op": "read", "repo_id": "bench", "mode": "targeted", "query": q, "limit": 10},
    ),
    ("memory_retrieve (seed 003)", "cortex", lambda q: {"query": q, "limit": 10}),
]


def _store_args(tool: str, i: int) -> dict[str, Any]:
    text = f"Write-path sample {i}: the {tool} call stores one note about cache warm-up order {i * 7}."
    if tool == "memory_add":
        return {"type": "session", "content": text}
    if tool == "memory-store":
        data = {"title": f"Sample {i}", "body_text": text}
        return {"items": [{"kind": "section", "scope": {}, "data": data}]}
    if tool == "memory-write":
        memory = {"text": text, "scope": "repo", "kind": "fact", "confidence": 0.8}
        return {"op": "write", "repo_id": "bench", "memory": memory}
    return {"kind": "note", "text": text}


WRITES = [
    ("memory_add", "union"),
    ("memory-store", "union"),
    ("memory-write", "union"),
    ("memory_store", "cortex"),
]


def _session(data_dir: Path, model: Path, profile: str) -> Client:
    env = stdio_env(data_dir, model, MEMORY_SERVER__PROFILE=profile)
    params = StdioServerParameters(command=sys.executable, args=["-m", "memory_service"], env=env)
    return Client(params, read_timeout_seconds=600)


async def run(args: argparse.Namespace, data_dir: Path) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name, _, _ in SEARCHES}
    times.update({tool: [] for tool, _ in WRITES})
    async with (
        _session(data_dir, args.model, UNION) as union,
        _session(data_dir, args.model, "cortex-os") as cortex,
    ):
        clients = {"union": union, "cortex": cortex}
        items = list(memories(args.n))
        started = time.perf_counter()
        for i in range(0, len(items), 100):
            await call(union, "memory_bulk_add", {"memories": items[i : i + 100]})
        print(f"ingested {args.n} memories in {time.perf_counter() - started:.1f} s", flush=True)
        for name, session, make in SEARCHES:  # warm every path once (model, caches, code)
            await call(clients[session], name.split()[0], make("warm up the model"))
        for q in queries(args.queries):
            for name, session, make in SEARCHES:
                t0 = time.perf_counter()
                await call(clients[session], name.split()[0], make(q))
                times[name].append((time.perf_counter() - t0) * 1000)
        for i in range(args.writes):
            for tool, session in WRITES:
                t0 = time.perf_counter()
                await call(clients[session], tool, _store_args(tool, i))
                times[tool].append((time.perf_counter() - t0) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000, help="memories stored before timing")
    parser.add_argument("--queries", type=int, default=300, help="queries sent to each search tool")
    parser.add_argument("--writes", type=int, default=100, help="single stores through each store tool")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        times = anyio.run(run, args, Path(tmp) / "data")
    print(f"\nN = {args.n}, {args.queries} queries per search tool, {args.writes} stores per store tool")
    for name, values in times.items():
        print(f"{name:<34} {summary(values)}")


if __name__ == "__main__":
    main()
