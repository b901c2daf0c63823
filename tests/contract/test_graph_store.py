"""Contract suite for the GraphStore port, run against every real backend.

LadybugDB (embedded) and Neo4j both always run: Neo4j is the 5.26 test harness the session starts
(``tests/servers/neo4j_harness.py``, built by ``make install``), or the server
``MEMORY_TEST_NEO4J_URI`` points at. Without either, the Neo4j cases fail in CI and are skipped
locally. Each Neo4j case starts from an emptied database (the server is shared by the session, and
users' Cypher in these tests is not scoped to a namespace) and opens its stores in a namespace of
its own, so the adapter's own statements are proven scoped (the Neo4j-only cases below share one
database between namespaces on purpose).
Cypher in these tests is kept to what both engines accept; where the dialects differ
(``label(r)`` on LadybugDB, ``type(r)`` on Neo4j) the test picks by backend and says so.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memory_service.core.errors import ServiceUnavailableError, ValidationError
from memory_service.core.ports import GraphEdge, GraphNode, GraphStore, RelatedEntity
from tests.conftest import NOT_APPLICABLE

pytestmark = pytest.mark.contract


@dataclass
class Backend:
    name: str
    open: Callable[[], GraphStore]  # opens (or reopens) the same underlying graph
    embedded: bool


def _ladybug(tmp_path: Path) -> Backend:
    from memory_service.stores.graph.ladybug import LadybugGraphStore

    path = tmp_path / "graph.lbug"
    return Backend("ladybug", lambda: LadybugGraphStore(path), embedded=True)


def open_neo4j(uri: str, **options: Any) -> GraphStore:
    """The Neo4j adapter on ``uri`` (auth from MEMORY_TEST_NEO4J_USER/PASSWORD, none by default)."""
    from memory_service.stores.graph.neo4j import Neo4jGraphStore

    user = os.environ.get("MEMORY_TEST_NEO4J_USER", "neo4j")
    return Neo4jGraphStore(uri, user, os.environ.get("MEMORY_TEST_NEO4J_PASSWORD"), **options)


def new_namespace() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


def _neo4j(uri: str) -> Backend:
    first = open_neo4j(uri)
    first.query("MATCH (n) DETACH DELETE n", read_only=False)  # each test starts from an empty graph
    first.close()
    namespace = new_namespace()  # every open() of this backend: the same namespace
    return Backend("neo4j", lambda: open_neo4j(uri, namespace=namespace), embedded=False)


BACKENDS = ["ladybug", "neo4j"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "ladybug":
        return _ladybug(tmp_path)
    return _neo4j(request.getfixturevalue("neo4j_uri"))  # started once per session, on first use


@pytest.fixture
def store(backend: Backend) -> Iterator[GraphStore]:
    s = backend.open()
    yield s
    s.close()


def node(label: str, node_id: str, **props: object) -> GraphNode:
    return GraphNode(label, node_id, dict(props))


def edge(rel: str, src: tuple[str, str], dst: tuple[str, str], **props: object) -> GraphEdge:
    return GraphEdge(rel, src[0], src[1], dst[0], dst[1], dict(props))


def keys(edges: list[GraphEdge]) -> set[tuple[str, str, str, str, str]]:
    return {(e.type, e.source_label, e.source_id, e.target_label, e.target_id) for e in edges}


def by_id(found: list[RelatedEntity]) -> dict[str, tuple[int, str, str]]:
    assert len({(r.label, r.id) for r in found}) == len(found), "each entity once"
    return {r.id: (r.distance, r.relationship, r.direction) for r in found}


M1, M2, M3, M4, M5 = (("Memory", f"m{i}") for i in range(1, 6))
F1, FILE1 = ("Function", "f1"), ("File", "src/auth.py")


def build_graph(s: GraphStore) -> None:
    """m1 -> m2 -> m3 -> m1 (cycle, last hop SUPERSEDES), m3 -> m4, f1 -> m1, file -> f1; m5 alone."""
    s.upsert_nodes(
        [
            node("Memory", "m1", name="Auth decision", type="decision", status="active"),
            node("Memory", "m2", name="Token spec", type="spec"),
            node("Memory", "m3", name="Session plan", type="plan"),
            node("Memory", "m4", name="Cache note"),
            node("Memory", "m5", name="Lonely"),
            node("Function", "f1", name="login", line=12),
            node("File", "src/auth.py", name="auth.py"),
        ]
    )
    s.upsert_edges(
        [
            edge("DEPENDS_ON", M1, M2, weight=0.5),
            edge("DEPENDS_ON", M2, M3),
            edge("SUPERSEDES", M3, M1),
            edge("DEPENDS_ON", M3, M4),
            edge("IMPLEMENTS", F1, M1),
            edge("CONTAINS", FILE1, F1),
        ]
    )


# --------------------------------------------------------------------------- writes


def test_upsert_nodes_is_idempotent_and_updates(store: GraphStore) -> None:
    store.upsert_nodes([node("Memory", "a", name="A", type="note"), node("Class", "C", name="C")])
    store.upsert_nodes([node("Memory", "a", name="A2", type="note", extra=3)])
    assert store.count_nodes_by_label() == {"Memory": 1, "Class": 1}
    rows = store.query("MATCH (m:Memory) WHERE m.id = $id RETURN m.name AS name, m AS m", {"id": "a"})
    assert rows[0]["name"] == "A2"
    assert rows[0]["m"]["extra"] == 3 and rows[0]["m"]["type"] == "note"


def test_one_upsert_of_known_and_new_nodes_updates_the_one_and_creates_the_other(store: GraphStore) -> None:
    """The embedded store creates the ids it does not hold and merges the others: one call of
    both kinds, repeated, leaves one node per id with the last properties."""
    store.upsert_nodes([node("Memory", f"k{i}", name=f"old {i}", type="note") for i in range(3)])
    batch = [node("Memory", f"k{i}", name=f"new {i}", type="note", extra=i) for i in range(6)]
    store.upsert_nodes(batch)
    store.upsert_nodes(batch)
    assert store.count_nodes_by_label() == {"Memory": 6}
    rows = store.query("MATCH (m:Memory) RETURN m.id AS id, m.name AS name, m AS m ORDER BY id")
    got = [(r["id"], r["name"], r["m"]["extra"]) for r in rows]
    assert got == [(f"k{i}", f"new {i}", i) for i in range(6)]


def test_edges_of_several_types_and_label_pairs(store: GraphStore) -> None:
    build_graph(store)
    assert store.count_edges_by_type() == {"DEPENDS_ON": 3, "SUPERSEDES": 1, "IMPLEMENTS": 1, "CONTAINS": 1}
    assert store.count_nodes_by_label() == {"Memory": 5, "Function": 1, "File": 1}
    # A new type, and a new label pair for an existing type, after the others exist.
    store.upsert_edges([edge("TESTS", ("Function", "test_login"), F1), edge("DEPENDS_ON", FILE1, M4)])
    assert store.count_edges_by_type()["TESTS"] == 1
    assert store.count_edges_by_type()["DEPENDS_ON"] == 4
    assert keys(store.edges_of(*M4)) == {
        ("DEPENDS_ON", "Memory", "m3", "Memory", "m4"),
        ("DEPENDS_ON", "File", "src/auth.py", "Memory", "m4"),
    }


def test_edges_between_nodes_and_one_label_both_ways(store: GraphStore) -> None:
    assert store.edges_between("Memory", {"Function": ["f1"]}) == []  # no table at all yet
    build_graph(store)
    store.upsert_nodes([node("Class", "c1", name="Auth")])  # a label with no edge yet
    store.upsert_edges(
        [edge("CITES", M4, F1, note="x"), edge("CITES", M5, FILE1), edge("RELATES_TO", M5, F1)]
    )
    nodes = {"Function": ["f1", "f9"], "File": ["src/auth.py"], "Class": ["c1"]}
    found = store.edges_between("Memory", nodes)
    assert keys(found) == {
        ("CITES", "Memory", "m4", "Function", "f1"),
        ("RELATES_TO", "Memory", "m5", "Function", "f1"),
        ("IMPLEMENTS", "Function", "f1", "Memory", "m1"),
        ("CITES", "Memory", "m5", "File", "src/auth.py"),
    }  # not CONTAINS between the File and the Function
    assert next(e for e in found if e.source_id == "m4").properties == {"note": "x"}
    assert store.edges_between("Memory", {"Function": [], "Nothing": ["x"]}) == []
    assert store.edges_between("Nobody", {"Function": ["f1"]}) == []


def test_edges_of_both_directions_with_properties(store: GraphStore) -> None:
    build_graph(store)
    edges = store.edges_of(*M1)
    assert keys(edges) == {
        ("DEPENDS_ON", "Memory", "m1", "Memory", "m2"),
        ("SUPERSEDES", "Memory", "m3", "Memory", "m1"),
        ("IMPLEMENTS", "Function", "f1", "Memory", "m1"),
    }
    assert next(e for e in edges if e.type == "DEPENDS_ON").properties == {"weight": 0.5}
    assert store.edges_of("Memory", "missing") == []
    assert store.edges_of("NeverUsed", "x") == []


def test_edge_merge_is_idempotent_and_updates_properties(store: GraphStore) -> None:
    build_graph(store)
    store.upsert_edges([edge("DEPENDS_ON", M1, M2, weight=0.9), edge("DEPENDS_ON", M1, M2, weight=0.9)])
    assert store.count_edges_by_type()["DEPENDS_ON"] == 3
    dep = [e for e in store.edges_of(*M1) if e.type == "DEPENDS_ON"]
    assert len(dep) == 1 and dep[0].properties == {"weight": 0.9}


def test_edge_creates_missing_endpoints_without_clobbering_existing(store: GraphStore) -> None:
    store.upsert_nodes([node("Memory", "m1", name="Kept", type="decision")])
    child, base = ("Class", "Child"), ("Class", "Base")
    store.upsert_edges([edge("INHERITS", child, base), edge("REFERS", child, M1)])
    assert store.count_nodes_by_label() == {"Memory": 1, "Class": 2}
    assert keys(store.edges_of("Class", "Base")) == {("INHERITS", "Class", "Child", "Class", "Base")}
    rows = store.query("MATCH (m:Memory) WHERE m.id = 'm1' RETURN m.name AS name, m.type AS type")
    assert rows == [{"name": "Kept", "type": "decision"}]


def test_self_loop_is_one_edge(store: GraphStore) -> None:
    store.upsert_edges([edge("RELATES_TO", M5, M5)])
    assert len(store.edges_of(*M5)) == 1
    assert store.delete_node(*M5) == 1


def test_delete_edges_of_returns_removed_edges_and_keeps_node(store: GraphStore) -> None:
    build_graph(store)
    removed = store.delete_edges_of(*M3)
    assert keys(removed) == {
        ("DEPENDS_ON", "Memory", "m2", "Memory", "m3"),
        ("SUPERSEDES", "Memory", "m3", "Memory", "m1"),
        ("DEPENDS_ON", "Memory", "m3", "Memory", "m4"),
    }
    assert store.edges_of(*M3) == []
    assert store.count_nodes_by_label()["Memory"] == 5
    assert store.count_edges_by_type() == {"DEPENDS_ON": 1, "IMPLEMENTS": 1, "CONTAINS": 1}
    assert store.delete_edges_of(*M3) == []


def test_delete_nodes_in_bulk(store: GraphStore) -> None:
    build_graph(store)
    # m1 has 3 edges, m4 has 1 (m3 -> m4); unknown ids and unknown labels are ignored.
    assert store.delete_nodes("Memory", ["m1", "m4", "nope"]) == 4
    assert store.count_nodes_by_label()["Memory"] == 3
    assert store.edges_of(*M1) == []
    assert store.delete_nodes("Memory", []) == 0
    assert store.delete_nodes("Nothing", ["x"]) == 0


def test_delete_node_counts_edges(store: GraphStore) -> None:
    build_graph(store)
    assert store.delete_node(*M1) == 3
    assert store.count_nodes_by_label()["Memory"] == 4
    assert store.count_edges_by_type() == {"DEPENDS_ON": 2, "CONTAINS": 1}
    assert store.delete_node(*M1) == 0
    assert store.delete_node(*M5) == 0
    assert store.delete_node("NeverUsed", "x") == 0
    assert store.count_nodes_by_label()["Memory"] == 3


# --------------------------------------------------------------------------- traversal


def test_related_depth_and_direction(store: GraphStore) -> None:
    build_graph(store)
    assert by_id(store.related(*M1, direction="OUTGOING")) == {"m2": (1, "DEPENDS_ON", "OUTGOING")}
    assert by_id(store.related(*M1, direction="OUTGOING", depth=3)) == {  # the cycle back to m1 is excluded
        "m2": (1, "DEPENDS_ON", "OUTGOING"),
        "m3": (2, "DEPENDS_ON", "OUTGOING"),
        "m4": (3, "DEPENDS_ON", "OUTGOING"),
    }
    assert by_id(store.related(*M1, direction="INCOMING")) == {
        "m3": (1, "SUPERSEDES", "INCOMING"),
        "f1": (1, "IMPLEMENTS", "INCOMING"),
    }
    assert by_id(store.related(*M1, direction="INCOMING", depth=2)) == {
        "m3": (1, "SUPERSEDES", "INCOMING"),
        "f1": (1, "IMPLEMENTS", "INCOMING"),
        "m2": (2, "DEPENDS_ON", "INCOMING"),
        "src/auth.py": (2, "CONTAINS", "INCOMING"),
    }


def test_related_both_uses_shortest_distance_and_last_hop(store: GraphStore) -> None:
    build_graph(store)
    found = store.related(*M1, direction="BOTH", depth=2)
    assert by_id(found) == {
        "m2": (1, "DEPENDS_ON", "OUTGOING"),
        "m3": (1, "SUPERSEDES", "INCOMING"),  # 1 hop via the cycle edge, not 2 via m2
        "f1": (1, "IMPLEMENTS", "INCOMING"),
        "m4": (2, "DEPENDS_ON", "OUTGOING"),  # last hop m3 -> m4 points at m4
        "src/auth.py": (2, "CONTAINS", "INCOMING"),
    }
    m1 = next(r for r in store.related(*M2, depth=1) if r.id == "m1")
    assert (m1.label, m1.name, m1.properties["type"], m1.properties["status"]) == (
        "Memory",
        "Auth decision",
        "decision",
        "active",
    )
    assert [r.distance for r in found] == sorted(r.distance for r in found)
    assert len(store.related(*M1, direction="BOTH", depth=2, limit=2)) == 2


def paths(found: list[RelatedEntity]) -> dict[str, list[str]]:
    for r in found:  # the whole path, one type per hop, ending in the last hop's
        assert len(r.path) == r.distance and r.path[-1] == r.relationship, r
    return {r.id: r.path for r in found}


D, S, IMPL, CONT = "DEPENDS_ON", "SUPERSEDES", "IMPLEMENTS", "CONTAINS"


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_related_reports_the_whole_path(store: GraphStore, depth: int) -> None:
    build_graph(store)
    outgoing = {"m2": [D], "m3": [D, D], "m4": [D, D, D]}
    incoming = {"m3": [S], "f1": [IMPL], "m2": [S, D], "src/auth.py": [IMPL, CONT]}
    both = {"m2": [D], "m3": [S], "f1": [IMPL], "m4": [S, D], "src/auth.py": [IMPL, CONT]}
    from_m2 = {"m1": [D], "m3": [D], "f1": [D, IMPL], "m4": [D, D], "src/auth.py": [D, IMPL, CONT]}

    def upto(expected: dict[str, list[str]]) -> dict[str, list[str]]:
        return {k: v for k, v in expected.items() if len(v) <= depth}

    assert paths(store.related(*M1, direction="OUTGOING", depth=depth)) == upto(outgoing)
    assert paths(store.related(*M1, direction="INCOMING", depth=depth)) == upto(incoming)
    assert paths(store.related(*M1, direction="BOTH", depth=depth)) == upto(both)
    assert paths(store.related(*M2, depth=depth)) == upto(from_m2)
    assert paths(store.related(*M1, rel_types=[IMPL, CONT], depth=depth)) == upto(
        {"f1": [IMPL], "src/auth.py": [IMPL, CONT]}
    )


def test_related_rel_type_filter(store: GraphStore) -> None:
    build_graph(store)
    assert by_id(store.related(*M1, rel_types=["DEPENDS_ON"], depth=3)) == {
        "m2": (1, "DEPENDS_ON", "OUTGOING"),
        "m3": (2, "DEPENDS_ON", "OUTGOING"),
        "m4": (3, "DEPENDS_ON", "OUTGOING"),
    }
    found = store.related(*M1, rel_types=["IMPLEMENTS", "CONTAINS"], depth=3)
    assert by_id(found) == {"f1": (1, "IMPLEMENTS", "INCOMING"), "src/auth.py": (2, "CONTAINS", "INCOMING")}
    assert store.related(*M1, rel_types=["NEVER_CREATED"]) == []
    assert store.related(*M5, depth=5) == []
    assert store.related("Memory", "missing") == []
    with pytest.raises(ValidationError):
        store.related(*M1, depth=6)


def test_find_nodes_by_id_then_by_name(store: GraphStore) -> None:
    assert store.find_nodes(["Memory", "Function"], "m1") == []  # no tables/labels yet
    build_graph(store)
    assert store.find_nodes(["Memory", "Function"], "m1") == [
        node("Memory", "m1", name="Auth decision", type="decision", status="active")
    ]
    assert store.find_nodes(["File"], "src/auth.py") == [node("File", "src/auth.py", name="auth.py")]
    assert store.find_nodes(["Memory", "Function", "NeverUsed"], "login") == [
        node("Function", "f1", name="login", line=12)
    ]  # no id is "login": matched by name
    assert store.find_nodes(["Memory"], "login") == []
    assert store.find_nodes(["Memory"], "nothing") == []


# --------------------------------------------------------------------------- query


def test_query_returns_plain_dicts(store: GraphStore) -> None:
    build_graph(store)
    scalar = store.query(
        "MATCH (m:Memory) WHERE m.id = $id RETURN m.name AS name, 1 + 1 AS two", {"id": "m1"}
    )
    assert scalar == [{"name": "Auth decision", "two": 2}]
    n = store.query("MATCH (m:Memory) WHERE m.id = 'm1' RETURN m")[0]["m"]
    assert n == {
        "_label": "Memory", "id": "m1", "name": "Auth decision", "type": "decision", "status": "active",
    }  # fmt: skip
    r = store.query("MATCH (:Memory {id: 'm1'})-[r:DEPENDS_ON]->(:Memory) RETURN r")[0]["r"]
    assert (r["_type"], r["_src"], r["_dst"], r["weight"]) == ("DEPENDS_ON", "m1", "m2", 0.5)
    p = store.query("MATCH p = (:File)-[:CONTAINS]->(:Function)-[:IMPLEMENTS]->(:Memory) RETURN p")[0]["p"]
    assert [x["id"] for x in p["nodes"]] == ["src/auth.py", "f1", "m1"]
    assert [(x["_type"], x["_src"], x["_dst"]) for x in p["relationships"]] == [
        ("CONTAINS", "src/auth.py", "f1"),
        ("IMPLEMENTS", "f1", "m1"),
    ]
    json.dumps([scalar, n, r, p])  # plain JSON, no engine objects
    assert len(store.query("UNWIND range(1, 50) AS x RETURN x", row_limit=10)) == 10


@pytest.mark.parametrize(
    "cypher",
    [
        "CREATE (m:Memory {id: 'x'})",
        "create (m:Memory {id: 'x'})",
        "MATCH (m:Memory) SET m.name = 'x'",
        "MATCH (m:Memory) WHERE m.id = 'm1' DETACH DELETE m",
        "MERGE (m:Memory {id: 'm1'}) RETURN m",
        "MATCH (m:Memory) REMOVE m.name",
        "/* read */ MATCH (m) RETURN m; CREATE (x:Memory {id: 'y'})",
    ],
)
def test_query_refuses_writes_when_read_only(store: GraphStore, cypher: str) -> None:
    build_graph(store)
    with pytest.raises(ValidationError) as info:
        store.query(cypher)
    assert info.value.code in ("VAL_WRITE_NOT_ALLOWED", "VAL_CYPHER") and info.value.suggestion
    assert store.count_nodes_by_label() == {"Memory": 5, "Function": 1, "File": 1}


def test_query_write_error_code_and_literals(store: GraphStore) -> None:
    build_graph(store)
    with pytest.raises(ValidationError) as info:
        store.query("MATCH (m:Memory) WHERE m.id = 'm1' SET m.name = 'x'")
    assert info.value.code == "VAL_WRITE_NOT_ALLOWED"
    rows = store.query("RETURN 'CREATE (x) // DELETE' AS s // SET in a comment")
    assert rows == [{"s": "CREATE (x) // DELETE"}]
    assert store.query('MATCH (m:Memory) WHERE m.name = "Don\'t CREATE" RETURN m.id AS id') == []
    with pytest.raises(ValidationError) as info:
        store.query("MATCH (m:Memory RETURN m")
    assert info.value.code == "VAL_CYPHER"


def test_query_can_write_when_allowed(store: GraphStore) -> None:
    build_graph(store)
    params = {"id": "m4", "name": "N"}
    store.query("MATCH (m:Memory) WHERE m.id = $id SET m.name = $name", params, read_only=False)
    assert store.query("MATCH (m:Memory) WHERE m.id = 'm4' RETURN m.name AS n") == [{"n": "N"}]


# --------------------------------------------------------------------------- a fresh graph (issue 8, item 6)
# Embedded engines create a label's or a type's table on first use: before that, reads are empty,
# and what is written first is read back by the same store, with no reopen.


def test_reads_before_any_relationship_are_empty(store: GraphStore) -> None:
    assert store.edges_of(*M1) == [] and store.delete_edges_of(*M1) == []  # no table at all yet
    assert store.related(*M1) == [] and store.count_edges_by_type() == {}
    store.upsert_nodes([node("Memory", "m1", name="A")])
    assert store.edges_of(*M1) == []
    assert store.delete_edges_of(*M1) == []
    assert store.related(*M1, depth=3) == []
    assert store.count_edges_by_type() == {}
    assert store.delete_nodes("Memory", ["m9"]) == 0
    assert store.delete_node(*M2) == 0
    assert store.count_nodes_by_label() == {"Memory": 1}


def test_first_relationship_is_visible_in_the_same_store(store: GraphStore) -> None:
    store.upsert_nodes([node("Memory", "m1", name="A")])
    assert store.edges_of(*M1) == [] and store.delete_edges_of(*M1) == []
    store.upsert_edges([edge("RELATES_TO", M2, M1, note="first")])
    first = {("RELATES_TO", "Memory", "m2", "Memory", "m1")}
    assert keys(store.edges_of(*M1)) == first and keys(store.edges_of(*M2)) == first
    assert store.edges_of(*M1)[0].properties == {"note": "first"}
    assert store.count_edges_by_type() == {"RELATES_TO": 1}
    assert by_id(store.related(*M1)) == {"m2": (1, "RELATES_TO", "INCOMING")}
    # A second type and a new label pair, after reads that saw only the first.
    store.upsert_edges([edge("DEPENDS_ON", M1, M3), edge("RELATES_TO", FILE1, M1)])
    everything = first | {
        ("DEPENDS_ON", "Memory", "m1", "Memory", "m3"),
        ("RELATES_TO", "File", "src/auth.py", "Memory", "m1"),
    }
    assert keys(store.edges_of(*M1)) == everything
    assert store.count_edges_by_type() == {"RELATES_TO": 2, "DEPENDS_ON": 1}
    assert keys(store.delete_edges_of(*M1)) == everything
    assert store.edges_of(*M1) == [] and store.count_edges_by_type() == {}


def test_query_over_labels_and_types_not_written_yet(store: GraphStore) -> None:
    """As Neo4j answers for a label or type nobody has written yet: no rows, or a count of zero."""
    one = "MATCH (m:Memory) WHERE m.id = $id RETURN m.name AS name"
    linked = "MATCH (m:Memory) WHERE m.id = $id OPTIONAL MATCH (m)<-[:RELATES_TO]-(x) RETURN x.id AS x"
    pairs = "MATCH (a)-[e]->(b) WHERE a.id <> $id RETURN a.id AS a, b.id AS b"
    assert store.query(one, {"id": "m1"}) == []
    assert store.query(linked, {"id": "m1"}) == []
    assert store.query(pairs, {"id": "-"}) == []
    assert store.query("MATCH (m:Memory) RETURN count(m) AS n") == [{"n": 0}]
    store.upsert_nodes([node("Memory", "m1", name="A")])
    assert store.query(one, {"id": "m1"}) == [{"name": "A"}]  # the same statements, now bound
    assert store.query(linked, {"id": "m1"}) == [{"x": None}]
    assert store.query(pairs, {"id": "-"}) == []
    store.upsert_edges([edge("RELATES_TO", M2, M1)])
    assert store.query(linked, {"id": "m1"}) == [{"x": "m2"}]
    assert store.query(pairs, {"id": "-"}) == [{"a": "m2", "b": "m1"}]


# --------------------------------------------------------------------------- lifecycle, scale, validation


def test_persists_across_close_and_reopen(backend: Backend) -> None:
    first = backend.open()
    build_graph(first)
    first.close()
    second = backend.open()
    try:
        assert second.count_edges_by_type()["DEPENDS_ON"] == 3
        assert by_id(second.related(*M1, direction="OUTGOING"))["m2"] == (1, "DEPENDS_ON", "OUTGOING")
        second.upsert_edges([edge("DEPENDS_ON", M4, M5)])  # known tables after reopen
        assert second.count_edges_by_type()["DEPENDS_ON"] == 4
    finally:
        second.close()


def test_a_copy_taken_after_checkpoint_opens_with_every_write(backend: Backend, tmp_path: Path) -> None:
    """checkpoint() leaves the store open and its database file whole (LadybugDB: its WAL folded
    in): an online backup copies the files next, writes paused. Neo4j keeps its own files."""
    store = backend.open()
    try:
        build_graph(store)
        store.checkpoint()
        edges = store.count_edges_by_type()
        if not backend.embedded:
            assert edges["DEPENDS_ON"] == 3
            return
        from memory_service.stores.graph.ladybug import LadybugGraphStore

        copy = tmp_path / "copy"
        copy.mkdir()
        for f in tmp_path.glob("graph.lbug*"):
            shutil.copy2(f, copy / f.name)
        assert [f.name for f in copy.iterdir()] == ["graph.lbug"], "the WAL was not folded in"
        again = LadybugGraphStore(copy / "graph.lbug")
        try:
            assert again.count_edges_by_type() == edges
            assert by_id(again.related(*M1, direction="OUTGOING"))["m2"] == (1, "DEPENDS_ON", "OUTGOING")
        finally:
            again.close()
        store.upsert_edges([edge("DEPENDS_ON", M4, M5)])  # still open for writes
        assert store.count_edges_by_type()["DEPENDS_ON"] == 4
    finally:
        store.close()


def test_closed_store_is_unavailable(backend: Backend) -> None:
    s = backend.open()
    assert s.health().state == "ok" and s.health().name == "graph"
    s.close()
    s.close()  # idempotent
    with pytest.raises(ServiceUnavailableError):
        s.count_nodes_by_label()
    assert s.health().state == "unavailable"


def test_embedded_store_has_one_owner_per_path(backend: Backend) -> None:
    if not backend.embedded:
        pytest.skip(f"{NOT_APPLICABLE} only embedded stores own a path")
    s = backend.open()
    try:
        assert s.health().backend == backend.name and s.size_bytes() > 0
        with pytest.raises(ServiceUnavailableError):
            backend.open()
    finally:
        s.close()


def test_bulk_5000_edges(store: GraphStore) -> None:
    edges = [edge("CALLS", ("Function", f"f{i}"), ("Function", f"f{(i * 7 + 1) % 5000}"))
             for i in range(5000)]  # fmt: skip
    store.upsert_edges(edges)
    store.upsert_edges(edges)
    assert store.count_edges_by_type() == {"CALLS": 5000}
    assert store.count_nodes_by_label() == {"Function": 5000}
    assert {r.id for r in store.related("Function", "f0", direction="OUTGOING")} == {"f1"}


def test_concurrent_writers_and_readers(store: GraphStore) -> None:
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for j in range(5):
                hub = ("Function", f"t{k}")
                batch = [edge("CALLS", ("Function", f"t{k}_{j}_{i}"), hub) for i in range(20)]
                store.upsert_edges(batch)
                store.edges_of("Function", f"t{k}")
                store.count_edges_by_type()
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.count_edges_by_type() == {"CALLS": 400}


def test_bad_identifiers_are_refused(store: GraphStore) -> None:
    with pytest.raises(ValidationError) as info:
        store.upsert_nodes([node("Memory) DETACH DELETE (x", "a")])
    assert info.value.code == "VAL_GRAPH_IDENTIFIER"
    with pytest.raises(ValidationError):
        store.upsert_edges([edge("DEPENDS-ON", M1, M2)])
    with pytest.raises(ValidationError):
        store.upsert_edges([edge("OK", ("Bad Label", "a"), M2)])
    with pytest.raises(ValidationError):
        store.related("Memory`", "m1")
    with pytest.raises(ValidationError):
        store.edges_of("1Memory", "m1")
    assert store.count_nodes_by_label() == {}


@pytest.mark.parametrize(
    ("cypher", "allowed"),
    [
        ("MATCH (n) WHERE n.name = 'CREATE' RETURN n.set AS s, {delete: 1} AS m, $merge AS p", True),
        ("MATCH (n) RETURN n // DETACH DELETE n", True),
        ("CALL show_tables() RETURN *", True),
        ("match (n) set n.x = 1", False),
        ("CALL threads=1", False),
        ("LOAD FROM 'rows.csv' RETURN *", False),
        ("RETURN 1; MATCH (n) DELETE n", False),
    ],
)
def test_ladybug_write_check_is_lexical(cypher: str, allowed: bool) -> None:
    """The first of LadybugDB's two read-only guards (the second is a READ ONLY transaction)."""
    from memory_service.stores.graph.ladybug import check_cypher

    if allowed:
        check_cypher(cypher, read_only=True)
    else:
        with pytest.raises(ValidationError):
            check_cypher(cypher, read_only=True)


