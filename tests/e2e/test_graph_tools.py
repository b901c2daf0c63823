"""graph_query and get_related through the MCP client, on the profile's graph engine.

The graph is built through the tools (memory_add with relationships, index_file), so what is
queried is what the server writes. Cypher here runs on both engines, except where a test writes
nodes itself: Neo4j nodes belong to the project only with ``ns = $namespace`` (LadybugDB has no
such property), so those statements branch on PROFILE.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from tests.conftest import PROFILE, require_model
from tests.e2e.conftest import call_error, call_ok, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BILLING = '''"""Billing."""


class Invoice:
    def total(self, net):
        return add_tax(net)


def add_tax(amount):
    return amount * 1.2
'''
BILLING_PATH = "shop/billing.py"
ADD_TAX = f"{BILLING_PATH}::add_tax#function"
TIMEOUT_MS = 1000
# A write that lands in the project's graph on each engine (Neo4j: the namespace property).
CREATE_MEMORIES = (
    "UNWIND $ids AS i CREATE (:Memory {id: i, name: i, ns: $namespace})"
    if PROFILE == "server"
    else "UNWIND $ids AS i CREATE (:Memory {id: i, name: i})"
)
# Neo4j is shared by the session's servers: a project's nodes are those of its namespace.
IN_PROJECT = "WHERE m.ns = $namespace" if PROFILE == "server" else ""
COUNT = f"MATCH (m:Memory) {IN_PROJECT} RETURN count(m) AS n"
# Four-way cartesian product over the generated nodes (8e9 rows): never finishes in time.
RUNAWAY = (
    "MATCH (a:Memory), (b:Memory), (c:Memory), (d:Memory) "
    "WHERE a.name + b.name + c.name + d.name = 'never' RETURN count(*) AS n"
)


async def _server(root: Path, **graph: Any) -> AsyncIterator[Client]:
    (root / "shop").mkdir(parents=True)
    (root / BILLING_PATH).write_text(BILLING)
    settings = make_settings(root, require_model())
    settings.graph.query_timeout_ms = TIMEOUT_MS
    for key, value in graph.items():
        setattr(settings.graph, key, value)
    async with Client(build_server(settings)) as c:
        yield c


@pytest.fixture(scope="module")
async def built(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    """A read-only server with design -> spec -> plan (DEPENDS_ON) and the indexed billing file."""
    async for client in _server(tmp_path_factory.mktemp("graph")):
        ids: dict[str, str] = {}
        ids["plan"] = (
            await call_ok(client, "memory_add", {"type": "requirements", "content": "Ship invoices."})
        )["memory_id"]
        spec = {"type": "component", "content": "Invoices carry tax.", "relationships": []}
        spec["relationships"] = [{"type": "DEPENDS_ON", "target_id": ids["plan"]}]
        ids["spec"] = (await call_ok(client, "memory_add", spec))["memory_id"]
        design = {"type": "design", "content": "Tax is added by add_tax.", "relationships": []}
        design["relationships"] = [{"type": "DEPENDS_ON", "target_id": ids["spec"]}]
        ids["design"] = (await call_ok(client, "memory_add", design))["memory_id"]
        assert (await call_ok(client, "index_file", {"file_path": BILLING_PATH}))["status"] == "indexed"
        yield client, ids


@pytest.fixture(scope="module")
async def writable(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """A server with MEMORY_GRAPH__ALLOW_WRITES on."""
    async for client in _server(tmp_path_factory.mktemp("graph-rw"), allow_writes=True):
        await call_ok(
            client, "memory_add", {"type": "design", "content": "The first memory makes the table."}
        )
        yield client


# --------------------------------------------------------------------------- graph_query


async def test_query_returns_nodes_relationships_and_paths(built: tuple[Client, dict[str, str]]) -> None:
    client, ids = built
    cypher = "MATCH (a:Memory)-[r:DEPENDS_ON]->(b:Memory) WHERE a.id = $id RETURN a, r, b"
    got = await call_ok(client, "graph_query", {"cypher": cypher, "params": {"id": ids["design"]}})
    assert (got["row_count"], got["truncated"], got["read_only"]) == (1, False, True)
    assert isinstance(got["query_time_ms"], int)
    row = got["results"][0]
    assert (row["a"]["_label"], row["a"]["id"], row["a"]["type"]) == ("Memory", ids["design"], "design")
    assert row["b"]["id"] == ids["spec"]
    assert (row["r"]["_type"], row["r"]["_src"], row["r"]["_dst"]) == (
        "DEPENDS_ON",
        ids["design"],
        ids["spec"],
    )

    cypher = "MATCH p = (a:Memory)-[:DEPENDS_ON*1..2]->(b:Memory) WHERE a.id = $id RETURN p ORDER BY b.id"
    got = await call_ok(client, "graph_query", {"cypher": cypher, "params": {"id": ids["design"]}})
    paths = [row["p"] for row in got["results"]]
    assert sorted(len(p["relationships"]) for p in paths) == [1, 2]
    longest = max(paths, key=lambda p: len(p["nodes"]))
    assert [n["id"] for n in longest["nodes"]] == [ids["design"], ids["spec"], ids["plan"]]
    assert {r["_type"] for r in longest["relationships"]} == {"DEPENDS_ON"}


async def test_the_dialect_example_of_the_docs(built: tuple[Client, dict[str, str]]) -> None:
    """docs/tools.md's graph_query example, in the profile engine's dialect."""
    client, ids = built
    cypher = "MATCH (d:Memory)-[r]->(q:Memory) WHERE d.type = $type RETURN d.id AS design, label(r) AS rel, q"
    if PROFILE == "server":
        cypher = (
            "MATCH (d:Memory)-[r]->(q:Memory) WHERE d.ns = $namespace AND d.type = $type "
            "RETURN d.id AS design, type(r) AS rel, q"
        )
    got = await call_ok(client, "graph_query", {"cypher": cypher, "params": {"type": "design"}})
    assert [(r["design"], r["rel"], r["q"]["id"]) for r in got["results"]] == [
        (ids["design"], "DEPENDS_ON", ids["spec"])
    ]


async def test_query_reads_the_code_graph(built: tuple[Client, dict[str, str]]) -> None:
    client, _ = built
    # file_path is one of the extra properties, JSON text in n.props on both engines: use the id.
    mine = " AND f.ns = $namespace" if PROFILE == "server" else ""  # the shared Neo4j: this project's
    cypher = f"MATCH (f:Function) WHERE f.id STARTS WITH $path{mine} RETURN f.name AS name, f ORDER BY name"
    got = await call_ok(client, "graph_query", {"cypher": cypher, "params": {"path": BILLING_PATH}})
    assert [r["name"] for r in got["results"]] == ["Invoice.total", "add_tax"]
    assert got["results"][1]["f"]["file_path"] == BILLING_PATH  # props are decoded in results


async def test_query_caps_rows(built: tuple[Client, dict[str, str]]) -> None:
    client, _ = built
    cypher = f"MATCH (m:Memory) {IN_PROJECT} RETURN m.id AS id"
    got = await call_ok(client, "graph_query", {"cypher": cypher, "limit": 2})
    assert (got["row_count"], got["truncated"], len(got["results"])) == (2, True, 2)
    got = await call_ok(client, "graph_query", {"cypher": cypher, "limit": 3})
    assert (got["row_count"], got["truncated"]) == (3, False)


WRITES = [
    ("CREATE (n:Memory {id: 'x'})", "CREATE"),
    ("MERGE (n:Memory {id: 'x'}) RETURN n", "MERGE"),
    ("MATCH (n:Memory) SET n.name = 'x'", "SET"),
    ("MATCH (n:Memory) DELETE n", "DELETE"),
    ("MATCH (n:Memory) DETACH DELETE n", "DETACH"),
    ("MATCH (n:Memory) REMOVE n.name", "REMOVE"),
    ("DROP TABLE Memory", "DROP"),
    ("CALL db.createLabel('X')", "CALL"),
    ("CALL create_fts_index('Memory', 'idx', ['name'])", "CALL"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "LOAD"),
    ("MATCH (n:Memory) CALL { CREATE (:Memory {id: 'y'}) } RETURN n", "CREATE"),
    ("// read-only, honest\nMATCH (n:Memory) /* really */ SET n.name = 'x'", "SET"),
    ("cReAtE (n:Memory {id: 'x'})", "CREATE"),
    ("match (n:Memory) detach delete n", "DETACH"),
]


@pytest.mark.parametrize(("cypher", "clause"), WRITES, ids=[w[0][:40] for w in WRITES])
async def test_writes_are_refused_naming_the_clause(
    built: tuple[Client, dict[str, str]], cypher: str, clause: str
) -> None:
    client, _ = built
    error = await call_error(client, "graph_query", {"cypher": cypher})
    assert error["code"] == "VAL_WRITE_NOT_ALLOWED", error
    assert error["details"]["clause"] == clause and clause in error["message"]
    assert "MEMORY_GRAPH__ALLOW_WRITES" in error["suggestion"]
    count = await call_ok(client, "graph_query", {"cypher": COUNT})
    assert count["results"] == [{"n": 3}]  # nothing was written


async def test_a_read_subquery_is_allowed(built: tuple[Client, dict[str, str]]) -> None:
    client, _ = built
    cypher = "MATCH (m:Memory) WITH count(m) AS c RETURN c"
    if PROFILE == "server":  # LadybugDB has no CALL { } subqueries; Neo4j's must stay read-only
        cypher = f"CALL {{ MATCH (m:Memory) {IN_PROJECT} RETURN count(m) AS c }} RETURN c"
    got = await call_ok(client, "graph_query", {"cypher": cypher})
    assert got["results"] == [{"c": 3}]


async def test_bad_queries(built: tuple[Client, dict[str, str]]) -> None:
    client, _ = built
    assert (await call_error(client, "graph_query", {"cypher": "MATCH (n RETURN n"}))["code"] == "VAL_CYPHER"
    assert (await call_error(client, "graph_query", {"cypher": "  "}))["code"] == "VAL_EMPTY"
    assert (await call_error(client, "graph_query", {}))["code"] == "VAL_MISSING_FIELD"
    error = await call_error(client, "graph_query", {"cypher": "RETURN 1", "limit": 0})
    assert error["code"] == "VAL_OUT_OF_RANGE"
    error = await call_error(client, "graph_query", {"cypher": "RETURN 1; RETURN 2"})
    assert error["code"] == "VAL_CYPHER"


async def test_allow_writes_enables_a_write_and_a_runaway_query_times_out(writable: Client) -> None:
    ids = [f"gen-{i}" for i in range(300)]
    got = await call_ok(writable, "graph_query", {"cypher": CREATE_MEMORIES, "params": {"ids": ids}})
    assert got["read_only"] is False
    # With write access every query is audited (the one that wrote, with what it ran).
    audit = await call_ok(writable, "memory_audit", {"operation": "graph_query"})
    assert audit["total"] == 1 and audit["events"][0]["details"]["cypher"] == CREATE_MEMORIES
    count = await call_ok(writable, "graph_query", {"cypher": COUNT})
    assert count["results"] == [{"n": 301}]

    error = await call_error(writable, "graph_query", {"cypher": RUNAWAY})
    assert error["code"] == "VAL_QUERY_TIMEOUT", error
    assert error["details"]["timed_out"] is True and error["details"]["timeout_ms"] == TIMEOUT_MS
    # The server is unharmed: the next query and another tool answer normally.
    count = await call_ok(writable, "graph_query", {"cypher": COUNT})
    assert count["results"] == [{"n": 301}]
    assert (await call_ok(writable, "get_related", {"entity_id": "gen-1"}))["related"] == []


# --------------------------------------------------------------------------- get_related


def _related(got: dict[str, Any]) -> dict[str, tuple[int, str, str]]:
    return {r["entity_id"]: (r["distance"], r["relationship"], r["direction"]) for r in got["related"]}


async def test_related_by_memory_id_depth_and_direction(built: tuple[Client, dict[str, str]]) -> None:
    client, ids = built
    got = await call_ok(client, "get_related", {"entity_id": ids["design"], "direction": "OUTGOING"})
    assert got["entity"] == {"entity_id": ids["design"], "type": "Memory", "name": got["entity"]["name"]}
    assert _related(got) == {ids["spec"]: (1, "DEPENDS_ON", "OUTGOING")}
    assert got["related"][0]["type"] == "Memory" and got["related"][0]["kind"] == "component"

    got = await call_ok(
        client, "get_related", {"entity_id": ids["design"], "direction": "OUTGOING", "depth": 2}
    )
    assert _related(got) == {
        ids["spec"]: (1, "DEPENDS_ON", "OUTGOING"),
        ids["plan"]: (2, "DEPENDS_ON", "OUTGOING"),
    }
    assert {r["entity_id"]: r["path_relationships"] for r in got["related"]} == {
        ids["spec"]: ["DEPENDS_ON"],
        ids["plan"]: ["DEPENDS_ON", "DEPENDS_ON"],
    }

    got = await call_ok(
        client, "get_related", {"entity_id": ids["plan"], "direction": "INCOMING", "depth": 5}
    )
    assert _related(got) == {
        ids["spec"]: (1, "DEPENDS_ON", "INCOMING"),
        ids["design"]: (2, "DEPENDS_ON", "INCOMING"),
    }
    got = await call_ok(client, "get_related", {"entity_id": ids["plan"], "direction": "OUTGOING"})
    assert got["related"] == []

    got = await call_ok(client, "get_related", {"entity_id": ids["spec"], "limit": 1})
    assert (len(got["related"]), got["truncated"]) == (1, True)


async def test_related_by_code_id_path_and_qualified_name(built: tuple[Client, dict[str, str]]) -> None:
    client, _ = built
    got = await call_ok(client, "get_related", {"entity_id": "add_tax", "direction": "INCOMING"})
    assert got["entity"]["entity_id"] == ADD_TAX and got["entity"]["type"] == "Function"
    callers = {r["name"]: r["relationship"] for r in got["related"]}
    assert callers.get("Invoice.total") == "CALLS", got

    got = await call_ok(client, "get_related", {"entity_id": ADD_TAX, "relationship_types": ["CALLS"]})
    assert [(r["name"], r["relationship"], r["distance"]) for r in got["related"]] == [
        ("Invoice.total", "CALLS", 1)
    ]

    got = await call_ok(
        client, "get_related", {"entity_id": BILLING_PATH, "direction": "OUTGOING", "depth": 2}
    )
    assert got["entity"]["type"] == "File"
    names = {r["name"] for r in got["related"]}
    assert {"Invoice", "add_tax", "Invoice.total"} <= names, got
    path_of = {r["name"]: r["path_relationships"] for r in got["related"]}
    assert path_of["Invoice"] == ["CONTAINS"] and path_of["Invoice.total"] == ["CONTAINS", "CONTAINS"], got
    for r in got["related"]:  # one type per hop, the last one the last hop's
        assert len(r["path_relationships"]) == r["distance"], r
        assert r["path_relationships"][-1] == r["relationship"], r

    got = await call_ok(client, "get_related", {"entity_id": ADD_TAX, "relationship_types": ["NEVER_USED"]})
    assert got["related"] == []


async def test_related_bad_inputs(built: tuple[Client, dict[str, str]]) -> None:
    client, ids = built
    error = await call_error(client, "get_related", {"entity_id": "no_such_thing"})
    assert error["code"] == "NF_ENTITY" and "memory_search" in error["suggestion"]
    error = await call_error(client, "get_related", {"entity_id": ids["design"], "depth": 6})
    assert error["code"] == "VAL_OUT_OF_RANGE"
    error = await call_error(client, "get_related", {"entity_id": ids["design"], "direction": "UP"})
    assert error["code"] == "VAL_INVALID_ENUM"
    error = await call_error(
        client, "get_related", {"entity_id": ids["design"], "relationship_types": ["a b"]}
    )
    assert error["code"] == "VAL_GRAPH_IDENTIFIER"
    assert (await call_error(client, "get_related", {}))["code"] == "VAL_MISSING_FIELD"
