"""GraphStore on Neo4j through the official ``neo4j`` driver: standard Cypher 5, any Neo4j 5.

Model (shared with the LadybugDB adapter): a node has one label and the properties ``id``
(unique per label: a uniqueness constraint is created the first time this store writes the
label), ``name``, ``type`` and ``props`` (JSON text of the other scalar properties); each
relationship type is a real type with a JSON ``props``. Labels and types are interpolated into
statements, so they must be plain identifiers (``cypher_guard.ident``) and are backtick-quoted;
values only ever go through ``$params``, batches through ``UNWIND``.

Every read runs in ``execute_read``, every write in ``execute_write``: the driver retries
transient failures (deadlocks between concurrent MERGEs, a leader switch) for ``max_retry_time``.
One ``upsert_edges`` call is one transaction. The driver is thread-safe; each call has a session.

``query`` (graph_query) refuses write clauses (``cypher_guard``), then runs in a READ access mode
transaction, which the server enforces too ("Writing in read access mode not allowed"). Checked on
5.26: READ mode still lets ``LOAD CSV`` read server files and ``TERMINATE TRANSACTIONS`` kill
other sessions' work; the lexical check refuses both. Dialect for users: ``type(r)`` (LadybugDB:
``label(r)``); extra properties are in ``n.props`` (JSON text; results decode it).

``related`` walks breadth-first, one statement per hop in one read transaction: exact shortest
distances, no enumeration of all paths, no ``SHORTEST`` (Neo4j 5.21+ only), and it stops at the
hop where ``limit`` entities are found.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

import neo4j
from neo4j.exceptions import DriverError, Neo4jError
from neo4j.graph import Node, Path, Relationship

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.core.ports import ComponentHealth, GraphEdge, GraphNode, RelatedEntity
from memory_service.stores.cypher_guard import TOKEN, guard_cypher, ident

_CHUNK = 5000  # rows per UNWIND
CREATE_CONSTRAINT = "CREATE CONSTRAINT `{label}_id` IF NOT EXISTS FOR (n:`{label}`) REQUIRE n.id IS UNIQUE"
UPSERT_NODES = (
    "UNWIND $rows AS r MERGE (n:`{label}` {{id: r.id}}) "
    "SET n.name = r.name, n.type = r.type, n.props = r.props"
)
UPSERT_EDGES = (
    "UNWIND $rows AS r MERGE (a:`{src}` {{id: r.a}}) MERGE (b:`{dst}` {{id: r.b}}) "
    "MERGE (a)-[e:`{type}`]->(b) SET e.props = r.props"
)
EDGES_OF = (
    "MATCH (n:`{label}` {{id: $id}})-[e]-(m) RETURN type(e) AS type, startNode(e) = n AS out, "
    "head(labels(m)) AS label, m.id AS id, e.props AS props"
)
DELETE_EDGES_OF = "MATCH (n:`{label}` {{id: $id}})-[e]-() DELETE e"
DELETE_NODE = (
    "MATCH (n:`{label}` {{id: $id}}) OPTIONAL MATCH (n)-[e]-() "
    "WITH n, count(DISTINCT e) AS removed DETACH DELETE n RETURN removed"
)
# Degrees are summed before anything is deleted: an edge between two deleted nodes counts twice,
# a self-loop too (as LadybugDB counts them).
DELETE_NODES = (
    "MATCH (n:`{label}`) WHERE n.id IN $ids "
    "WITH collect(n) AS ns, sum(COUNT {{ (n)-->() }} + COUNT {{ (n)<--() }}) AS removed "
    "FOREACH (x IN ns | DETACH DELETE x) RETURN removed"
)
START = "MATCH (s:`{label}` {{id: $id}}) RETURN elementId(s) AS eid"
HOP = (
    "UNWIND $frontier AS f MATCH (a) WHERE elementId(a) = f MATCH (a){left}-[e{types}]-{right}(b) "
    "WHERE NOT elementId(b) IN $seen RETURN elementId(b) AS eid, b.id AS id, head(labels(b)) AS label, "
    "b.name AS name, b.type AS type, b.props AS props, type(e) AS rel, endNode(e) = b AS forward"
)
IN_DEGREE = (
    "MATCH ()-[e]->(m:`{label}`) WHERE m.id IN $ids AND NOT type(e) IN $skip RETURN m.id AS id, count(e) AS n"
)
NEIGHBOURS = (
    "MATCH (m:`{label}`)--(x:`{label}`) WHERE m.id IN $ids RETURN m.id AS a, collect(DISTINCT x.id) AS b"
)
LABELS = "CALL db.labels() YIELD label RETURN label AS name"
TYPES = "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType AS name"
# One count per label (type), read from the count store: O(labels), not O(nodes).
COUNT_LABEL = "MATCH (n:`{name}`) RETURN $k{i} AS name, count(n) AS n"
COUNT_TYPE = "MATCH ()-[e:`{name}`]->() RETURN $k{i} AS name, count(e) AS n"
RESOLVE_NODES = (
    "MATCH (n) WHERE elementId(n) IN $eids RETURN elementId(n) AS eid, head(labels(n)) AS label, n.id AS id"
)
PING = "RETURN 1"

# Catalog procedures a read-only query may CALL (any other CALL is refused before running).
READ_PROCEDURES = frozenset({
    "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.schema.visualization",
    "db.schema.nodeTypeProperties", "db.schema.relTypeProperties",
})  # fmt: skip
_ADMIN_WORDS = frozenset({"TERMINATE"})  # allowed in a READ transaction, but not a read
# Server errors that are the query's fault (syntax, types, unknown procedure...), not the server's.
_USER_ERRORS = ("Neo.ClientError.Statement.", "Neo.ClientError.Procedure.", "Neo.ClientError.Schema.")
_BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
_Names = dict[str, tuple[str, str]]  # element id -> (label, id)


def check_cypher(cypher: str, *, read_only: bool) -> None:
    """The shared guard with Neo4j's catalog procedures, and ``TERMINATE`` refused when read-only."""
    guard_cypher(cypher, read_only=read_only, read_procedures=READ_PROCEDURES)
    toks = [(m.lastgroup, m.group()) for m in TOKEN.finditer(cypher) if m.lastgroup != "skip"]
    for i, (kind, text) in enumerate(toks):
        prev, nxt = toks[i - 1][1] if i else "", toks[i + 1][1] if i + 1 < len(toks) else ""
        word = text.upper() if kind == "word" and prev not in (".", ":", "$") and nxt != ":" else ""
        if read_only and word in _ADMIN_WORDS:
            raise ValidationError(
                f"{word} is not allowed in a read-only graph query", code="VAL_WRITE_NOT_ALLOWED",
                details={"clause": word}, suggestion="Use MATCH ... RETURN only.",
            )  # fmt: skip


