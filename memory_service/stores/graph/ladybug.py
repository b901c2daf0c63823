"""GraphStore on LadybugDB (``ladybug`` 0.22, the maintained Kùzu fork): embedded, on-disk, Cypher.

Model (shared with the Neo4j adapter): each label is a node table ``(id STRING PRIMARY KEY, name,
type, props STRING)``: ``name``/``type`` are columns because traversals return them, other scalar
properties are JSON in ``props``. Each relationship type is a rel table with a JSON ``props``.
LadybugDB is schema-first, so tables are created on first use, and a rel table must declare its
FROM/TO label pairs. It can add a pair to an existing table (``ALTER TABLE T ADD IF NOT EXISTS FROM
A TO B``; checked, idempotent), so a pair is added the first time it is written instead of
declaring every pair among known labels up front. Labels and types are interpolated into DDL, so
they must match ``cypher_guard.IDENT`` (and are backtick-quoted); values always go through ``$params``.

Before its tables exist a label or a type reads as empty, as on Neo4j. Checked: a statement naming
a missing table fails to bind ("Table X does not exist"), and so does ``-[e]-`` reading ``e.props``
while no rel table exists ("Cannot find property props for e"). The adapter's own reads skip what
the catalog lacks; ``query`` runs such a read again with empty stand-ins for the missing tables,
created inside a transaction that is rolled back (so a count of them is 0, an OPTIONAL MATCH null).
The connection caches each parameterised statement's plan by text and parameter types, a *failed*
one too, for its lifetime (successful plans are re-bound after a schema change; failed ones are
not): a read that failed before a table existed would fail forever after. So the connection is
replaced (~0.2 ms) whenever this process changes the schema, and before such a rerun.

Dialect for ``query`` users: ``label(r)`` instead of ``type(r)``; extra properties live in
``n.props`` (JSON text; results decode it).

Threads: one Connection behind one re-entrant lock. Checked: one connection per thread makes
concurrent writers fail ("Only one write transaction at a time is allowed"); the engine is
single-writer anyway, and the lock also covers iterating a result.
Processes: another process opening the path read-write fails at once ("Could not set lock on
file"; read-only opens succeed). A second ``Database`` on the path in the *same* process is
accepted and silently diverges (writes lost on reopen), so open paths are registered and a second
store on one path is refused. So this process is the only one changing the schema.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import json
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import ladybug as lb

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.core.ports import ComponentHealth, GraphEdge, GraphNode, RelatedEntity
from memory_service.stores.graph.cypher_guard import IDENT, guard_cypher, unbindable_params
from memory_service.stores.graph.cypher_guard import TOKEN as _TOKEN
from memory_service.stores.graph.cypher_guard import ident as _ident
from memory_service.stores.graph.rows import edge_rows, node_rows

_CHUNK = 5000  # rows per UNWIND: bounds the parameter size (5k edges merge in ~0.1 s)

CREATE_NODE_TABLE = (
    "CREATE NODE TABLE IF NOT EXISTS `{label}`(id STRING PRIMARY KEY, name STRING, type STRING, props STRING)"
)
CREATE_REL_TABLE = "CREATE REL TABLE IF NOT EXISTS `{type}`(FROM `{src}` TO `{dst}`, props STRING)"
ADD_REL_PAIR = "ALTER TABLE `{type}` ADD IF NOT EXISTS FROM `{src}` TO `{dst}`"
LIST_TABLES = "CALL show_tables() RETURN name, type"
LIST_PAIRS = "CALL show_connection('{type}') RETURN `source table name`, `destination table name`"
# Empty tables a read-only query binds to while the ones it names do not exist yet (rolled back).
CREATE_STAND_IN_REL = "CREATE REL TABLE `{type}`({pairs}, props STRING)"
STAND_IN_LABEL, STAND_IN_TYPE = "_NoNodeYet", "_NO_RELATIONSHIP_YET"
UPSERT_NODES = (
    "UNWIND $rows AS r MERGE (n:`{label}` {{id: r.id}}) "
    "SET n.name = r.name, n.type = r.type, n.props = r.props"
)
ENSURE_NODES = "UNWIND $ids AS i MERGE (n:`{label}` {{id: i}})"
# MERGE costs ~65 µs a node here, CREATE ~17: the ids already there are looked up first (~1.5 µs
# each) and only those are merged; a bulk add's new memories are created.
KNOWN_NODES = "UNWIND $ids AS i MATCH (n:`{label}`) WHERE n.id = i RETURN n.id"
CREATE_NODES = (
    "UNWIND $rows AS r CREATE (n:`{label}` {{id: r.id, name: r.name, type: r.type, props: r.props}})"
)
# WHERE a.id = r.a, not (a:T {id: r.a}): the pattern form is far slower inside UNWIND.
UPSERT_EDGES = (
    "UNWIND $rows AS r MATCH (a:`{src}`) WHERE a.id = r.a MATCH (b:`{dst}`) WHERE b.id = r.b "
    "MERGE (a)-[e:`{type}`]->(b) SET e.props = r.props"
)
EDGES_OUT = "MATCH (n:`{label}`)-[e]->(m) WHERE n.id = $id RETURN label(e), label(m), m.id, e.props"
EDGES_IN = "MATCH (n:`{label}`)<-[e]-(m) WHERE n.id = $id RETURN label(e), label(m), m.id, e.props"
# Edges between nodes of {label} (by id) and any node of {other}: one statement per direction.
EDGES_FROM_OTHER = (
    "MATCH (m:`{other}`)-[e]->(n:`{label}`) WHERE n.id IN $ids RETURN label(e), m.id, n.id, e.props, true"
)
EDGES_TO_OTHER = (
    "MATCH (m:`{other}`)<-[e]-(n:`{label}`) WHERE n.id IN $ids RETURN label(e), m.id, n.id, e.props, false"
)
# LadybugDB cannot DELETE an undirected match: one statement per direction.
DELETE_EDGES_OUT = "MATCH (n:`{label}`)-[e]->() WHERE n.id = $id DELETE e"
DELETE_EDGES_IN = "MATCH (n:`{label}`)<-[e]-() WHERE n.id = $id DELETE e"
DELETE_NODE = "MATCH (n:`{label}`) WHERE n.id = $id DETACH DELETE n"
COUNT_DETACHED = "MATCH (n:`{label}`)-[e]-() WHERE n.id IN $ids RETURN count(e)"
DELETE_NODES = "MATCH (n:`{label}`) WHERE n.id IN $ids DETACH DELETE n"
COUNT_EDGES = "MATCH ()-[e]->() RETURN label(e), count(*)"
IN_DEGREE = "MATCH ()-[e]->(m:`{label}`) WHERE m.id IN $ids AND NOT label(e) IN $skip RETURN m.id, count(e)"
NEIGHBOURS = "MATCH (m:`{label}`)-[]-(x:`{label}`) WHERE m.id IN $ids RETURN DISTINCT m.id, x.id"
COUNT_NODES = "MATCH (n) RETURN label(n), count(*)"
# SHORTEST: one shortest path per reached node, so cycles cannot blow up the walk count.
RELATED = (
    "MATCH (s:`{label}`) WHERE s.id = $id "
    "MATCH p = (s){left}-[{types}* SHORTEST 1..{depth}]-{right}(x) WHERE id(x) <> id(s) "
    "WITH x, length(p) AS d, rels(p) AS hops "
    "RETURN x.id, label(x), x.name, x.type, x.props, d, label(hops[d]), end_node(hops[d]) = id(x), "
    "list_transform(hops, r -> label(r)) "
    "ORDER BY d, label(x), x.id LIMIT $limit"
)
FIND_BY_ID = "MATCH (n:`{label}`) WHERE n.id = $key RETURN n.id, n.name, n.type, n.props LIMIT $limit"
FIND_BY_NAME = "MATCH (n:`{label}`) WHERE n.name = $key RETURN n.id, n.name, n.type, n.props LIMIT $limit"
NODE_IDS = "MATCH (n:`{label}`) RETURN n.id"
LIST_TABLE_IDS = "CALL show_tables() RETURN id, name"
# offset IN $list over one table: ~50 ms for 2k ids (an UNWIND of internal_id() lookups: ~1.4 s).
RESOLVE_OFFSETS = "MATCH (n:`{label}`) WHERE offset(id(n)) IN $offsets RETURN offset(id(n)), n.id"
BEGIN, BEGIN_READ_ONLY = "BEGIN TRANSACTION", "BEGIN TRANSACTION READ ONLY"
COMMIT, ROLLBACK = "COMMIT", "ROLLBACK"
PING = "RETURN 1"

# LadybugDB's catalog procedures a read-only query may CALL.
_READ_ONLY_PROCEDURES = frozenset({
    "show_tables", "show_connection", "table_info", "show_functions", "show_indexes",
    "show_sequences", "current_setting", "db_version", "show_warnings",
})  # fmt: skip
_Names = dict[tuple[int, int], tuple[str, str]]  # internal node id -> (label, id)
_OPEN_PATHS: set[str] = set()
_OPEN_PATHS_LOCK = threading.Lock()


def check_cypher(cypher: str, *, read_only: bool) -> None:
    """The shared guard (stores/graph/cypher_guard.py) with LadybugDB's read-only procedures."""
    guard_cypher(cypher, read_only=read_only, read_procedures=_READ_ONLY_PROCEDURES)