def test_ladybug_read_only_transaction_backs_up_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even a write the lexical check missed is refused by the engine's READ ONLY transaction."""
    from memory_service.stores.graph import ladybug as graph_ladybug

    store = graph_ladybug.LadybugGraphStore(tmp_path / "g.lbug")
    try:
        store.upsert_nodes([node("Memory", "m1", name="A")])
        monkeypatch.setattr(graph_ladybug, "check_cypher", lambda cypher, *, read_only: None)
        with pytest.raises(ValidationError) as info:
            store.query("MATCH (m:Memory) SET m.name = 'B'")
        assert info.value.code == "VAL_WRITE_NOT_ALLOWED"
        assert store.query("MATCH (m:Memory) RETURN m.name AS n") == [{"n": "A"}]
    finally:
        store.close()


def test_ranking_reads_on_a_fresh_graph_and_after_the_first_link(store: GraphStore) -> None:
    """in_degree and neighbours (what search ranking reads) before any table, then with links."""
    assert store.in_degree("Memory", ["m1", "m2"], ["SUPERSEDES"]) == {}
    assert store.neighbours("Memory", ["m1"]) == {}
    store.upsert_nodes([node("Memory", "m1"), node("Memory", "m2"), node("Memory", "m3")])
    assert store.in_degree("Memory", ["m1", "m2"], ["SUPERSEDES"]) == {}
    assert store.neighbours("Memory", ["m1"]) == {}
    store.upsert_edges([edge("RELATES_TO", M2, M1), edge("SUPERSEDES", M3, M1), edge("CALLS", F1, M1)])
    degree = store.in_degree("Memory", ["m1", "m2"], ["SUPERSEDES"])
    assert {k: v for k, v in degree.items() if v} == {"m1": 2}  # RELATES_TO and CALLS; not SUPERSEDES
    assert store.in_degree("Memory", ["m1"]) == {"m1": 3}
    near = store.neighbours("Memory", ["m1", "m2"])
    assert sorted(near["m1"]) == ["m2", "m3"] and near["m2"] == ["m1"]  # Memory nodes only, both ways
    assert store.in_degree("Memory", []) == {} and store.neighbours("Memory", []) == {}


