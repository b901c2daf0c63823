"""kill -9 the real server in the middle of writes; every acknowledged write survives whole.

The server runs as ``python -m memory_service`` over stdio (:mod:`tests.e2e.crash_client`). A
write is *acknowledged* when its response arrived. Kills come from a timer (SIGKILL at a random
moment, whatever the server is doing) and from the test-only hook ``MEMORY_TEST_CRASH_AT``
(``os._exit`` at a named point inside the write path: after the journal, after the vector
upsert, after the commit). After each restart every acknowledged memory must be there, found
by search, with its graph edges, and the outbox must be empty; at the end normalization (dry
run) must find nothing to repair. The index test kills index jobs mid-way, changes files between
kills, and compares the recovered, reindexed code graph with a clean index of the same files.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROFILE, require_model, server_env
from tests.e2e.crash_client import ServerGone, StdioServer

pytestmark = [pytest.mark.e2e]

# One plan per kill: a crash point of the write path, or None for a SIGKILL from a timer.
WRITE_PLANS = [
    None,
    "write.journaled:2",
    None,
    "write.upserted:1",
    None,
    "write.committed:3",
    None,
    "write.upserted:4",
    None,
    "write.journaled:1",
    None,
    "write.upserted:2",
]
# The server profile replays the first half (each crash point once, and three timer kills): the
# recovery code is the same, each restart there costs a reconnection to Neo4j and Redis, and the
# embedded run covers every plan.
PLANS = WRITE_PLANS if PROFILE == "embedded" else WRITE_PLANS[:6]
INDEX_PLANS = ["index.upserted:2", "index.committed:3", None, "index.journaled:4", "index.upserted:1"]
REPAIRS = ("graph_nodes_repaired", "context_vectors_repaired", "dangling_edges_removed", "orphans_removed")


@dataclass
class Written:
    memory_id: str
    content: str
    edges: set[tuple[str, str]] = field(default_factory=set)


def _start(env: dict[str, str], log: Path, plan: str | None = None) -> tuple[StdioServer, str | None]:
    """The server, and the crash plan it runs with: None when it has none (then the caller must
    kill it with a timer), also when the plan's point was reached while recovering at start."""
    env = {**env, "MEMORY_DAEMON__ENABLED": "false"}  # the server itself, not a forwarder to it
    if plan:
        env = {**env, "MEMORY_TEST_CRASH_AT": plan}
    try:
        return StdioServer(env, log), plan
    except ServerGone:  # the plan's point was reached while recovering at start: start without it
        assert plan, f"the server did not start; see {log}"
        return StdioServer({k: v for k, v in env.items() if k != "MEMORY_TEST_CRASH_AT"}, log), None


def _body(rng: random.Random, anchor: str, n: int) -> dict[str, Any]:
    token = f"probe{rng.getrandbits(48):012x}"
    topic = rng.choice(["billing retries", "cache eviction", "login throttling", "report export"])
    return {
        "type": "session",
        "content": f"Crash probe {token} {n}: we looked at {topic} and wrote down step {n}.",
        "metadata": {"session_id": f"thread-{n % 4}"},
        "relationships": [{"type": "RELATES_TO", "target_id": anchor}],
    }


def _write_until_killed(server: StdioServer, rng: random.Random, anchor: str, acked: list[Written]) -> None:
    """memory_add and memory_bulk_add back to back until the server dies under a call."""
    deadline = time.monotonic() + 120  # a kill comes within seconds: never write forever
    while True:
        assert time.monotonic() < deadline, "the server was never killed: no timer and no crash point"
        n = len(acked)
        bodies = [_body(rng, anchor, n + i) for i in range(rng.choice([1, 1, 5, 20, 40]))]
        try:
            if len(bodies) == 1:
                ids = [server.call("memory_add", bodies[0])["memory_id"]]
            else:
                out = server.call("memory_bulk_add", {"memories": bodies})
                assert not out["errors"], out
                ids = out["memory_ids"]
        except ServerGone:
            return
        acked += [
            Written(i, b["content"], {("RELATES_TO", anchor)}) for i, b in zip(ids, bodies, strict=True)
        ]


def _verify(server: StdioServer, acked: list[Written], search: list[Written]) -> None:
    for w in acked:
        got = server.call("memory_get", {"memory_id": w.memory_id, "include_relationships": True})
        assert got["memory"]["content"] == w.content
        edges = {(r["type"], r["other_id"]) for r in got["relationships"] if r["direction"] == "outgoing"}
        assert edges >= w.edges, f"{w.memory_id} lost its edges: {edges}"
    for w in search:
        hits = server.call("memory_search", {"query": w.content, "limit": 5})["results"]
        assert w.memory_id in [h["memory_id"] for h in hits], f"{w.memory_id} not found by its content"
    _outbox_empty(server)


def _outbox_empty(server: StdioServer) -> None:
    for _ in range(60):  # drained before serving; the housekeeper retries what could not be
        sync = server.call("memory_statistics", {})["sync"]
        if sync["pending"] == sync["inflight"] == sync["failed"] == 0:
            return
        time.sleep(0.5)
    raise AssertionError(f"the graph-sync outbox did not drain: {sync}")


def _nothing_to_repair(server: StdioServer) -> None:
    started = server.call("normalize_memory", {"options": {"dry_run": True}, "wait": True})
    job = server.call("normalize_status", {"job_id": started["job_id"]})
    assert job["status"] == "completed", job
    assert {k: job["stats"][k] for k in REPAIRS} == dict.fromkeys(REPAIRS, 0), job["stats"]


