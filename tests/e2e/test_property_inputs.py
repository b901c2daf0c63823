"""Property-based inputs for every tool the server lists, generated from its published inputSchema.

For each tool (read from ``tools/list`` at run time, so a tool added later is covered):

* valid-ish arguments (hypothesis-jsonschema over the schema, with ids drawn from real memories
  and jobs) and hostile ones (wrong types, unknown fields, megabyte strings, lone surrogates,
  NaN, 10**400, nesting 200 deep...) get a success or the seed-001 error envelope, never a
  traceback or an exception out of the client; a refusal blames the input, not the server;
* a refused call leaves the store as it was: statistics totals, the audit log's head and a
  sentinel search are the same after it; so does any call to a read-only tool, or a dry run;
* paths outside the project root are refused, and nothing is written there.

Examples are drawn by ``@given`` on the async tests (anyio's pytest plugin runs each example on
the module's event loop), derandomized and without an example database, so a run is reproducible
and a failure is shrunk; the failing call is printed as Python source (``Call``)."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import Tool

from memory_service.server import build_server
from memory_service.tools import ALL_TOOLS
from tests.conftest import require_model
from tests.e2e.conftest import call_ok, make_settings
from tests.e2e.property_support import (
    CYPHER,
    MEMORY_TYPES,
    RELATIONSHIP_TYPES,
    SENTENCES,
    Call,
    Current,
    SchemaContext,
    check_category,
    check_result,
    hostile_arguments,
    is_dry_run,
    valid_arguments,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SENTINEL = "Property sentinel: the store fingerprint searches for this exact design note."
SECRET = "outside_secret_token_7f3a"
# Tools are parametrized from the registry the server is built from; test_every_listed_tool_is_
# exercised checks that tools/list names exactly these, and each test reads its schema from the list.
TOOL_NAMES = sorted(spec.name for spec in ALL_TOOLS)
# Run last among the valid-input tests: they delete or rewrite the memories the others draw ids from.
LATE = ("memory_delete", "memory_supersede", "import_memory", "normalize_memory")
VALID_ORDER = sorted(TOOL_NAMES, key=lambda name: (name in LATE, name))

COMMON = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)
VALID = settings(COMMON, max_examples=10)
HOSTILE = settings(COMMON, max_examples=20)
PATHS = settings(COMMON, max_examples=8)

SOURCES = {
    "src/pkg/calc.py": "def add(a, b):\n    return a + b\n\n\nclass Calc:\n    def twice(self, x):\n"
    "        return add(x, x)\n",
    "src/pkg/util.js": "export function clamp(x, lo, hi) {\n  return Math.min(hi, Math.max(lo, x));\n}\n",
    "src/app.py": "from pkg.calc import add\n\n\ndef main():\n    print(add(1, 2))\n",
    "docs/notes.md": "# Notes\n\nNothing to index here.\n",
}


@dataclass(repr=False)
class Env:
    """The server under test, its tools as listed, and what the strategies draw from."""

    client: Client
    root: Path
    outside: Path
    tools: dict[str, Tool]
    named: dict[str, str]  # pool memories and jobs by role
    reserved: dict[str, str]  # memories only the FOUND calls use (no generated call touches them)
    strategies: dict[tuple[str, str], st.SearchStrategy[Any]] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Env(root={str(self.root)!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints the fixtures of a failing example: not the strategies."""
        printer.text(repr(self))

    def context(self, tool: str) -> SchemaContext:
        pool = sorted(self.named.values())
        ids = st.one_of(st.sampled_from(pool), st.uuids().map(str))
        names = st.sampled_from(["REQ-PROP-1", "comp-prop", "PropComponent", "src/pkg/calc.py", "add", *pool])
        dirs = st.sampled_from(["src", "src/pkg", "docs"])

        def role(*keys: str) -> st.SearchStrategy[str]:
            return st.sampled_from([self.named[k] for k in keys])

        hints = {
            "type": st.sampled_from(MEMORY_TYPES),
            "memories.*.type": st.sampled_from(MEMORY_TYPES),
            "*relationships.*.type": st.sampled_from(RELATIONSHIP_TYPES),
            "cypher": st.sampled_from(CYPHER),
            "query": st.sampled_from(SENTENCES),
            "code": st.sampled_from(SENTENCES),
            "entity_id": names,
            "component_id": names,
            "requirement_id": names,
            "problem_id": role("problem"),
            "old_fact_id": role("fact", "fact2"),
            "new_fact_id": role("fact", "fact2"),
            "change_id": role("change"),
            "job_id": role("index_job", "normalize_job"),
            "affected_files": st.lists(st.sampled_from(list(SOURCES)), max_size=3),
            "memory_types": st.lists(st.sampled_from(MEMORY_TYPES), max_size=3),
        }
        if tool == "memory_feedback":
            hints["memory_id"] = role("solution")
        overrides: dict[str, dict[str, st.SearchStrategy[Any]]] = {
            # Files and jobs stay small and finish before the answer (no job outlives its example).
            "index_file": {"file_path": st.sampled_from(list(SOURCES))},
            "index_directory": {"directory_path": dirs, "wait": st.just(True)},
            "reindex": {"directory_path": dirs, "wait": st.just(True)},
            "normalize_memory": {"options.dry_run": st.just(True), "wait": st.just(True)},
            "export_memory": {"output_path": st.uuids().map(lambda u: f"exports/prop-{u.hex}.jsonl")},
            "import_memory": {"file_path": st.just("exports/pool.jsonl")},
        }
        over = overrides.get(tool, {})
        # memory_supersede takes exactly one of new_fact / new_fact_id, and of change / change_id.
        shape = {"memory_supersede": (("new_fact", "change"), ("new_fact_id", "change_id"))}
        require, omit = shape.get(tool, ((), ()))
        # An overridden property (a path in the tmp tree, wait=True, a dry run) is always sent.
        require = (*require, *(path.split(".")[0] for path in over))
        return SchemaContext(ids=ids, hints=hints, overrides=over, require=require, omit=omit)

    def schema(self, tool: str) -> dict[str, Any]:
        assert tool in self.tools, f"{tool} is registered but not in tools/list"
        schema = self.tools[tool].input_schema
        assert schema.get("type") == "object", (tool, schema)
        return schema

    def valid(self, tool: str) -> st.SearchStrategy[Any]:
        key = ("valid", tool)
        if key not in self.strategies:
            schema, ctx = dict(self.schema(tool)), self.context(tool)
            props = {k: v for k, v in schema.get("properties", {}).items() if k not in ctx.omit}
            schema["properties"] = props
            schema["required"] = sorted({*schema.get("required", []), *ctx.require} & set(props))
            self.strategies[key] = valid_arguments(schema, ctx)
        return self.strategies[key]

    def hostile(self, tool: str) -> st.SearchStrategy[Any]:
        key = ("hostile", tool)
        if key not in self.strategies:
            self.strategies[key] = hostile_arguments(self.schema(tool), self.valid(tool))
        return self.strategies[key]


