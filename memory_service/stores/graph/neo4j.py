"""GraphStore on Neo4j through the official ``neo4j`` driver: standard Cypher 5, any Neo4j 5.

Model (shared with the LadybugDB adapter): a node has one label and the properties ``id``,
``name``, ``type`` and ``props`` (JSON text of the other scalar properties); each relationship
type is a real type with a JSON ``props``. Labels and types are interpolated into statements, so
they must be plain identifiers (``cypher_guard.ident``) and are backtick-quoted; values only ever
go through ``$params``, batches through ``UNWIND``.

Namespaces let several projects (and test servers) share one database: every node this store
writes also carries ``ns``, the store's namespace, and ``(ns, id)`` is unique per label (the
constraint ``{Label}_ns_id``, created the first time this store writes the label). Every
statement here is scoped to ``ns``, so writes, reads, walks, counts and deletes only ever see the
namespace (edges only join nodes of one namespace, so scoping the nodes scopes the edges); counts
are index-backed MATCH counts, as the count store knows only whole-database totals. The
constraint a store without namespaces created (``{Label}_id``, on ``id`` alone) would forbid the
same id in two namespaces: it is dropped once ``{Label}_ns_id`` exists; no other constraint is
touched. Nodes written without ``ns`` belong to no namespace and no store sees them; adopt them
with ``MATCH (n) WHERE n.ns IS NULL SET n.ns = $namespace`` (``query``, ``read_only=False``).

Every read runs in ``execute_read``, every write in ``execute_write``: the driver retries
transient failures (deadlocks between concurrent MERGEs, a leader switch) for ``max_retry_time``.
One ``upsert_edges`` call is one transaction. The driver is thread-safe; each call has a session.

``query`` (graph_query) refuses write clauses (``cypher_guard``), then runs in a READ access mode
transaction, which the server enforces too ("Writing in read access mode not allowed"). Checked on
5.26: READ mode still lets ``LOAD CSV`` read server files and ``TERMINATE TRANSACTIONS`` kill
other sessions' work; the lexical check refuses both. Dialect for users: ``type(r)`` (LadybugDB:
``label(r)``); extra properties are in ``n.props`` (JSON text; results decode it). Users' Cypher
cannot be rewritten safely, so it is not scoped: it gets ``$namespace`` (the store's, whatever
``namespace`` the caller passes) and stays in the project with ``WHERE n.ns = $namespace``.

``related`` walks breadth-first, one statement per hop in one read transaction: exact shortest
distances, no enumeration of all paths, no ``SHORTEST`` (Neo4j 5.21+ only), and it stops at the
hop where ``limit`` entities are found.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

import neo4j
from neo4j.exceptions import DriverError, Neo4jError

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.core.ports import ComponentHealth, GraphEdge, GraphNode, RelatedEntity
from memory_service.stores.graph import neo4j_cypher as cy
from memory_service.stores.graph.cypher_guard import ident, unbindable_params
from memory_service.stores.graph.neo4j_cypher import check_cypher
from memory_service.stores.graph.neo4j_errors import query_error, unavailable, without_credentials
from memory_service.stores.graph.neo4j_results import (
    edges_between_rows,
    edges_from_rows,
    plain_rows,
    related_level,
)
from memory_service.stores.graph.rows import CHUNK, edge_rows, hop_pattern, node_props, node_rows, walk_types

logger = logging.getLogger(__name__)

NAMESPACE = re.compile(r"[\w-]{1,64}")  # letters (as the project slug has them), digits, _ and -

_BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


class Neo4jGraphStore:
    """The server graph store: one driver (a connection pool) shared by worker threads."""

    def __init__(
        self, uri: str | None, user: str = "neo4j", password: str | None = None, database: str = "neo4j", *,
        namespace: str = "default", query_timeout_ms: int = 30_000, max_retry_time: float = 15.0,
        connect_timeout: float = 10.0,
    ) -> None:  # fmt: skip
        """Args:
        uri: ``bolt://host:7687``, ``neo4j://`` (routing), ``neo4j+s://`` (TLS)... (None: refused,
            as settings may leave it unset)
        user, password: basic auth; no password means no auth (a server with auth disabled).
        database: the database every statement runs in.
        namespace: this store's part of the database (1-64 letters, digits, ``_`` or ``-``).
        query_timeout_ms: transaction timeout for ``query`` (users' Cypher).
        max_retry_time: how long a transaction function is retried on transient errors.

        Raises:
            ValidationError: a namespace with other characters, empty or too long.
            ServiceUnavailableError: a URI the driver cannot use.
        """
        if not isinstance(namespace, str) or not NAMESPACE.fullmatch(namespace):
            raise ValidationError(
                f"Invalid graph namespace {namespace!r}", code="VAL_GRAPH_NAMESPACE",
                details={"field": "namespace", "provided": namespace, "pattern": NAMESPACE.pattern},
                suggestion="Use 1 to 64 letters, digits, '_' or '-' (the default is the project name).",
            )  # fmt: skip
        uri = uri or ""
        self._where = without_credentials(uri)
        self._database, self._namespace = database, namespace
        self._place = {"uri": self._where, "database": database, "namespace": namespace}  # for errors
        self._timeout = query_timeout_ms / 1000
        self._lock = threading.Lock()  # constraint creation, close
        self._constrained: set[str] = set()
        if urlsplit(uri).scheme not in _BOLT_SCHEMES:  # the driver's HTTP mode is a preview
            raise unavailable(self._place, f"Cannot use Neo4j at {self._where}: use one of {_BOLT_SCHEMES}",
                              operation="open")  # fmt: skip
        try:
            self._driver: neo4j.Driver | None = neo4j.GraphDatabase.driver(
                uri, auth=(user, password) if password is not None else None, user_agent="memory-service",
                max_transaction_retry_time=max_retry_time, connection_timeout=connect_timeout,
                notifications_min_severity="OFF",
            )  # fmt: skip
        except (DriverError, ValueError) as exc:  # a malformed URI or option
            reason = str(exc).replace(uri, self._where)  # the driver quotes the URI, credentials too
            raise unavailable(
                self._place, f"Cannot use Neo4j at {self._where}: {reason}", operation="open"
            ) from exc

    # ------------------------------------------------------------------ plumbing
    @contextlib.contextmanager
    def _session(self, op: str, mode: str = neo4j.READ_ACCESS) -> Iterator[neo4j.Session]:
        """A session on the database; driver and server errors become ServiceUnavailableError."""
        driver = self._driver
        if driver is None:
            raise unavailable(self._place, "Graph store is closed", operation=op)
        try:
            with driver.session(database=self._database, default_access_mode=mode) as session:
                yield session
        except MemoryServiceError:
            raise
        except (Neo4jError, DriverError) as exc:
            raise unavailable(self._place, f"Graph store failed during {op}: {exc}", operation=op) from exc

    def _at(self, **params: Any) -> dict[str, Any]:
        """``params`` with ``namespace`` set to this store's (over any given one)."""
        return {**params, "namespace": self._namespace}

    def _read(self, op: str, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """Rows of one read statement, in this store's namespace."""
        with self._session(op) as s:
            return s.execute_read(lambda tx: tx.run(cypher, self._at(**params)).data())

    def _write(self, op: str, batches: list[tuple[str, list[dict[str, Any]]]]) -> None:
        """Statements (with rows, sent ``CHUNK`` at a time) in one write transaction."""

        def work(tx: neo4j.ManagedTransaction) -> None:
            for cypher, rows in batches:
                for i in range(0, len(rows), CHUNK):
                    tx.run(cypher, self._at(rows=rows[i : i + CHUNK])).consume()

        with self._session(op, neo4j.WRITE_ACCESS) as s:
            s.execute_write(work)

    def _schema(self, cypher: str) -> None:
        with self._session("schema", neo4j.WRITE_ACCESS) as s:  # one schema change per transaction
            s.execute_write(lambda tx: tx.run(cypher).consume())

    def _ensure_constraints(self, labels: set[str]) -> None:
        """The uniqueness constraint on ``(ns, id)`` of each label, created once per store (MERGE
        relies on it: without it concurrent MERGEs may create duplicates, and lookups scan the
        label); then the older one on ``id`` alone, if any, is dropped (it would refuse an id
        another namespace has)."""
        with self._lock:
            todo = sorted(labels - self._constrained)
            if not todo:
                return
            for label in todo:
                self._schema(cy.CREATE_CONSTRAINT.format(label=label))
            for r in self._read("constraints", cy.LEGACY_CONSTRAINTS, names=[f"{x}_id" for x in todo]):
                logger.warning("Dropping Neo4j constraint %s (a unique id across namespaces)", r["name"])
                self._schema(cy.DROP_CONSTRAINT.format(name=r["name"]))
            self._constrained.update(todo)

    # ------------------------------------------------------------------ writes
    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None:
        """MERGE by (label, namespace, id); name, type and props are replaced by the given ones."""
        by_label = node_rows(nodes)
        if not by_label:
            return
        self._ensure_constraints(set(by_label))
        self._write("upsert_nodes", [(cy.UPSERT_NODES.format(label=label), [rows[k] for k in sorted(rows)])
                                     for label, rows in by_label.items()])  # fmt: skip

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None:
        """MERGE by (type, source, target); missing endpoints are created (id only), never dropped."""
        groups = edge_rows(edges)
        if not groups:
            return
        self._ensure_constraints({label for _, src, dst in groups for label in (src, dst)})
        statement = cy.UPSERT_EDGES.format
        self._write("upsert_edges", [(statement(type=rel, src=src, dst=dst), [rows[k] for k in sorted(rows)])
                                     for (rel, src, dst), rows in groups.items()])  # fmt: skip

    def delete_node(self, label: str, node_id: str) -> int:
        """Delete a node and its edges; returns the number of edges removed (a self-loop once)."""
        cypher = cy.DELETE_NODE.format(label=ident(label, "label"))
        with self._session("delete_node", neo4j.WRITE_ACCESS) as s:
            rows = s.execute_write(lambda tx: [r["removed"] for r in tx.run(cypher, self._at(id=node_id))])
        return int(rows[0]) if rows else 0

    def delete_nodes(self, label: str, node_ids: Sequence[str]) -> int:
        """Delete many nodes of one label with their edges in one statement; returns edges removed.

        Edges between two deleted nodes are counted twice (once from each end).
        """
        cypher = cy.DELETE_NODES.format(label=ident(label, "label"))
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return 0
        with self._session("delete_nodes", neo4j.WRITE_ACCESS) as s:
            row = s.execute_write(lambda tx: tx.run(cypher, self._at(ids=ids)).single(strict=True))
        return int(row["removed"])

    def delete_edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        """Delete every edge touching a node (the node stays); returns the removed edges."""
        read, delete = cy.EDGES_OF.format(label=ident(label, "label")), cy.DELETE_EDGES_OF.format(label=label)

        def work(tx: neo4j.ManagedTransaction) -> list[GraphEdge]:
            edges = edges_from_rows(label, node_id, tx.run(read, self._at(id=node_id)).data())
            if edges:
                tx.run(delete, self._at(id=node_id)).consume()
            return edges

        with self._session("delete_edges_of", neo4j.WRITE_ACCESS) as s:
            return s.execute_write(work)

    # ------------------------------------------------------------------ reads
    def edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        rows = self._read("edges_of", cy.EDGES_OF.format(label=ident(label, "label")), id=node_id)
        return edges_from_rows(label, node_id, rows)

    def edges_between(self, other_label: str, nodes: Mapping[str, Sequence[str]]) -> list[GraphEdge]:
        other = ident(other_label, "label")
        wanted = {ident(label, "label"): list(dict.fromkeys(ids)) for label, ids in nodes.items() if ids}

        def work(tx: neo4j.ManagedTransaction) -> list[GraphEdge]:
            return edges_between_rows(other, [
                (label, r)
                for label, ids in wanted.items()
                for r in tx.run(cy.EDGES_BETWEEN.format(other=other, label=label), self._at(ids=ids)).data()
            ])  # fmt: skip

        with self._session("edges_between") as s:
            return s.execute_read(work)

    def related(
        self, label: str, node_id: str, rel_types: Sequence[str] | None = None,
        direction: Literal["OUTGOING", "INCOMING", "BOTH"] = "BOTH", depth: int = 1, limit: int = 200,
    ) -> list[RelatedEntity]:  # fmt: skip
        """Entities within ``depth`` hops (start excluded), each once, at its shortest distance.

        ``relationship`` and ``direction`` describe the *last* hop into the entity as walked from
        the start: OUTGOING when that edge points at the entity. ``path`` lists the relationship
        types of every hop from the start, in order. When several equally short paths reach it,
        the smallest (type, direction) of their last hops is reported (then the smallest path).
        Ordered by distance, then label and id.
        """
        types = walk_types(label, rel_types, direction, depth, limit)
        start, hop = cy.START.format(label=label), cy.HOP.format(**hop_pattern(types, direction))

        def walk(tx: neo4j.ManagedTransaction) -> list[RelatedEntity]:
            found: list[RelatedEntity] = []
            frontier = [r["eid"] for r in tx.run(start, self._at(id=node_id))]
            seen = set(frontier)
            paths: dict[str, list[str]] = {eid: [] for eid in frontier}
            for d in range(1, depth + 1):
                if not frontier or len(found) >= limit:
                    break
                rows = tx.run(hop, frontier=frontier, seen=list(seen)).data()
                level, frontier = related_level(rows, d, paths)
                found += level
                seen.update(frontier)
            return found[:limit]

        with self._session("related") as s:
            return s.execute_read(walk)

    def find_nodes(self, labels: Sequence[str], key: str, limit: int = 10) -> list[GraphNode]:
        wanted = [ident(label, "label") for label in labels]
        for statement in (cy.FIND_BY_ID, cy.FIND_BY_NAME):
            found = [
                GraphNode(label, str(r["id"]), node_props(r["name"], r["type"], r["props"]))
                for label in wanted
                for r in self._read("find_nodes", statement.format(label=label), key=key, limit=limit)
            ]
            if found:
                return found[:limit]
        return []

    def in_degree(self, label: str, ids: Sequence[str], exclude_types: Sequence[str] = ()) -> dict[str, int]:
        cypher = cy.IN_DEGREE.format(label=ident(label, "label"))
        if not ids:
            return {}
        rows = self._read("in_degree", cypher, ids=list(ids), skip=list(exclude_types))
        return {str(r["id"]): int(r["n"]) for r in rows}

    def neighbours(self, label: str, ids: Sequence[str]) -> dict[str, list[str]]:
        cypher = cy.NEIGHBOURS.format(label=ident(label, "label"))
        if not ids:
            return {}
        rows = self._read("neighbours", cypher, ids=list(ids))
        return {str(r["a"]): sorted(map(str, r["b"])) for r in rows}

    def count_edges_by_type(self) -> dict[str, int]:
        return self._counts("count_edges_by_type", cy.COUNT_TYPES)

    def count_nodes_by_label(self) -> dict[str, int]:
        return self._counts("count_nodes_by_label", cy.COUNT_LABEL)

    def node_ids(self, label: str) -> list[str]:
        rows = self._read("node_ids", cy.NODE_IDS.format(label=ident(label, "label")))
        return [str(r["id"]) for r in rows]

    def _counts(self, op: str, count: str) -> dict[str, int]:
        """Non-zero counts in the namespace, per label or per type, one statement per label."""

        def work(tx: neo4j.ManagedTransaction) -> dict[str, int]:
            labels = [r["name"] for r in tx.run(cy.LABELS)]  # labels outlive their last node
            if not labels:
                return {}
            parts = [count.format(name=t.replace("`", "``"), i=i) for i, t in enumerate(labels)]
            union = " UNION ALL ".join(parts)
            totals: dict[str, int] = defaultdict(int)
            for r in tx.run(union, self._at(**{f"k{i}": t for i, t in enumerate(labels)})):
                totals[r["name"]] += int(r["n"])
            return {k: n for k, n in totals.items() if n}

        with self._session(op) as s:
            return s.execute_read(work)

    def query(
        self, cypher: str, params: dict[str, Any] | None = None, *, read_only: bool = True,
        row_limit: int = 1000,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Run user Cypher with a timeout and a row cap; read-only is enforced twice: by
        :func:`check_cypher` before running, then by a READ access mode transaction.

        The Cypher is not scoped to the namespace: ``$namespace`` is the store's (it replaces a
        ``namespace`` in ``params``), for ``WHERE n.ns = $namespace``. Rows are plain JSON
        (``neo4j_results``: nodes ``{"_label", "id", ...}``, relationships ``{"_type",
        "_src", "_dst", ...}``, paths ``{"nodes", "relationships"}``).
        """
        check_cypher(cypher, read_only=read_only)
        args = self._at(**(params or {}))

        @neo4j.unit_of_work(timeout=self._timeout)
        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            result = tx.run(cypher, args)
            return plain_rows(tx, result.keys(), result.fetch(row_limit))

        driver = self._driver
        if driver is None:
            raise unavailable(self._place, "Graph store is closed", operation="query")
        try:
            mode = neo4j.READ_ACCESS if read_only else neo4j.WRITE_ACCESS
            with driver.session(database=self._database, default_access_mode=mode) as s:
                return s.execute_read(work) if read_only else s.execute_write(work)
        except Neo4jError as exc:
            raise query_error(exc, self._place) from exc
        except DriverError as exc:
            raise unavailable(self._place, f"Graph query failed: {exc}", operation="query") from exc
        except (TypeError, ValueError, OverflowError) as exc:  # params the driver cannot send
            raise unbindable_params(exc) from exc

    # ------------------------------------------------------------------ admin
    def size_bytes(self) -> int:
        """0: Neo4j 5 reports no store size through Cypher (checked on 5.26: ``dbms.queryJmx`` lists
        only JVM beans, ``SHOW DATABASES`` has no size), and the files may be on another host."""
        return 0

    def health(self) -> ComponentHealth:
        try:
            with self._session("health") as s:
                agent = s.run(cy.PING).consume().server.agent
        except ServiceUnavailableError as exc:
            return ComponentHealth("graph", "unavailable", "neo4j", detail=exc.message)
        detail = f"{self._where} database {self._database} namespace {self._namespace} ({agent})"
        return ComponentHealth("graph", "ok", "neo4j", detail=detail, extra={"server": agent})

    def checkpoint(self) -> None:
        """Nothing: the server keeps its own files."""

    def close(self) -> None:
        with self._lock:
            driver, self._driver = self._driver, None
        if driver is not None:
            driver.close()