def test_ladybug_schema_written_through_query_is_read_at_once(tmp_path: Path) -> None:
    """A table a user creates with query(read_only=False) is seen by a statement that missed it."""
    from memory_service.stores.graph.ladybug import LadybugGraphStore

    store = LadybugGraphStore(tmp_path / "g.lbug")
    ticket = "MATCH (t:Ticket) WHERE t.id = $id RETURN t.id AS id"
    try:
        assert store.query(ticket, {"id": "t1"}) == []
        store.query("CREATE NODE TABLE Ticket(id STRING PRIMARY KEY, name STRING)", read_only=False)
        store.query("CREATE (:Ticket {id: $id})", {"id": "t1"}, read_only=False)
        assert store.query(ticket, {"id": "t1"}) == [{"id": "t1"}]
        assert store.count_nodes_by_label() == {"Ticket": 1}
    finally:
        store.close()


# --------------------------------------------------------------------------- ranking reads, dialects


def test_in_degree_counts_incoming_edges_by_type_and_label(store: GraphStore) -> None:
    build_graph(store)  # into m1: SUPERSEDES from m3, IMPLEMENTS from f1; m5 has no edge
    store.upsert_edges([edge("RELATES_TO", M2, M1), edge("RELATES_TO", F1, M2)])
    ids = ["m1", "m2", "m5", "missing"]
    counted = store.in_degree("Memory", ids)
    assert {k: v for k, v in counted.items() if v} == {"m1": 3, "m2": 2}  # others: absent or 0
    skipped = store.in_degree("Memory", ids, ["SUPERSEDES", "RELATES_TO"])
    assert {k: v for k, v in skipped.items() if v} == {"m1": 1, "m2": 1}  # IMPLEMENTS; DEPENDS_ON m1 -> m2
    assert store.in_degree("Function", ["f1"]) == {"f1": 1}  # CONTAINS, from a File
    assert store.in_degree("NeverUsed", ["x"]) == {}
    assert store.in_degree("File", ["src/auth.py"]) == {}  # only outgoing
    with pytest.raises(ValidationError):
        store.in_degree("Memory) RETURN 1 //", ["m1"])