async def _pool(client: Client) -> dict[str, str]:
    """Memories of every kind for generated ids to hit, a sentinel among them; jobs; an export."""

    async def add(kind: str, content: str, **metadata: Any) -> str:
        out = await call_ok(client, "memory_add", {"type": kind, "content": content, "metadata": metadata})
        return str(out["memory_id"])

    named = {"sentinel": await add("design", SENTINEL, title="Sentinel")}
    named["requirement"] = await add("requirements", "Sessions see writes.", requirement_id="REQ-PROP-1")
    named["component"] = await add(
        "component", "Adds numbers.", component_id="comp-prop", name="PropComponent"
    )
    named["problem"] = await add("problem", "Adding two numbers overflows on huge input.", title="overflow")
    named["solution"] = await add("solution", "Use Python ints.", problem_id=named["problem"])
    named["fact"] = await add("fact", "calc.add returns the sum of its arguments.", subject="calc.add")
    named["fact2"] = await add("fact", "calc.add returns the sum of two floats.", subject="calc.add")
    named["change"] = await add("change", "calc.add now accepts floats.", change_type="code")
    named["preference"] = await add("user_preference", "Prefer small modules.", key="size", value="small")
    named["session"] = await add("session", "Indexed the calc package.", session_id="s-1")
    job = await call_ok(client, "index_directory", {"directory_path": "src", "wait": True})
    named["index_job"] = str(job["job_id"])
    job = await call_ok(client, "normalize_memory", {"options": {"dry_run": True}, "wait": True})
    named["normalize_job"] = str(job["job_id"])
    await call_ok(client, "export_memory", {"output_path": "exports/pool.jsonl"})
    return named