def _unavailable(message: str, **details: Any) -> ServiceUnavailableError:
    return ServiceUnavailableError(
        message, code="SVC_GRAPH_STORE", details={"backend": "ladybug", **details},
        suggestion="Retry later; if it persists, check the graph database file, its owner and the log.",
    )  # fmt: skip


class LadybugGraphStore:
    """The embedded graph store: one per database file per process, shared by worker threads."""

    def __init__(
        self, path: Path, *, query_timeout_ms: int = 30_000, buffer_pool_mb: int = 256, threads: int = 2
    ) -> None:
        path = Path(path).expanduser().resolve()
        self._path = path / "graph.lbug" if path.is_dir() else path  # LadybugDB wants a file path
        self._timeout_ms = query_timeout_ms
        self._lock = threading.RLock()
        self._node_labels: set[str] = set()
        self._rel_types: set[str] = set()
        self._pairs: set[tuple[str, str, str]] = set()  # (type, from, to) ensured by this process
        self._db: lb.Database | None = None
        self._conn: lb.Connection | None = None
        with _OPEN_PATHS_LOCK:
            if str(self._path) in _OPEN_PATHS:
                raise _unavailable(f"Graph database {self._path} is already open in this process",
                                   path=str(self._path))  # fmt: skip
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                # The engine's default buffer pool is 80% of RAM: bound it, this is one store of several.
                self._db = lb.Database(
                    str(self._path), buffer_pool_size=buffer_pool_mb * 1024 * 1024, max_num_threads=threads
                )
                self._conn = lb.Connection(self._db)
            except Exception as exc:  # e.g. "Could not set lock on file": another process owns it
                if self._db is not None:
                    self._db.close()
                raise _unavailable(f"Cannot open graph {self._path}: {exc}", path=str(self._path)) from exc
            _OPEN_PATHS.add(str(self._path))
        with self._guard("open"):
            self._load_catalog()

    # ------------------------------------------------------------------ plumbing
    @contextlib.contextmanager
    def _guard(self, op: str) -> Iterator[lb.Connection]:
        """Serialise access; engine exceptions become ServiceUnavailableError."""
        with self._lock:
            if self._conn is None:
                raise _unavailable("Graph store is closed", operation=op)
            try:
                yield self._conn
            except MemoryServiceError:
                raise
            except Exception as exc:
                raise _unavailable(f"Graph store failed during {op}: {exc}", operation=op) from exc

    @staticmethod
    def _fetch(result: lb.QueryResult | list[lb.QueryResult], limit: int | None = None) -> list[list[Any]]:
        assert not isinstance(result, list)  # one statement per call (check_cypher)
        rows: list[list[Any]] = []
        while result.has_next() and (limit is None or len(rows) < limit):
            rows.append(list(result.get_next()))
        result.close()
        return rows

    def _rows(self, conn: lb.Connection, cypher: str, params: dict[str, Any] | None = None) -> list[list]:
        return self._fetch(conn.execute(cypher, params or {}))

    @contextlib.contextmanager
    def _transaction(self, conn: lb.Connection, begin: str = BEGIN, end: str = COMMIT) -> Iterator[None]:
        self._rows(conn, begin)
        try:
            yield
        except BaseException:
            with contextlib.suppress(RuntimeError):  # binder errors roll back by themselves
                self._rows(conn, ROLLBACK)
            raise
        self._rows(conn, end)

    def _renew(self) -> lb.Connection:
        """A new connection in place of the current one, so no plan cached before a schema change
        (a failed one above all, see the module docstring) is used after it."""
        assert self._db is not None and self._conn is not None
        self._conn.close()
        self._conn = lb.Connection(self._db)
        return self._conn

    def _load_catalog(self) -> None:
        """Labels, types and the (type, from, to) pairs of each type, as the engine has them."""
        assert self._conn is not None
        tables = self._rows(self._conn, LIST_TABLES)
        self._node_labels = {name for name, kind in tables if kind == "NODE"}
        self._rel_types = {name for name, kind in tables if kind == "REL"}
        self._pairs = {
            (rel, src, dst)
            for rel in self._rel_types
            if IDENT.match(rel)  # the only types this adapter writes (and safe to quote)
            for src, dst in self._rows(self._conn, LIST_PAIRS.format(type=rel))
        }

    def _ensure(
        self, conn: lb.Connection, labels: Iterable[str] = (), pairs: Iterable[tuple[str, str, str]] = ()
    ) -> lb.Connection:
        """Create the node tables and rel pairs that are missing; returns the connection to go on
        with, a new one when the schema changed."""
        new_pairs = [p for p in pairs if p not in self._pairs]
        ends = {end for _, src, dst in new_pairs for end in (src, dst)}
        new_labels = {*labels, *ends} - self._node_labels
        for name in new_labels:
            if name in self._rel_types:  # IF NOT EXISTS would silently keep the rel table
                raise ValidationError(f"{name!r} is a relationship type", code="VAL_GRAPH_IDENTIFIER")
        for rel, _, _ in new_pairs:
            if rel in self._node_labels or rel in new_labels:
                raise ValidationError(f"{rel!r} is a node label", code="VAL_GRAPH_IDENTIFIER")
        if not new_labels and not new_pairs:
            return conn
        try:
            for label in sorted(new_labels):
                self._rows(conn, CREATE_NODE_TABLE.format(label=label))
                self._node_labels.add(label)
            for rel, src, dst in new_pairs:
                ddl = ADD_REL_PAIR if rel in self._rel_types else CREATE_REL_TABLE
                self._rows(conn, ddl.format(type=rel, src=src, dst=dst))
                self._rel_types.add(rel)
                self._pairs.add((rel, src, dst))
        finally:
            conn = self._renew()
        return conn

    # ------------------------------------------------------------------ writes
    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None:
        """MERGE by (label, id); name, type and props are replaced by the given ones."""
        by_label = node_rows(nodes)
        with self._guard("upsert_nodes") as conn:  # the lookup and the writes: one step for others
            conn = self._ensure(conn, labels=by_label)
            with self._transaction(conn):
                for label, by_id in by_label.items():
                    rows = list(by_id.values())
                    for i in range(0, len(rows), _CHUNK):
                        chunk = rows[i : i + _CHUNK]
                        ids = {"ids": [r["id"] for r in chunk]}
                        known = {row[0] for row in self._rows(conn, KNOWN_NODES.format(label=label), ids)}
                        if new := [r for r in chunk if r["id"] not in known]:
                            self._rows(conn, CREATE_NODES.format(label=label), {"rows": new})
                        if old := [r for r in chunk if r["id"] in known]:
                            self._rows(conn, UPSERT_NODES.format(label=label), {"rows": old})

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None:
        """MERGE by (type, source, target); missing endpoints are created (id only), never dropped."""
        groups = edge_rows(edges)
        with self._guard("upsert_edges") as conn:
            conn = self._ensure(conn, pairs=groups)  # DDL first, outside the data transaction
            with self._transaction(conn):
                for (rel, src, dst), by_pair in groups.items():
                    rows = list(by_pair.values())
                    for i in range(0, len(rows), _CHUNK):
                        chunk = rows[i : i + _CHUNK]
                        for end, col in ((src, "a"), (dst, "b")):
                            ids = sorted({r[col] for r in chunk})
                            self._rows(conn, ENSURE_NODES.format(label=end), {"ids": ids})
                        self._rows(conn, UPSERT_EDGES.format(type=rel, src=src, dst=dst), {"rows": chunk})

    def delete_node(self, label: str, node_id: str) -> int:
        with self._guard("delete_node") as conn:  # re-entrant lock: one step for other threads
            removed = self.delete_edges_of(label, node_id)
            if label in self._node_labels:
                self._rows(conn, DELETE_NODE.format(label=label), {"id": node_id})
        return len(removed)

    def delete_nodes(self, label: str, node_ids: Sequence[str]) -> int:
        """Delete many nodes of one label with their edges in one statement; returns edges removed.

        Edges between two deleted nodes are counted twice (once from each end).
        """
        _ident(label, "label")
        ids = list(dict.fromkeys(node_ids))
        with self._guard("delete_nodes") as conn:
            if label not in self._node_labels or not ids:
                return 0
            with self._transaction(conn):
                removed = self._rows(conn, COUNT_DETACHED.format(label=label), {"ids": ids})[0][0]
                self._rows(conn, DELETE_NODES.format(label=label), {"ids": ids})
        return int(removed)

    def delete_edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        with self._guard("delete_edges_of") as conn:
            edges = self.edges_of(label, node_id)
            if edges:
                with self._transaction(conn):
                    self._rows(conn, DELETE_EDGES_OUT.format(label=label), {"id": node_id})
                    self._rows(conn, DELETE_EDGES_IN.format(label=label), {"id": node_id})
        return edges

    # ------------------------------------------------------------------ reads
    def edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        _ident(label, "label")
        with self._guard("edges_of") as conn:
            if label not in self._node_labels or not self._rel_types:  # e.props binds to no table
                return []
            out = self._rows(conn, EDGES_OUT.format(label=label), {"id": node_id})
            inc = self._rows(conn, EDGES_IN.format(label=label), {"id": node_id})
        found = {(t, label, node_id, ol, oid): p for t, ol, oid, p in out}
        for t, ol, oid, p in inc:  # a self-loop is both outgoing and incoming: keep it once
            found.setdefault((t, ol, oid, label, node_id), p)
        return [GraphEdge(*k, properties=_json_object(p) or {}) for k, p in found.items()]

    def edges_between(self, other_label: str, nodes: Mapping[str, Sequence[str]]) -> list[GraphEdge]:
        other = _ident(other_label, "label")
        wanted = {_ident(label, "label"): list(dict.fromkeys(ids)) for label, ids in nodes.items() if ids}
        with self._guard("edges_between") as conn:
            if other not in self._node_labels or not self._rel_types:  # e.props binds to no table
                return []
            rows = [
                (label, row)
                for label, ids in wanted.items()
                if label in self._node_labels
                for statement in (EDGES_FROM_OTHER, EDGES_TO_OTHER)
                for row in self._rows(conn, statement.format(other=other, label=label), {"ids": ids})
            ]
        found: dict[tuple[str, str, str, str, str], Any] = {}
        for label, (t, oid, nid, props, inward) in rows:  # a self-loop (other == label) once
            ends = (other, str(oid), label, str(nid)) if inward else (label, str(nid), other, str(oid))
            found.setdefault((t, *ends), props)
        return [GraphEdge(*k, properties=_json_object(p) or {}) for k, p in found.items()]

    def related(
        self, label: str, node_id: str, rel_types: Sequence[str] | None = None,
        direction: Literal["OUTGOING", "INCOMING", "BOTH"] = "BOTH", depth: int = 1, limit: int = 200,
    ) -> list[RelatedEntity]:  # fmt: skip
        """Entities within ``depth`` hops (start excluded), each once, at its shortest distance.

        ``relationship`` and ``direction`` describe the *last* hop into the entity as walked from
        the start: OUTGOING when that edge points at the entity (at depth 1: relative to the start).
        ``path`` lists the relationship types of every hop from the start, in order. When several
        paths are equally short, one of them is reported. Ordered by distance.
        """
        _ident(label, "label")
        wanted = [_ident(t, "relationship type") for t in rel_types or ()]
        if direction not in ("OUTGOING", "INCOMING", "BOTH") or not 1 <= depth <= 5 or limit < 1:
            raise ValidationError(
                "related() needs direction OUTGOING/INCOMING/BOTH, depth 1-5 and limit >= 1",
                code="VAL_GRAPH_TRAVERSAL", details={"direction": direction, "depth": depth, "limit": limit},
                suggestion="Use a depth from 1 to 5 and a positive limit.",
            )  # fmt: skip
        with self._guard("related") as conn:
            types = [t for t in wanted if t in self._rel_types]
            if label not in self._node_labels or not self._rel_types or (wanted and not types):
                return []
            cypher = RELATED.format(
                label=label, depth=depth, types=":" + "|".join(f"`{t}`" for t in types) if types else "",
                left="<" if direction == "INCOMING" else "", right=">" if direction == "OUTGOING" else "",
            )  # fmt: skip
            rows = self._rows(conn, cypher, {"id": node_id, "limit": limit})
        return [
            RelatedEntity(xid, xlabel, name, rel, "OUTGOING" if forward else "INCOMING", d,
                          {**({"type": typ} if typ is not None else {}), **(_json_object(props) or {})},
                          [str(t) for t in path])
            for xid, xlabel, name, typ, props, d, rel, forward, path in rows
        ]  # fmt: skip

    def find_nodes(self, labels: Sequence[str], key: str, limit: int = 10) -> list[GraphNode]:
        wanted = [_ident(label, "label") for label in labels]
        with self._guard("find_nodes") as conn:
            present = [label for label in wanted if label in self._node_labels]
            for statement in (FIND_BY_ID, FIND_BY_NAME):
                found = [
                    GraphNode(label, nid, _node_props(name, typ, props))
                    for label in present
                    for nid, name, typ, props in self._rows(
                        conn, statement.format(label=label), {"key": key, "limit": limit}
                    )
                ]
                if found:
                    return found[:limit]
        return []

    def in_degree(self, label: str, ids: Sequence[str], exclude_types: Sequence[str] = ()) -> dict[str, int]:
        _ident(label, "label")
        with self._guard("in_degree") as conn:
            if label not in self._node_labels or not self._rel_types or not ids:
                return {}
            rows = self._rows(
                conn, IN_DEGREE.format(label=label), {"ids": list(ids), "skip": list(exclude_types)}
            )
        return {str(i): int(n) for i, n in rows}

    def neighbours(self, label: str, ids: Sequence[str]) -> dict[str, list[str]]:
        _ident(label, "label")
        with self._guard("neighbours") as conn:
            if label not in self._node_labels or not self._rel_types or not ids:
                return {}
            rows = self._rows(conn, NEIGHBOURS.format(label=label), {"ids": list(ids)})
        out: dict[str, list[str]] = {}
        for a, b in rows:
            out.setdefault(str(a), []).append(str(b))
        return out

    def count_edges_by_type(self) -> dict[str, int]:
        with self._guard("count_edges_by_type") as conn:
            return {t: int(n) for t, n in self._rows(conn, COUNT_EDGES)} if self._rel_types else {}

    def count_nodes_by_label(self) -> dict[str, int]:
        with self._guard("count_nodes_by_label") as conn:
            return {t: int(n) for t, n in self._rows(conn, COUNT_NODES)}

    def node_ids(self, label: str) -> list[str]:
        _ident(label, "label")
        with self._guard("node_ids") as conn:
            if label not in self._node_labels:
                return []
            return [str(row[0]) for row in self._rows(conn, NODE_IDS.format(label=label))]

    def query(
        self, cypher: str, params: dict[str, Any] | None = None, *, read_only: bool = True,
        row_limit: int = 1000,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Run user Cypher with a timeout and a row cap; read-only is enforced twice: by
        :func:`check_cypher` before running, then by running in a READ ONLY transaction.

        Nodes become ``{"_label", "id", ...}``, relationships ``{"_type", "_src", "_src_label",
        "_dst", "_dst_label", ...}``, paths ``{"nodes", "relationships"}``; ``props`` JSON is
        merged in and null properties are left out (as Neo4j does).
        """
        check_cypher(cypher, read_only=read_only)
        run = (cypher, dict(params or {}), row_limit)
        with self._guard("query") as conn:
            try:
                if read_only:
                    columns, rows = self._run(conn, *run, begin=BEGIN_READ_ONLY, end=ROLLBACK)
                else:
                    columns, rows = self._run(conn, *run, begin=BEGIN, end=COMMIT)
            except (TypeError, ValueError, OverflowError) as exc:  # params the engine cannot bind
                raise unbindable_params(exc) from exc
            except RuntimeError as exc:
                stand_ins = self._stand_ins(cypher, str(exc)) if read_only else []
                if not stand_ins:
                    raise _query_error(exc) from exc
                # Again on a new connection (the failed plan is cached), in a transaction whose
                # end undoes the stand-ins (and anything the lexical check could have missed).
                conn = self._renew()
                try:
                    columns, rows = self._run(conn, *run, begin=BEGIN, end=ROLLBACK, setup=stand_ins)
                except RuntimeError as again:
                    raise _query_error(again) from again
                finally:
                    conn = self._renew()  # drop plans bound to the stand-ins
            finally:
                if not read_only:  # the caller may have changed the schema
                    conn = self._renew()
                    self._load_catalog()
            names = self._endpoint_names(conn, rows)
        return [{c: _plain(v, names) for c, v in zip(columns, row, strict=False)} for row in rows]

    def _run(
        self, conn: lb.Connection, cypher: str, params: dict[str, Any], row_limit: int, *,
        begin: str, end: str, setup: Sequence[str] = (),
    ) -> tuple[list[str], list[list[Any]]]:  # fmt: skip
        conn.set_query_timeout(self._timeout_ms)
        try:
            with self._transaction(conn, begin, end):
                for ddl in setup:
                    self._rows(conn, ddl)
                result = conn.execute(cypher, params)
                columns = [] if isinstance(result, list) else result.get_column_names()
                return columns, self._fetch(result, row_limit)
        finally:
            conn.set_query_timeout(0)

    def _stand_ins(self, cypher: str, error: str) -> list[str]:
        """DDL for empty tables in place of those a read names but the catalog lacks (and, while
        there are none of a kind, one of that kind for ``(n)`` / ``-[e]-`` to bind to)."""
        if not error.startswith("Binder exception"):
            return []
        labels, types = _pattern_names(cypher)
        labels = {x for x in labels if IDENT.match(x)} - self._node_labels - self._rel_types
        types = {x for x in types if IDENT.match(x)} - self._rel_types - self._node_labels - labels
        if not self._node_labels and not labels:
            labels.add(STAND_IN_LABEL)
        if not self._rel_types and not types:
            types.add(STAND_IN_TYPE)
        if not labels and not types:
            return []
        ends = sorted(self._node_labels | labels)
        pairs = ", ".join(f"FROM `{a}` TO `{b}`" for a in ends for b in ends)
        return [CREATE_NODE_TABLE.format(label=x) for x in sorted(labels)] + [
            CREATE_STAND_IN_REL.format(type=t, pairs=pairs) for t in sorted(types)
        ]

    def _endpoint_names(self, conn: lb.Connection, rows: list[list[Any]]) -> _Names:
        """Relationship endpoints (internal ids) -> (label, id): from nodes in the rows, else looked up."""
        known: _Names = {}
        wanted: set[tuple[int, int]] = set()
        stack: list[Any] = [rows]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                if "_SRC" in v and "_DST" in v:
                    wanted.update((_iid(v["_SRC"]), _iid(v["_DST"])))
                elif "_LABEL" in v and "_ID" in v:
                    known[_iid(v["_ID"])] = (v["_LABEL"], v.get("id", ""))
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)
        missing: dict[int, list[int]] = defaultdict(list)
        for table, offset in wanted - known.keys():
            missing[table].append(offset)
        tables = dict(self._rows(conn, LIST_TABLE_IDS)) if missing else {}
        for table, offsets in missing.items():
            label = tables.get(table, "")
            if IDENT.match(label):
                found = self._rows(conn, RESOLVE_OFFSETS.format(label=label), {"offsets": offsets})
                known.update({(table, offset): (label, nid) for offset, nid in found})
        return known

    # ------------------------------------------------------------------ admin
    def size_bytes(self) -> int:
        files = [self._path, *self._path.parent.glob(self._path.name + ".*")]  # + .wal and friends
        return sum(f.stat().st_size for f in files if f.is_file())

    def checkpoint(self) -> None:
        """``CHECKPOINT``: the WAL's pages go into ``graph.lbug`` and the WAL file is removed."""
        with self._guard("checkpoint") as conn:
            self._rows(conn, "CHECKPOINT")

    def health(self) -> ComponentHealth:
        try:
            with self._guard("health") as conn:
                self._rows(conn, PING)
        except ServiceUnavailableError as exc:
            return ComponentHealth("graph", "unavailable", "ladybug", detail=exc.message)
        extra = {"size_bytes": self.size_bytes()}
        return ComponentHealth("graph", "ok", "ladybug", detail=str(self._path), extra=extra)

    def close(self) -> None:
        with self._lock:
            if self._conn is None or self._db is None:
                return
            try:
                self._conn.close()
                self._db.close()
            finally:
                self._conn = self._db = None
                with _OPEN_PATHS_LOCK:
                    _OPEN_PATHS.discard(str(self._path))


def _pattern_names(cypher: str) -> tuple[set[str], set[str]]:
    """The labels (``(n:L)``) and relationship types (``[r:T|U]``) a statement's patterns name."""
    labels: set[str] = set()
    types: set[str] = set()
    brackets: list[str] = []
    prev = ""
    for m in _TOKEN.finditer(cypher):
        kind, text = m.lastgroup, m.group()
        if kind == "skip" and text.startswith("`"):
            kind, text = "word", text[1:-1]
        if kind == "skip":
            continue
        if kind == "word" and prev in (":", "|") and brackets and brackets[-1] in "([":
            (labels if brackets[-1] == "(" else types).add(text)
        elif text in ("(", "[", "{"):
            brackets.append(text)
        elif text in (")", "]", "}") and brackets:
            brackets.pop()
        prev = text if kind == "punct" else ""
    return labels, types


def _node_props(name: Any, typ: Any, props: Any) -> dict[str, Any]:
    """A node's properties as written: name and type when set, then the JSON ones."""
    return {
        **{k: v for k, v in (("name", name), ("type", typ)) if v is not None},
        **(_json_object(props) or {}),
    }


def _iid(value: dict[str, int]) -> tuple[int, int]:
    return (value["table"], value["offset"])


def _json_object(raw: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _query_error(exc: RuntimeError) -> MemoryServiceError:
    msg = str(exc)
    if "read-only transaction" in msg:
        return ValidationError("Write clauses are not allowed in a read-only graph query",
                               code="VAL_WRITE_NOT_ALLOWED", details={"engine": msg},
                               suggestion="Use MATCH ... RETURN only.")  # fmt: skip
    if msg.startswith("Interrupted"):
        return ValidationError("Graph query timed out", code="VAL_QUERY_TIMEOUT", details={"engine": msg},
                               suggestion="Add a LIMIT, narrow the MATCH or use fewer hops.")  # fmt: skip
    if msg.startswith(("Parser exception", "Binder exception", "Catalog exception")):
        return ValidationError(f"Invalid Cypher: {msg}", code="VAL_CYPHER", details={"engine": msg},
                               suggestion="Check the syntax. LadybugDB dialect: label(r), not type(r); nodes "
                               "have id, name, type and props, relationships props (JSON text).")  # fmt: skip
    if msg.startswith(_STORE_FAILURES):
        return _unavailable(f"Graph query failed: {msg}", operation="query")
    # Anything else the engine refuses at run time is the query's doing: a division by zero, a
    # type mismatch, a conversion or overflow, a parameter it cannot bind.
    return ValidationError(f"Cypher failed: {msg}", code="VAL_CYPHER", details={"engine": msg},
                           suggestion="Fix the query or its params as the engine says.")  # fmt: skip


_STORE_FAILURES = ("IO exception", "Buffer manager exception", "Storage exception", "Connection exception")


def _plain(v: Any, names: _Names) -> Any:
    """An engine value as plain JSON: nodes, relationships and paths become dicts."""
    if isinstance(v, dict):
        if "_NODES" in v and "_RELS" in v:  # a path, or a variable-length relationship
            return {"nodes": [_plain(n, names) for n in v["_NODES"]],
                    "relationships": [_plain(r, names) for r in v["_RELS"]]}  # fmt: skip
        if set(v) == {"offset", "table"}:  # an internal id, e.g. from id(n)
            return f"{v['table']}:{v['offset']}"
        if "_LABEL" not in v or not ("_SRC" in v or "_ID" in v):
            return {str(k): _plain(x, names) for k, x in v.items()}
        if "_SRC" in v:
            (sl, sid), (dl, did) = (names.get(_iid(v[k]), ("", "")) for k in ("_SRC", "_DST"))
            out: dict[str, Any] = {"_type": v["_LABEL"], "_src": sid, "_src_label": sl}
            out.update(_dst=did, _dst_label=dl)
        else:
            out = {"_label": v["_LABEL"]}
        for key, val in v.items():
            decoded = _json_object(val) if key == "props" else None
            if decoded is not None:  # never shadows id/name/type or the _keys
                for k, x in decoded.items():
                    out.setdefault(k, _plain(x, names))
            elif not key.startswith("_") and val is not None:
                out[key] = _plain(val, names)
        return out
    if isinstance(v, list | tuple):
        return [_plain(x, names) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, dt.date | dt.time):  # a datetime is a date
        return v.isoformat()
    if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
        return int(v)
    return str(v)  # uuid, decimal, interval, blob...