def test_neighbours_are_distinct_same_label_nodes_both_ways(store: GraphStore) -> None:
    build_graph(store)  # m1 -> m2 -> m3 -> m1, m3 -> m4, f1 -> m1
    store.upsert_edges([edge("RELATES_TO", M2, M1)])  # a second edge between m1 and m2
    near = store.neighbours("Memory", ["m1", "m4", "m5"])
    assert sorted(near["m1"]) == ["m2", "m3"]  # once each, f1 (a Function) left out
    assert near["m4"] == ["m3"]
    assert near.get("m5", []) == []
    assert store.neighbours("Function", ["f1"]) == {}  # its only neighbours are other labels
    assert store.neighbours("NeverUsed", ["x"]) == {}
    with pytest.raises(ValidationError):
        store.neighbours("Bad Label", ["m1"])


def test_delete_nodes_counts_each_end_of_an_edge(store: GraphStore) -> None:
    """A self-loop and an edge between two deleted nodes are each counted from both ends."""
    store.upsert_edges([edge("RELATES_TO", M1, M1), edge("RELATES_TO", M1, M2), edge("RELATES_TO", M3, M2)])
    assert store.delete_nodes("Memory", ["m1", "m2"]) == 5  # m1: loop out+in, m1->m2; m2: m1->m2, m3->m2
    assert store.count_edges_by_type() == {} and store.count_nodes_by_label() == {"Memory": 1}