def test_acknowledged_memories_survive_kill_9_anywhere(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=require_model())
    log = tmp_path / "server.log"
    rng = random.Random(12)
    server, plan = _start(env, log, PLANS[0])
    anchor = server.call("memory_add", {"type": "design", "content": "Crash tests relate to this anchor."})
    acked: list[Written] = []
    verified = 0
    interrupted = 0
    for i in range(len(PLANS)):  # the running server was started with ``plan``
        if plan is None:
            server.kill_after(rng.uniform(0.2, 4.0))
        _write_until_killed(server, rng, anchor["memory_id"], acked)
        interrupted += 1  # the loop only ends when a call got no answer: the kill hit a call
        server.close()
        server, plan = _start(env, log, PLANS[i + 1] if i + 1 < len(PLANS) else None)
        _verify(server, acked, acked[verified:])
        verified = len(acked)
    server.close()
    server, _ = _start(env, log)
    try:
        _verify(server, acked, rng.sample(acked, min(60, len(acked))))
        _nothing_to_repair(server)
    finally:
        server.close()
    assert len(acked) > 25, (interrupted, len(acked))  # every round acknowledged writes before its kill
    # The crash points left interrupted writes behind, and the restart finished them.
    assert re.search(r"write journal: finished [1-9]", log.read_text(errors="replace"))


def _project(root: Path, files: int, renamed: int = 0, variant: int = 0) -> None:
    """``files`` Python modules calling each other; the first ``renamed`` use other names.

    Each ``variant`` changes every file (a constant), so that every index pass has all of them
    to do and each crash point of the plan is reached whatever the pass before it finished."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        name = f"step_{i}" if i >= renamed else f"stage_{i}"
        callee = f"step_{i + 1}" if i + 1 >= renamed else f"stage_{i + 1}"
        imports = f"from mod_{i + 1} import {callee}\n\n" if i + 1 < files else ""
        call = f"    return {callee}(x) + 1\n" if i + 1 < files else "    return x\n"
        (root / f"mod_{i}.py").write_text(
            f'"""Module {i}."""\n{imports}\ndef {name}(x):\n    """Step {i} of the chain."""\n{call}\n\n'
            f"class Holder{i}:\n    def get(self):\n        return {name}({i})\n\n"
            f"    def put(self, v):\n        self.v = v\n\n\n"
            f"def helper_{i}(a, b):\n    return a * b + {i + variant}\n"
        )


def _code_figures(server: StdioServer) -> dict[str, Any]:
    stats = server.call("memory_statistics", {})
    index = stats["index"]
    rel = stats["relationships"]
    return {
        "files": index["files"],
        "functions": index["functions"],
        "classes": index["classes"],
        "nodes": {k: v for k, v in rel["nodes_by_label"].items() if k != "Memory"},
        "edges": rel["by_type"],
    }


def _kill_while_indexing(server: StdioServer) -> None:
    """Start an index job and SIGKILL the server once the job has made progress, mid-way."""
    job_id = server.call("index_directory", {"directory_path": "."})["job_id"]
    for _ in range(1200):
        job = server.call("index_status", {"job_id": job_id})["job"]
        assert job["status"] in ("queued", "running"), job  # every file changed: it takes seconds
        if job["progress"] > 0:
            server.kill()
            return
        time.sleep(0.05)
    raise AssertionError(f"the index job made no progress in a minute: {job}")


def _index(server: StdioServer) -> dict[str, Any]:
    job = server.call("index_directory", {"directory_path": ".", "wait": True})["job"]
    assert job["status"] == "completed", job
    return job


def test_index_job_killed_mid_way_recovers_to_a_complete_code_graph(tmp_path: Path) -> None:
    model = require_model()
    files, renamed = 120, 30
    clean = tmp_path / "clean"
    _project(clean / "project", files, renamed, variant=len(INDEX_PLANS) - 1)
    reference_env = {
        **server_env(clean / "data", model=model),
        "MEMORY_PROJECT_ROOT": str(clean / "project"),
        "MEMORY_INDEXER__BATCH_UNITS": "32",
    }
    server, _ = _start(reference_env, tmp_path / "clean.log")
    try:
        _index(server)
        expected = _code_figures(server)
    finally:
        server.close()
    assert expected["files"] == files and expected["nodes"].get("Function", 0) > files

    work = tmp_path / "work"
    env = {
        **server_env(work / "data", model=model),
        "MEMORY_PROJECT_ROOT": str(work / "project"),
        "MEMORY_INDEXER__BATCH_UNITS": "32",
    }
    log = tmp_path / "work.log"
    for round_, plan in enumerate(INDEX_PLANS):
        # Every file changes between kills (a rename from round 2 on): old units must leave
        # every store, and every pass has all the files to do.
        _project(work / "project", files, renamed if round_ >= 2 else 0, variant=round_)
        server, planned = _start(env, log, plan)
        with pytest.raises(ServerGone):
            if planned is None:
                _kill_while_indexing(server)
            _index(server)
        server.close()
    server, _ = _start(env, log)
    try:
        _outbox_empty(server)
        _index(server)
        _outbox_empty(server)
        assert _code_figures(server) == expected
        for i in (0, renamed - 1):
            hits = server.call("code_search", {"query": f"def stage_{i}(x)", "limit": 10})["results"]
            names = {h["name"] for h in hits}
            assert f"stage_{i}" in names and f"step_{i}" not in names, names
        _nothing_to_repair(server)
    finally:
        server.close()
    assert re.search(r"write journal: finished [1-9]", log.read_text(errors="replace"))