class Neo4jGraphStore:
    """The server graph store: one driver (a connection pool) shared by worker threads."""

    def __init__(
        self, uri: str | None, user: str = "neo4j", password: str | None = None, database: str = "neo4j", *,
        query_timeout_ms: int = 30_000, max_retry_time: float = 15.0, connect_timeout: float = 10.0,
    ) -> None:  # fmt: skip
        """Args:
        uri: ``bolt://host:7687``, ``neo4j://`` (routing), ``neo4j+s://`` (TLS)... (None: refused,
            as settings may leave it unset)
        user, password: basic auth; no password means no auth (a server with auth disabled).
        database: the database every statement runs in.
        query_timeout_ms: transaction timeout for ``query`` (users' Cypher).
        max_retry_time: how long a transaction function is retried on transient errors.
        """
        uri = uri or ""
        self._where = _without_credentials(uri)
        self._database = database
        self._timeout = query_timeout_ms / 1000
        self._lock = threading.Lock()  # constraint creation, close
        self._constrained: set[str] = set()
        if urlsplit(uri).scheme not in _BOLT_SCHEMES:  # the driver's HTTP mode is a preview
            raise self._unavailable(f"Cannot use Neo4j at {self._where}: use one of {_BOLT_SCHEMES}",
                                    operation="open")  # fmt: skip
        try:
            self._driver: neo4j.Driver | None = neo4j.GraphDatabase.driver(
                uri, auth=(user, password) if password is not None else None, user_agent="memory-service",
                max_transaction_retry_time=max_retry_time, connection_timeout=connect_timeout,
                notifications_min_severity="OFF",
            )  # fmt: skip
        except (DriverError, ValueError) as exc:  # a malformed URI or option
            reason = str(exc).replace(uri, self._where)  # the driver quotes the URI, credentials too
            raise self._unavailable(f"Cannot use Neo4j at {self._where}: {reason}", operation="open") from exc

    # ------------------------------------------------------------------ plumbing
    def _unavailable(self, message: str, **details: Any) -> ServiceUnavailableError:
        return ServiceUnavailableError(
            message, code="SVC_GRAPH_STORE",
            details={"backend": "neo4j", "uri": self._where, "database": self._database, **details},
            suggestion="Retry later; if it persists, check that Neo4j answers at MEMORY_GRAPH__URI, the "
            "credentials (MEMORY_GRAPH__USER, MEMORY_GRAPH__PASSWORD) and MEMORY_GRAPH__DATABASE.",
        )  # fmt: skip

    @contextlib.contextmanager
    def _session(self, op: str, mode: str = neo4j.READ_ACCESS) -> Iterator[neo4j.Session]:
        """A session on the database; driver and server errors become ServiceUnavailableError."""
        driver = self._driver
        if driver is None:
            raise self._unavailable("Graph store is closed", operation=op)
        try:
            with driver.session(database=self._database, default_access_mode=mode) as session:
                yield session
        except MemoryServiceError:
            raise
        except (Neo4jError, DriverError) as exc:
            raise self._unavailable(f"Graph store failed during {op}: {exc}", operation=op) from exc

    def _read(self, op: str, cypher: str, **params: Any) -> list[dict[str, Any]]:
        with self._session(op) as s:
            return s.execute_read(lambda tx: [r.data() for r in tx.run(cypher, params)])

    def _ensure_constraints(self, labels: set[str]) -> None:
        """The uniqueness constraint on ``id`` of each label, created once per store (MERGE relies on
        it: without it concurrent MERGEs may create duplicates, and lookups scan the label)."""
        with self._lock:
            for label in sorted(labels - self._constrained):
                with self._session("create_constraint", neo4j.WRITE_ACCESS) as s:
                    s.execute_write(_write_batches, [(CREATE_CONSTRAINT.format(label=label), [])])
                self._constrained.add(label)

    # ------------------------------------------------------------------ writes
    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None:
        """MERGE by (label, id); name, type and props are replaced by the given ones."""
        by_label: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        for n in nodes:  # a repeated id: the last one wins
            name, typ = n.properties.get("name"), n.properties.get("type")
            extra = {k: v for k, v in n.properties.items() if k not in ("id", "name", "type")}
            by_label[ident(n.label, "label")][n.id] = {
                "id": n.id, "name": None if name is None else str(name),
                "type": None if typ is None else str(typ), "props": json.dumps(extra, default=str),
            }  # fmt: skip
        if not by_label:
            return
        self._ensure_constraints(set(by_label))
        batches = [(UPSERT_NODES.format(label=label), [rows[k] for k in sorted(rows)])
                   for label, rows in by_label.items()]  # fmt: skip
        with self._session("upsert_nodes", neo4j.WRITE_ACCESS) as s:
            s.execute_write(_write_batches, batches)

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None:
        """MERGE by (type, source, target); missing endpoints are created (id only), never dropped."""
        groups: dict[tuple[str, str, str], dict[tuple[str, str], dict[str, Any]]] = defaultdict(dict)
        for e in edges:
            key = (ident(e.type, "relationship type"), ident(e.source_label, "label"),
                   ident(e.target_label, "label"))  # fmt: skip
            groups[key][(e.source_id, e.target_id)] = {
                "a": e.source_id, "b": e.target_id, "props": json.dumps(e.properties, default=str),
            }  # fmt: skip
        if not groups:
            return
        self._ensure_constraints({label for _, src, dst in groups for label in (src, dst)})
        batches = [(UPSERT_EDGES.format(type=rel, src=src, dst=dst), [rows[k] for k in sorted(rows)])
                   for (rel, src, dst), rows in groups.items()]  # fmt: skip
        with self._session("upsert_edges", neo4j.WRITE_ACCESS) as s:
            s.execute_write(_write_batches, batches)

    def delete_node(self, label: str, node_id: str) -> int:
        """Delete a node and its edges; returns the number of edges removed (a self-loop once)."""
        cypher = DELETE_NODE.format(label=ident(label, "label"))
        with self._session("delete_node", neo4j.WRITE_ACCESS) as s:
            rows = s.execute_write(lambda tx: [r["removed"] for r in tx.run(cypher, id=node_id)])
        return int(rows[0]) if rows else 0

    def delete_nodes(self, label: str, node_ids: Sequence[str]) -> int:
        """Delete many nodes of one label with their edges in one statement; returns edges removed.

        Edges between two deleted nodes are counted twice (once from each end).
        """
        cypher = DELETE_NODES.format(label=ident(label, "label"))
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return 0
        with self._session("delete_nodes", neo4j.WRITE_ACCESS) as s:
            return int(s.execute_write(lambda tx: tx.run(cypher, ids=ids).single(strict=True)["removed"]))

    def delete_edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        """Delete every edge touching a node (the node stays); returns the removed edges."""
        read, delete = EDGES_OF.format(label=ident(label, "label")), DELETE_EDGES_OF.format(label=label)

        def work(tx: neo4j.ManagedTransaction) -> list[GraphEdge]:
            edges = _edges(label, node_id, tx.run(read, id=node_id).data())
            if edges:
                tx.run(delete, id=node_id).consume()
            return edges

        with self._session("delete_edges_of", neo4j.WRITE_ACCESS) as s:
            return s.execute_write(work)

    # ------------------------------------------------------------------ reads
    def edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        rows = self._read("edges_of", EDGES_OF.format(label=ident(label, "label")), id=node_id)
        return _edges(label, node_id, rows)

    def related(
        self, label: str, node_id: str, rel_types: Sequence[str] | None = None,
        direction: Literal["OUTGOING", "INCOMING", "BOTH"] = "BOTH", depth: int = 1, limit: int = 200,
    ) -> list[RelatedEntity]:  # fmt: skip
        """Entities within ``depth`` hops (start excluded), each once, at its shortest distance.

        ``relationship`` and ``direction`` describe the *last* hop into the entity as walked from
        the start: OUTGOING when that edge points at the entity. When several equally short paths
        reach it, the smallest (type, direction) of their last hops is reported. Ordered by
        distance, then label and id.
        """
        start = START.format(label=ident(label, "label"))
        types = [ident(t, "relationship type") for t in rel_types or ()]
        if direction not in ("OUTGOING", "INCOMING", "BOTH") or not 1 <= depth <= 5 or limit < 1:
            raise ValidationError(
                "related() needs direction OUTGOING/INCOMING/BOTH, depth 1-5 and limit >= 1",
                code="VAL_GRAPH_TRAVERSAL", details={"direction": direction, "depth": depth, "limit": limit},
                suggestion="Use a depth from 1 to 5 and a positive limit.",
            )  # fmt: skip
        hop = HOP.format(
            types=":" + "|".join(f"`{t}`" for t in types) if types else "",
            left="<" if direction == "INCOMING" else "", right=">" if direction == "OUTGOING" else "",
        )  # fmt: skip

        def walk(tx: neo4j.ManagedTransaction) -> list[RelatedEntity]:
            found: list[RelatedEntity] = []
            frontier = [r["eid"] for r in tx.run(start, id=node_id)]
            seen = set(frontier)
            for d in range(1, depth + 1):
                if not frontier or len(found) >= limit:
                    break
                best: dict[str, dict[str, Any]] = {}
                for r in tx.run(hop, frontier=frontier, seen=list(seen)).data():
                    key = (r["rel"], not r["forward"])
                    if r["eid"] not in best or key < (best[r["eid"]]["rel"], not best[r["eid"]]["forward"]):
                        best[r["eid"]] = r
                level = sorted(best.values(), key=lambda r: (r["label"] or "", str(r["id"])))
                found += [
                    RelatedEntity(r["id"], r["label"] or "", r["name"], r["rel"],
                                  "OUTGOING" if r["forward"] else "INCOMING", d,
                                  {**({"type": r["type"]} if r["type"] is not None else {}),
                                   **(_json_object(r["props"]) or {})})
                    for r in level
                ]  # fmt: skip
                frontier = list(best)
                seen.update(frontier)
            return found[:limit]

        with self._session("related") as s:
            return s.execute_read(walk)

    def in_degree(self, label: str, ids: Sequence[str], exclude_types: Sequence[str] = ()) -> dict[str, int]:
        cypher = IN_DEGREE.format(label=ident(label, "label"))
        if not ids:
            return {}
        rows = self._read("in_degree", cypher, ids=list(ids), skip=list(exclude_types))
        return {str(r["id"]): int(r["n"]) for r in rows}

    def neighbours(self, label: str, ids: Sequence[str]) -> dict[str, list[str]]:
        cypher = NEIGHBOURS.format(label=ident(label, "label"))
        if not ids:
            return {}
        rows = self._read("neighbours", cypher, ids=list(ids))
        return {str(r["a"]): sorted(map(str, r["b"])) for r in rows}

    def count_edges_by_type(self) -> dict[str, int]:
        return self._counts("count_edges_by_type", TYPES, COUNT_TYPE)

    def count_nodes_by_label(self) -> dict[str, int]:
        return self._counts("count_nodes_by_label", LABELS, COUNT_LABEL)

    def _counts(self, op: str, names: str, count: str) -> dict[str, int]:
        """Non-zero counts per label or type (tokens outlive their last node or edge)."""

        def work(tx: neo4j.ManagedTransaction) -> dict[str, int]:
            tokens = [r["name"] for r in tx.run(names)]
            if not tokens:
                return {}
            parts = [count.format(name=t.replace("`", "``"), i=i) for i, t in enumerate(tokens)]
            union = " UNION ALL ".join(parts)
            rows = tx.run(union, {f"k{i}": t for i, t in enumerate(tokens)})
            return {r["name"]: int(r["n"]) for r in rows if r["n"]}

        with self._session(op) as s:
            return s.execute_read(work)

    def query(
        self, cypher: str, params: dict[str, Any] | None = None, *, read_only: bool = True,
        row_limit: int = 1000,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Run user Cypher with a timeout and a row cap; read-only is enforced twice: by
        :func:`check_cypher` before running, then by a READ access mode transaction.

        Nodes become ``{"_label", "id", ...}``, relationships ``{"_type", "_src", "_src_label",
        "_dst", "_dst_label", ...}``, paths ``{"nodes", "relationships"}``; ``props`` JSON is
        merged in (never over id/name/type); temporal values become ISO 8601 text.
        """
        check_cypher(cypher, read_only=read_only)
        args = dict(params or {})

        @neo4j.unit_of_work(timeout=self._timeout)
        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            result = tx.run(cypher, args)
            keys, records = result.keys(), result.fetch(row_limit)
            names = _endpoint_names(tx, [r.values() for r in records])
            return [{k: _plain(v, names) for k, v in zip(keys, r.values(), strict=True)} for r in records]

        driver = self._driver
        if driver is None:
            raise self._unavailable("Graph store is closed", operation="query")
        try:
            mode = neo4j.READ_ACCESS if read_only else neo4j.WRITE_ACCESS
            with driver.session(database=self._database, default_access_mode=mode) as s:
                return s.execute_read(work) if read_only else s.execute_write(work)
        except Neo4jError as exc:
            raise self._query_error(exc) from exc
        except DriverError as exc:
            raise self._unavailable(f"Graph query failed: {exc}", operation="query") from exc

    def _query_error(self, exc: Neo4jError) -> MemoryServiceError:
        code, msg = exc.code or "", exc.message or str(exc)
        if code == "Neo.ClientError.Statement.AccessMode":
            return ValidationError("Write clauses are not allowed in a read-only graph query",
                                   code="VAL_WRITE_NOT_ALLOWED", details={"engine": msg},
                                   suggestion="Use MATCH ... RETURN only.")  # fmt: skip
        if code.startswith("Neo.ClientError.Transaction.TransactionTimedOut"):
            return ValidationError("Graph query timed out", code="VAL_QUERY_TIMEOUT", details={"engine": msg},
                                   suggestion="Add a LIMIT, narrow the MATCH or use fewer hops.")  # fmt: skip
        if code.startswith(_USER_ERRORS):
            return ValidationError(
                f"Invalid Cypher: {msg}", code="VAL_CYPHER", details={"engine": msg, "code": code},
                suggestion="Check the syntax. Neo4j dialect: type(r), not label(r); nodes have id, name, "
                "type and props, relationships props (JSON text).",
            )  # fmt: skip
        return self._unavailable(f"Graph query failed: {msg}", operation="query", code=code)

    # ------------------------------------------------------------------ admin
    def size_bytes(self) -> int:
        """0: Neo4j 5 reports no store size through Cypher (checked on 5.26: ``dbms.queryJmx`` lists
        only JVM beans, ``SHOW DATABASES`` has no size), and the files may be on another host."""
        return 0

    def health(self) -> ComponentHealth:
        try:
            with self._session("health") as s:
                agent = s.run(PING).consume().server.agent
        except ServiceUnavailableError as exc:
            return ComponentHealth("graph", "unavailable", "neo4j", detail=exc.message)
        detail = f"{self._where} database {self._database} ({agent})"
        return ComponentHealth("graph", "ok", "neo4j", detail=detail, extra={"server": agent})

    def close(self) -> None:
        with self._lock:
            driver, self._driver = self._driver, None
        if driver is not None:
            driver.close()


def _without_credentials(uri: str) -> str:
    """The URI as it may appear in errors and health: scheme, host and port only."""
    parts = urlsplit(uri)
    if not parts.scheme or not parts.hostname:
        return "(no host in MEMORY_GRAPH__URI)"
    with contextlib.suppress(ValueError):  # a port that is not a number
        return f"{parts.scheme}://{parts.hostname}:{parts.port or 7687}"
    return f"{parts.scheme}://{parts.hostname}"


def _write_batches(tx: neo4j.ManagedTransaction, batches: list[tuple[str, list[dict[str, Any]]]]) -> None:
    for cypher, rows in batches:
        if not rows:  # a statement without rows (schema)
            tx.run(cypher).consume()
        for i in range(0, len(rows), _CHUNK):
            tx.run(cypher, rows=rows[i : i + _CHUNK]).consume()


def _edges(label: str, node_id: str, rows: list[dict[str, Any]]) -> list[GraphEdge]:
    found: dict[tuple[str, str, str, str, str], Any] = {}
    for r in rows:  # a self-loop is both ends: keep it once
        other = (r["label"] or "", r["id"])
        key = (r["type"], label, node_id, *other) if r["out"] else (r["type"], *other, label, node_id)
        found.setdefault(key, r["props"])
    return [GraphEdge(*k, properties=_json_object(p) or {}) for k, p in found.items()]


def _json_object(raw: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _endpoint_names(tx: neo4j.ManagedTransaction, rows: list[list[Any]]) -> _Names:
    """Relationship endpoints (element ids) -> (label, id): from nodes in the rows, else looked up
    (a relationship carries only its endpoints' element ids)."""
    known: _Names = {}
    wanted: set[str] = set()
    stack: list[Any] = [rows]
    while stack:
        v = stack.pop()
        if isinstance(v, Path):
            stack.extend([list(v.nodes), list(v.relationships)])
        elif isinstance(v, Node):
            known[v.element_id] = (_label(v), v.get("id", ""))
        elif isinstance(v, Relationship) and v.start_node is not None and v.end_node is not None:
            wanted.update((v.start_node.element_id, v.end_node.element_id))
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    if missing := wanted - known.keys():
        for r in tx.run(RESOLVE_NODES, eids=sorted(missing)):
            known[r["eid"]] = (r["label"] or "", r["id"] or "")
    return known


def _label(n: Node) -> str:
    return min(n.labels) if n.labels else ""


def _plain(v: Any, names: _Names) -> Any:
    """A driver value as plain JSON: nodes, relationships and paths become dicts."""
    if isinstance(v, Path):
        return {"nodes": [_plain(n, names) for n in v.nodes],
                "relationships": [_plain(r, names) for r in v.relationships]}  # fmt: skip
    if isinstance(v, Node | Relationship):
        if isinstance(v, Node):
            out: dict[str, Any] = {"_label": _label(v)}
        else:
            (sl, sid), (dl, did) = (names.get(n.element_id, ("", "")) if n is not None else ("", "")
                                    for n in (v.start_node, v.end_node))  # fmt: skip
            out = {"_type": v.type, "_src": sid, "_src_label": sl, "_dst": did, "_dst_label": dl}
        out.update({k: _plain(x, names) for k, x in v.items() if k != "props" or _json_object(x) is None})
        for k, x in (_json_object(v.get("props")) or {}).items():
            out.setdefault(k, _plain(x, names))  # never shadows id/name/type or the _keys
        return out
    if isinstance(v, dict):
        return {str(k): _plain(x, names) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x, names) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, dt.date | dt.time):
        return v.isoformat()
    if hasattr(v, "iso_format"):  # neo4j.time Date, Time, DateTime, Duration
        return v.iso_format()
    return str(v)  # points, bytes...