def test_node_ids_lists_every_node_of_a_label(store: GraphStore) -> None:
    """Normalization's scan: nodes written directly and endpoints an edge created, nothing else."""
    assert store.node_ids("Memory") == []  # never written: no table
    build_graph(store)
    store.upsert_edges([edge("CITES", M5, ("Function", "f9"))])  # f9 exists only as an endpoint
    assert sorted(store.node_ids("Memory")) == ["m1", "m2", "m3", "m4", "m5"]
    assert sorted(store.node_ids("Function")) == ["f1", "f9"]
    assert store.node_ids("NeverUsed") == []
    store.delete_nodes("Memory", ["m1", "m5"])
    assert sorted(store.node_ids("Memory")) == ["m2", "m3", "m4"]
    with pytest.raises(ValidationError):
        store.node_ids("Bad Label")


def test_query_relationship_type_in_each_dialect(store: GraphStore, backend: Backend) -> None:
    """Backend-aware on purpose: LadybugDB spells type(r) label(r); each refuses the other's."""
    build_graph(store)
    own, other = ("label", "type") if backend.name == "ladybug" else ("type", "label")
    cypher = "MATCH (:Memory {{id: 'm1'}})-[r]->(x) RETURN {f}(r) AS t, x.id AS x"
    assert store.query(cypher.format(f=own)) == [{"t": "DEPENDS_ON", "x": "m2"}]
    with pytest.raises(ValidationError) as info:
        store.query(cypher.format(f=other))
    assert info.value.code == "VAL_CYPHER" and f"{own}(r), not {other}(r)" in info.value.suggestion