@pytest.fixture(scope="module")
async def env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    base = tmp_path_factory.mktemp("property")
    root, outside = base / "root", base / "outside"
    for rel, text in SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "exports").mkdir()
    outside.mkdir()
    (outside / "secret.py").write_text(f"def {SECRET}():\n    return 'never indexed'\n")
    (outside / "pool.jsonl").write_text("")
    (root / "src" / "link_out").symlink_to(outside, target_is_directory=True)
    (root / "src" / "link_file.py").symlink_to(outside / "secret.py")
    async with Client(build_server(make_settings(root, require_model()))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        named = await _pool(client)
        fact = await call_ok(client, "memory_add", {"type": "fact", "content": "The build uses make."})
        health = (await _settle(client))["health"]
        assert set(health.values()) == {"ok"}, health  # so that SERVICE_UNAVAILABLE is a finding
        sentinel = (await _fingerprint(client))["sentinel"]
        assert [hit[0] for hit in sentinel] == [named["sentinel"]], sentinel
        yield Env(client, root, outside, tools, named, {"fact": str(fact["memory_id"])})


async def _settle(client: Client) -> dict[str, Any]:
    """Statistics once no job runs and the graph sync has caught up (a job an earlier example
    started must not change the store while a later one is checked)."""
    deadline = time.monotonic() + 60
    while True:
        stats = await call_ok(client, "memory_statistics", {})
        sync = stats["sync"]
        if not stats["jobs"] and not sync["pending"] and not sync["inflight"]:
            return stats
        assert time.monotonic() < deadline, f"the store did not settle: {stats['jobs']} {sync}"
        await anyio.sleep(0.05)


async def _fingerprint(client: Client, stats: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a refused call must not change, read through the tools."""
    stats = stats or await call_ok(client, "memory_statistics", {})
    audit = await call_ok(client, "memory_audit", {"limit": 5})
    # Only near-copies of the sentinel: a ranking that drifts with time cannot change this set.
    found = await call_ok(client, "memory_search", {"query": SENTINEL, "limit": 5, "min_similarity": 0.9})
    return {
        "memories": stats["memories"],
        "relationships": stats["relationships"],
        "index": stats["index"],
        "audit_events": stats["audit_events"],
        "audit_head": [(e["seq"], e["operation"], e["entity_id"]) for e in audit["events"]],
        "audit_total": audit["total"],
        "sentinel": sorted((r["memory_id"], r["content"], repr(r["metadata"])) for r in found["results"]),
    }


async def _exercise(env: Env, call: Call, *, must_not_write: bool = False) -> dict[str, Any]:
    """Make ``call`` and check the answer; if it was refused (or may not write), check the store."""
    before = await _fingerprint(env.client, await _settle(env.client))
    result = await env.client.call_tool(call.tool, call.args)
    error = check_result(result)
    if currently_in_test_context():  # --hypothesis-show-statistics lists the outcomes
        event(f"{call.tool}: {error.get('code', 'ok')}")
    if error or must_not_write:
        after = await _fingerprint(env.client, await _settle(env.client))
        assert after == before, f"{'refused' if error else 'read-only'} call changed the store: {error}"
    if error:
        check_category(error)
    return error


CURRENT: Current[Env] = Current()


@pytest.fixture
def current(env: Env, tool: str) -> Iterator[Env]:
    with CURRENT.running(env, tool):
        yield env


@pytest.fixture
def paths(env: Env) -> Iterator[Env]:
    with CURRENT.running(env):
        yield env


@st.composite
def calls(draw: st.DrawFn, kind: str) -> Call:
    env, tool = CURRENT.get()
    return Call(tool, draw(env.valid(tool) if kind == "valid" else env.hostile(tool)))


async def test_every_listed_tool_is_exercised(env: Env) -> None:
    assert sorted(env.tools) == TOOL_NAMES, "tools/list and the parametrized tools differ"
    for name in TOOL_NAMES:
        env.schema(name)


@pytest.mark.parametrize("tool", VALID_ORDER)
@VALID
@given(call=calls("valid"))
async def test_valid_inputs_answer_with_a_result_or_an_envelope(current: Env, tool: str, call: Call) -> None:
    hints = current.tools[tool].annotations
    read_only = bool(hints and hints.read_only_hint) or is_dry_run(call.args)
    await _exercise(current, call, must_not_write=read_only)


@pytest.mark.parametrize("tool", TOOL_NAMES)
@HOSTILE
@given(call=calls("hostile"))
async def test_hostile_inputs_are_refused_cleanly_and_change_nothing(
    current: Env, tool: str, call: Call
) -> None:
    hints = current.tools[tool].annotations
    await _exercise(current, call, must_not_write=bool(hints and hints.read_only_hint))


# Calls that broke a property while these tests were written (by Hypothesis, or by hand while
# reading the code its failures pointed at). Generated examples differ from run to run as the
# strategies change; these stay, so each bug stays red until it is fixed. ``{fact}`` is a fact
# no generated call touches.
FOUND: dict[str, tuple[str, dict[str, Any]]] = {
    "graph-param-mixed-list": (
        "graph_query",
        {"cypher": "MATCH (n) RETURN count(n) AS n", "params": {"title": [False, 0]}},
    ),
    "graph-param-huge-int": ("graph_query", {"cypher": "RETURN $p AS p", "params": {"p": 2**63}}),
    "graph-divide-by-zero": ("graph_query", {"cypher": "RETURN 1/0 AS x"}),
    "add-101-bad-relationships": ("memory_add", {"relationships": list(range(101))}),
    "add-metadata-huge-int": ("memory_add", {"type": "design", "content": "x", "metadata": {"n": 10**400}}),
    "bulk-metadata-huge-int": (
        "memory_bulk_add",
        {"memories": [{"type": "design", "content": "bulk x", "metadata": {"n": 10**400}}]},
    ),
    "supersede-change-metadata-huge-int": (
        "memory_supersede",
        {
            "old_fact_id": "{fact}",
            "new_fact": {"content": "The build uses ninja."},
            "change": {"content": "Moved the build to ninja.", "metadata": {"n": 10**400}},
        },
    ),
}


@pytest.mark.parametrize("found", sorted(FOUND))
async def test_inputs_found_earlier_are_refused_cleanly_and_change_nothing(env: Env, found: str) -> None:
    tool, args = FOUND[found]
    args = {k: v.format(**env.reserved) if isinstance(v, str) else v for k, v in args.items()}
    await _exercise(env, Call(tool, args))


def _outside_paths(env: Env) -> st.SearchStrategy[str]:
    """Paths that resolve outside the project root: absolute, ``..``, ``~`` and symlinks inside it."""
    out = env.outside
    up = os.path.relpath(out, env.root)  # "../outside"
    fixed = [
        str(out),
        str(out / "secret.py"),
        str(out / "pool.jsonl"),
        str(out / "new-export.jsonl"),
        f"{up}/secret.py",
        f"{up}/new-export.jsonl",
        f"src/../{up}/secret.py",
        "src/link_out",
        "src/link_out/secret.py",
        "src/link_out/new-export.jsonl",
        "src/link_file.py",
        "/etc/passwd",
        "/etc",
        "/",
        "//etc//passwd",
        "/proc/self/environ",
        "/dev/zero",
        "~",
        "~/.bashrc",
        str(env.root) + "/../outside/secret.py",
    ]
    traversal = st.integers(1, 12).map(lambda n: "../" * n + "etc/passwd")
    return st.one_of(st.sampled_from(fixed), traversal)


def _path_fields(env: Env) -> list[tuple[str, str]]:
    """(tool, property) for every string property named like a file system path."""
    pairs = []
    for name, tool in sorted(env.tools.items()):
        for prop, schema in sorted(tool.input_schema.get("properties", {}).items()):
            if prop.endswith("path") and schema.get("type") == "string":
                pairs.append((name, prop))
    return pairs


@st.composite
def outside_calls(draw: st.DrawFn) -> list[Call]:
    """One call per path property of every tool, each with a path outside the root."""
    env, _ = CURRENT.get()
    out = []
    for tool, prop in _path_fields(env):
        base = draw(env.valid(tool))
        out.append(Call(tool, {**base, prop: draw(_outside_paths(env))}))
    return out


@PATHS
@given(batch=outside_calls())
async def test_paths_outside_the_project_root_are_refused(paths: Env, batch: list[Call]) -> None:
    assert len(batch) >= 5, batch  # index_file, index_directory, reindex, export, import
    before = sorted(p.name for p in paths.outside.iterdir())
    for call in batch:
        error = await _exercise(paths, call)
        assert error, f"{call!r} was accepted"
        assert error["code"] in ("VAL_PATH_OUTSIDE_ROOTS", "VAL_INVALID_PATH"), (call, error)
    assert sorted(p.name for p in paths.outside.iterdir()) == before, "a file was written outside the root"
    found = await call_ok(paths.client, "code_search", {"query": f"def {SECRET}()", "limit": 50})
    assert SECRET not in repr(found["results"]), "a file outside the root was indexed"