# --------------------------------------------------------------------------- Neo4j only


def test_neo4j_read_access_mode_backs_up_the_check(neo4j_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a write the lexical check missed is refused by the server in a READ transaction."""
    from memory_service.stores.graph import neo4j as graph_neo4j

    store = _neo4j(neo4j_uri).open()
    try:
        store.upsert_nodes([node("Memory", "m1", name="A")])
        monkeypatch.setattr(graph_neo4j, "check_cypher", lambda cypher, *, read_only: None)
        for write in ("MATCH (m:Memory) SET m.name = 'B'", "CALL db.createLabel('Sneaky')"):
            with pytest.raises(ValidationError) as info:
                store.query(write)
            assert info.value.code == "VAL_WRITE_NOT_ALLOWED"
        assert store.query("MATCH (m:Memory) RETURN m.name AS n") == [{"n": "A"}]
    finally:
        store.close()


@pytest.mark.parametrize(
    "cypher",
    [
        "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",  # a READ transaction allows it
        "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",  # so does this
        "CALL dbms.listConfig() YIELD name RETURN name",  # a read, but not of the graph
        "USE system SHOW USERS",
    ],
)
def test_neo4j_reads_beyond_the_graph_are_refused(neo4j_uri: str, cypher: str) -> None:
    store = _neo4j(neo4j_uri).open()
    try:
        with pytest.raises(ValidationError) as info:
            store.query(cypher)
        assert info.value.code == "VAL_WRITE_NOT_ALLOWED"
        assert store.query("CALL db.labels() YIELD label RETURN count(label) >= 0 AS ok") == [{"ok": True}]
    finally:
        store.close()


def test_neo4j_uniqueness_constraint_per_label_and_timeout(neo4j_uri: str) -> None:
    # The constraints are read with the default timeout (a loaded machine may take seconds); the
    # timeout is shown on a query no machine finishes in its 2 s (a trillion rows).
    store = open_neo4j(neo4j_uri)
    try:
        store.upsert_edges([edge("CALLS", F1, ("Class", "C"))])
        rows = store.query("SHOW CONSTRAINTS YIELD labelsOrTypes AS l, properties AS p, type AS t RETURN *")
        unique = {(r["l"][0], tuple(r["p"])) for r in rows if r["t"] == "UNIQUENESS"}
        assert {("Function", ("ns", "id")), ("Class", ("ns", "id"))} <= unique
    finally:
        store.close()
    hurried = open_neo4j(neo4j_uri, query_timeout_ms=2000)
    try:
        with pytest.raises(ValidationError) as info:
            hurried.query("UNWIND range(1, 1000000000000) AS x WITH x WHERE x < 0 RETURN count(*) AS n")
        assert info.value.code == "VAL_QUERY_TIMEOUT"
    finally:
        hurried.close()


def test_neo4j_unreachable_server_is_unavailable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = open_neo4j(f"bolt://127.0.0.1:{port}", max_retry_time=0.2, connect_timeout=2)
    try:
        with pytest.raises(ServiceUnavailableError) as info:
            store.count_nodes_by_label()
        assert info.value.code == "SVC_GRAPH_STORE" and "MEMORY_GRAPH__URI" in info.value.suggestion
        assert info.value.details["backend"] == "neo4j"
        health = store.health()
        assert (health.name, health.state, health.backend) == ("graph", "unavailable", "neo4j")
    finally:
        store.close()


# --------------------------------------------------------------------------- Neo4j namespaces


@pytest.fixture
def two_namespaces(neo4j_uri: str) -> Iterator[tuple[GraphStore, GraphStore]]:
    """Two stores on one emptied database, in two namespaces (the ``backend`` of each test is one)."""
    _neo4j(neo4j_uri)
    a, b = open_neo4j(neo4j_uri, namespace=new_namespace()), open_neo4j(neo4j_uri, namespace=new_namespace())
    yield a, b
    a.close()
    b.close()


def test_neo4j_namespaces_share_ids_without_seeing_each_other(
    two_namespaces: tuple[GraphStore, GraphStore],
) -> None:
    a, b = two_namespaces
    build_graph(a)
    assert b.count_nodes_by_label() == {} and b.count_edges_by_type() == {}
    assert b.edges_of(*M1) == [] and b.related(*M1, depth=3) == []
    assert b.in_degree("Memory", ["m1"]) == {} and b.neighbours("Memory", ["m1"]) == {}
    # The same ids in b (the uniqueness constraint is per namespace), with other names and edges.
    b.upsert_nodes([node("Memory", "m1", name="Other m1"), node("Memory", "m2", name="Other m2")])
    b.upsert_edges([edge("RELATES_TO", M2, M1, note="b"), edge("DEPENDS_ON", M1, M2, weight=0.1)])
    assert a.count_nodes_by_label() == {"Memory": 5, "Function": 1, "File": 1}
    assert a.count_edges_by_type() == {"DEPENDS_ON": 3, "SUPERSEDES": 1, "IMPLEMENTS": 1, "CONTAINS": 1}
    assert b.count_nodes_by_label() == {"Memory": 2}
    assert b.count_edges_by_type() == {"RELATES_TO": 1, "DEPENDS_ON": 1}
    assert keys(b.edges_of(*M1)) == {
        ("RELATES_TO", "Memory", "m2", "Memory", "m1"),
        ("DEPENDS_ON", "Memory", "m1", "Memory", "m2"),
    }
    assert next(e for e in a.edges_of(*M1) if e.type == "DEPENDS_ON").properties == {"weight": 0.5}
    assert by_id(a.related(*M1, direction="OUTGOING", depth=3)) == {
        "m2": (1, "DEPENDS_ON", "OUTGOING"),
        "m3": (2, "DEPENDS_ON", "OUTGOING"),
        "m4": (3, "DEPENDS_ON", "OUTGOING"),
    }
    found = b.related(*M1, depth=3)
    assert by_id(found) == {"m2": (1, "DEPENDS_ON", "OUTGOING")} and found[0].name == "Other m2"
    assert a.in_degree("Memory", ["m1", "m2"]) == {"m1": 2, "m2": 1}
    assert b.in_degree("Memory", ["m1", "m2"]) == {"m1": 1, "m2": 1}
    assert sorted(a.neighbours("Memory", ["m1"])["m1"]) == ["m2", "m3"]
    assert b.neighbours("Memory", ["m1"]) == {"m1": ["m2"]}


def test_neo4j_deletes_in_one_namespace_leave_the_other(
    two_namespaces: tuple[GraphStore, GraphStore],
) -> None:
    a, b = two_namespaces
    build_graph(a)
    build_graph(b)
    everything = {"Memory": 5, "Function": 1, "File": 1}
    assert a.delete_node(*M1) == 3 and a.delete_nodes("Memory", ["m2", "m4"]) == 2
    assert keys(a.delete_edges_of(*FILE1)) == {("CONTAINS", "File", "src/auth.py", "Function", "f1")}
    assert (
        a.count_nodes_by_label() == {"Memory": 2, "Function": 1, "File": 1} and a.count_edges_by_type() == {}
    )
    assert b.count_nodes_by_label() == everything
    assert b.count_edges_by_type() == {"DEPENDS_ON": 3, "SUPERSEDES": 1, "IMPLEMENTS": 1, "CONTAINS": 1}
    assert len(b.edges_of(*M1)) == 3 and len(b.edges_of(*FILE1)) == 1
    assert (
        b.delete_nodes("Memory", ["m1", "m2", "m3", "m4", "m5"]) == 9
    )  # 4 edges between them twice, f1 once
    assert a.count_nodes_by_label() == {"Memory": 2, "Function": 1, "File": 1}


def test_neo4j_reopened_namespace_sees_its_data(neo4j_uri: str) -> None:
    backend, other = _neo4j(neo4j_uri), new_namespace()
    first = backend.open()
    build_graph(first)
    first.close()
    again, stranger = backend.open(), open_neo4j(neo4j_uri, namespace=other)
    try:
        assert again.count_nodes_by_label() == {"Memory": 5, "Function": 1, "File": 1}
        assert by_id(again.related(*M1, direction="OUTGOING"))["m2"] == (1, "DEPENDS_ON", "OUTGOING")
        assert stranger.count_nodes_by_label() == {} and stranger.edges_of(*M1) == []
    finally:
        again.close()
        stranger.close()


def test_neo4j_user_queries_get_the_namespace(two_namespaces: tuple[GraphStore, GraphStore]) -> None:
    a, b = two_namespaces
    a.upsert_nodes([node("Memory", "m1", name="A")])
    b.upsert_nodes([node("Memory", "m1", name="B", ns="mine")])  # a property called ns stays in props
    scoped = "MATCH (m:Memory) WHERE m.ns = $namespace RETURN m.name AS name, m AS m"
    assert [r["name"] for r in a.query(scoped)] == ["A"]
    assert [r["name"] for r in a.query(scoped, {"namespace": "someone-else"})] == ["A"]  # not overridden
    [row] = b.query(scoped)
    assert row["m"] == {"_label": "Memory", "id": "m1", "name": "B", "ns": "mine"}  # the store's ns: hidden
    assert sorted(r["name"] for r in a.query("MATCH (m:Memory) RETURN m.name AS name")) == ["A", "B"]


def test_neo4j_constraint_without_namespace_is_replaced(neo4j_uri: str) -> None:
    """The constraint a store without namespaces made (``{Label}_id``) is dropped; others are kept."""
    backend = _neo4j(neo4j_uri)
    admin = backend.open()
    old = "CREATE CONSTRAINT `{0}` IF NOT EXISTS FOR (n:`{1}`) REQUIRE n.id IS UNIQUE"
    constraints = "SHOW CONSTRAINTS YIELD name, properties AS p WHERE name STARTS WITH $prefix RETURN name, p"
    prefix = new_namespace().upper()
    legacy, foreign = f"{prefix}Legacy", f"{prefix}Foreign"
    for name, label in ((f"{legacy}_id", legacy), (f"{foreign}_unique", foreign)):
        admin.query(old.format(name, label), read_only=False)
    a, b = backend.open(), open_neo4j(neo4j_uri, namespace=new_namespace())
    try:
        for s in (a, b):  # the same id in two namespaces
            s.upsert_nodes([node(legacy, "x", name="one")])
            s.upsert_edges([edge("LINKS", (legacy, "x"), (legacy, "y"))])
        assert a.count_nodes_by_label() == b.count_nodes_by_label() == {legacy: 2}
        found = {r["name"]: r["p"] for r in admin.query(constraints, {"prefix": prefix})}
        assert found == {f"{legacy}_ns_id": ["ns", "id"], f"{foreign}_unique": ["id"]}
        with pytest.raises(ServiceUnavailableError):  # someone else's constraint: left as it is
            for s in (a, b):
                s.upsert_nodes([node(foreign, "x")])
    finally:
        for name in (f"{legacy}_ns_id", f"{foreign}_unique"):
            admin.query(f"DROP CONSTRAINT `{name}` IF EXISTS", read_only=False)
        for s in (admin, a, b):
            s.close()


@pytest.mark.parametrize("namespace", ["", "a b", "x" * 65, "ns;DROP", "a.b", "ns\n"])
def test_neo4j_namespace_must_be_a_plain_name(namespace: str) -> None:
    with pytest.raises(ValidationError) as info:
        open_neo4j("bolt://127.0.0.1:7687", namespace=namespace)
    assert info.value.code == "VAL_GRAPH_NAMESPACE" and info.value.details["provided"] == namespace
    open_neo4j("bolt://127.0.0.1:7687", namespace="My_project-2").close()  # opening does not connect
