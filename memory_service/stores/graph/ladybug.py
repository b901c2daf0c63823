"""GraphStore on LadybugDB (``ladybug`` 0.22, the maintained Kùzu fork): embedded, on-disk, Cypher.

Model (shared with the Neo4j adapter): each label is a node table ``(id STRING PRIMARY KEY, name,
type, props STRING)``: ``name``/``type`` are columns because traversals return them, other scalar
properties are JSON in ``props``. Each relationship type is a rel table with a JSON ``props``.
LadybugDB is schema-first: tables are created on first use (``ladybug_catalog``), statements are
named constants (``ladybug_cypher``), results become port types and plain JSON (``ladybug_results``).

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
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import ladybug as lb

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, GraphEdge, GraphNode, RelatedEntity
from memory_service.stores.graph import ladybug_cypher as cy
from memory_service.stores.graph.cypher_guard import ident as _ident
from memory_service.stores.graph.cypher_guard import unbindable_params
from memory_service.stores.graph.ladybug_catalog import Catalog, Pair
from memory_service.stores.graph.ladybug_cypher import check_cypher
from memory_service.stores.graph.ladybug_errors import query_error, unavailable
from memory_service.stores.graph.ladybug_files import database_file, graph_files
from memory_service.stores.graph.ladybug_results import (
    edges_between_rows,
    edges_from_rows,
    endpoint_names,
    execute,
    fetch,
    plain,
    related_from_rows,
)
from memory_service.stores.graph.rows import CHUNK, edge_rows, hop_pattern, node_props, node_rows, walk_types

_OPEN_PATHS: set[str] = set()
_OPEN_PATHS_LOCK = threading.Lock()


class LadybugGraphStore:
    """The embedded graph store: one per database file per process, shared by worker threads."""

    def __init__(
        self, path: Path, *, query_timeout_ms: int = 30_000, buffer_pool_mb: int = 256, threads: int = 2
    ) -> None:
        path = Path(path).expanduser().resolve()
        self._path = database_file(path)  # LadybugDB wants a file path
        self._timeout_ms = query_timeout_ms
        self._lock = threading.RLock()
        self._tables = Catalog()
        self._db: lb.Database | None = None
        self._conn: lb.Connection | None = None
        with _OPEN_PATHS_LOCK:
            if str(self._path) in _OPEN_PATHS:
                raise unavailable(f"Graph database {self._path} is already open in this process",
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
                raise unavailable(f"Cannot open graph {self._path}: {exc}", path=str(self._path)) from exc
            _OPEN_PATHS.add(str(self._path))
        with self._guard("open"):
            self._load_catalog()

    # ------------------------------------------------------------------ plumbing
    @contextlib.contextmanager
    def _guard(self, op: str) -> Iterator[lb.Connection]:
        """Serialise access; engine exceptions become ServiceUnavailableError."""
        with self._lock:
            if self._conn is None:
                raise unavailable("Graph store is closed", operation=op)
            try:
                yield self._conn
            except MemoryServiceError:
                raise
            except Exception as exc:
                raise unavailable(f"Graph store failed during {op}: {exc}", operation=op) from exc

    @contextlib.contextmanager
    def _transaction(
        self, conn: lb.Connection, begin: str = cy.BEGIN, end: str = cy.COMMIT
    ) -> Iterator[None]:
        execute(conn, begin)
        try:
            yield
        except BaseException:
            with contextlib.suppress(RuntimeError):  # binder errors roll back by themselves
                execute(conn, cy.ROLLBACK)
            raise
        execute(conn, end)

    def _renew(self) -> lb.Connection:
        """A new connection in place of the current one, so no plan cached before a schema change
        (a failed one above all, see the module docstring) is used after it."""
        assert self._db is not None and self._conn is not None
        self._conn.close()
        self._conn = lb.Connection(self._db)
        return self._conn

    def _load_catalog(self) -> None:
        assert self._conn is not None
        self._tables.load(self._conn)

    def _ensure(
        self, conn: lb.Connection, labels: Iterable[str] = (), pairs: Iterable[Pair] = ()
    ) -> lb.Connection:
        """Create the node tables and rel pairs that are missing; returns the connection to go on
        with, a new one when the schema changed."""
        new_labels, new_pairs = self._tables.missing(labels, pairs)
        if not new_labels and not new_pairs:
            return conn
        try:
            self._tables.create(conn, new_labels, new_pairs)
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
                    for i in range(0, len(rows), CHUNK):
                        chunk = rows[i : i + CHUNK]
                        ids = {"ids": [r["id"] for r in chunk]}
                        known = {row[0] for row in execute(conn, cy.KNOWN_NODES.format(label=label), ids)}
                        if new := [r for r in chunk if r["id"] not in known]:
                            execute(conn, cy.CREATE_NODES.format(label=label), {"rows": new})
                        if old := [r for r in chunk if r["id"] in known]:
                            execute(conn, cy.UPSERT_NODES.format(label=label), {"rows": old})

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None:
        """MERGE by (type, source, target); missing endpoints are created (id only), never dropped."""
        groups = edge_rows(edges)
        with self._guard("upsert_edges") as conn:
            conn = self._ensure(conn, pairs=groups)  # DDL first, outside the data transaction
            with self._transaction(conn):
                for (rel, src, dst), by_pair in groups.items():
                    rows = list(by_pair.values())
                    for i in range(0, len(rows), CHUNK):
                        chunk = rows[i : i + CHUNK]
                        for end, col in ((src, "a"), (dst, "b")):
                            ids = sorted({r[col] for r in chunk})
                            execute(conn, cy.ENSURE_NODES.format(label=end), {"ids": ids})
                        execute(conn, cy.UPSERT_EDGES.format(type=rel, src=src, dst=dst), {"rows": chunk})

    def delete_node(self, label: str, node_id: str) -> int:
        with self._guard("delete_node") as conn:  # re-entrant lock: one step for other threads
            removed = self.delete_edges_of(label, node_id)
            if label in self._tables.node_labels:
                execute(conn, cy.DELETE_NODE.format(label=label), {"id": node_id})
        return len(removed)

    def delete_nodes(self, label: str, node_ids: Sequence[str]) -> int:
        """Delete many nodes of one label with their edges in one statement; returns edges removed.

        Edges between two deleted nodes are counted twice (once from each end).
        """
        _ident(label, "label")
        ids = list(dict.fromkeys(node_ids))
        with self._guard("delete_nodes") as conn:
            if label not in self._tables.node_labels or not ids:
                return 0
            with self._transaction(conn):
                removed = execute(conn, cy.COUNT_DETACHED.format(label=label), {"ids": ids})[0][0]
                execute(conn, cy.DELETE_NODES.format(label=label), {"ids": ids})
        return int(removed)

    def delete_edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        with self._guard("delete_edges_of") as conn:
            edges = self.edges_of(label, node_id)
            if edges:
                with self._transaction(conn):
                    execute(conn, cy.DELETE_EDGES_OUT.format(label=label), {"id": node_id})
                    execute(conn, cy.DELETE_EDGES_IN.format(label=label), {"id": node_id})
        return edges

    # ------------------------------------------------------------------ reads
    def edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        _ident(label, "label")
        with self._guard("edges_of") as conn:
            if label not in self._tables.node_labels or not self._tables.rel_types:  # e.props: no table
                return []
            out = execute(conn, cy.EDGES_OUT.format(label=label), {"id": node_id})
            inc = execute(conn, cy.EDGES_IN.format(label=label), {"id": node_id})
        return edges_from_rows(label, node_id, out, inc)

    def edges_between(self, other_label: str, nodes: Mapping[str, Sequence[str]]) -> list[GraphEdge]:
        other = _ident(other_label, "label")
        wanted = {_ident(label, "label"): list(dict.fromkeys(ids)) for label, ids in nodes.items() if ids}
        with self._guard("edges_between") as conn:
            if other not in self._tables.node_labels or not self._tables.rel_types:  # e.props: no table
                return []
            rows = [
                (label, row)
                for label, ids in wanted.items()
                if label in self._tables.node_labels
                for statement in (cy.EDGES_FROM_OTHER, cy.EDGES_TO_OTHER)
                for row in execute(conn, statement.format(other=other, label=label), {"ids": ids})
            ]
        return edges_between_rows(other, rows)

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
        wanted = walk_types(label, rel_types, direction, depth, limit)
        with self._guard("related") as conn:
            types = [t for t in wanted if t in self._tables.rel_types]
            if label not in self._tables.node_labels or not self._tables.rel_types or (wanted and not types):
                return []
            cypher = cy.RELATED.format(label=label, depth=depth, **hop_pattern(types, direction))
            rows = execute(conn, cypher, {"id": node_id, "limit": limit})
        return related_from_rows(rows)

    def find_nodes(self, labels: Sequence[str], key: str, limit: int = 10) -> list[GraphNode]:
        wanted = [_ident(label, "label") for label in labels]
        with self._guard("find_nodes") as conn:
            present = [label for label in wanted if label in self._tables.node_labels]
            for statement in (cy.FIND_BY_ID, cy.FIND_BY_NAME):
                found = [
                    GraphNode(label, nid, node_props(name, typ, props))
                    for label in present
                    for nid, name, typ, props in execute(
                        conn, statement.format(label=label), {"key": key, "limit": limit}
                    )
                ]
                if found:
                    return found[:limit]
        return []

    def in_degree(self, label: str, ids: Sequence[str], exclude_types: Sequence[str] = ()) -> dict[str, int]:
        _ident(label, "label")
        with self._guard("in_degree") as conn:
            if label not in self._tables.node_labels or not self._tables.rel_types or not ids:
                return {}
            rows = execute(
                conn, cy.IN_DEGREE.format(label=label), {"ids": list(ids), "skip": list(exclude_types)}
            )
        return {str(i): int(n) for i, n in rows}

    def neighbours(self, label: str, ids: Sequence[str]) -> dict[str, list[str]]:
        _ident(label, "label")
        with self._guard("neighbours") as conn:
            if label not in self._tables.node_labels or not self._tables.rel_types or not ids:
                return {}
            rows = execute(conn, cy.NEIGHBOURS.format(label=label), {"ids": list(ids)})
        out: dict[str, list[str]] = {}
        for a, b in rows:
            out.setdefault(str(a), []).append(str(b))
        return out

    def count_edges_by_type(self) -> dict[str, int]:
        with self._guard("count_edges_by_type") as conn:
            return {t: int(n) for t, n in execute(conn, cy.COUNT_EDGES)} if self._tables.rel_types else {}

    def count_nodes_by_label(self) -> dict[str, int]:
        with self._guard("count_nodes_by_label") as conn:
            return {t: int(n) for t, n in execute(conn, cy.COUNT_NODES)}

    def node_ids(self, label: str) -> list[str]:
        _ident(label, "label")
        with self._guard("node_ids") as conn:
            if label not in self._tables.node_labels:
                return []
            return [str(row[0]) for row in execute(conn, cy.NODE_IDS.format(label=label))]

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
                    columns, rows = self._run(conn, *run, begin=cy.BEGIN_READ_ONLY, end=cy.ROLLBACK)
                else:
                    columns, rows = self._run(conn, *run, begin=cy.BEGIN, end=cy.COMMIT)
            except (TypeError, ValueError, OverflowError) as exc:  # params the engine cannot bind
                raise unbindable_params(exc) from exc
            except RuntimeError as exc:
                stand_ins = self._tables.stand_ins(cypher, str(exc)) if read_only else []
                if not stand_ins:
                    raise query_error(exc) from exc
                # Again on a new connection (the failed plan is cached), in a transaction whose
                # end undoes the stand-ins (and anything the lexical check could have missed).
                conn = self._renew()
                try:
                    columns, rows = self._run(conn, *run, begin=cy.BEGIN, end=cy.ROLLBACK, setup=stand_ins)
                except RuntimeError as again:
                    raise query_error(again) from again
                finally:
                    conn = self._renew()  # drop plans bound to the stand-ins
            finally:
                if not read_only:  # the caller may have changed the schema
                    conn = self._renew()
                    self._load_catalog()
            names = endpoint_names(conn, rows)
        return [{c: plain(v, names) for c, v in zip(columns, row, strict=False)} for row in rows]

    def _run(
        self, conn: lb.Connection, cypher: str, params: dict[str, Any], row_limit: int, *,
        begin: str, end: str, setup: Sequence[str] = (),
    ) -> tuple[list[str], list[list[Any]]]:  # fmt: skip
        conn.set_query_timeout(self._timeout_ms)
        try:
            with self._transaction(conn, begin, end):
                for ddl in setup:
                    execute(conn, ddl)
                result = conn.execute(cypher, params)
                columns = [] if isinstance(result, list) else result.get_column_names()
                return columns, fetch(result, row_limit)
        finally:
            conn.set_query_timeout(0)

    # ------------------------------------------------------------------ admin
    def size_bytes(self) -> int:
        return sum(f.stat().st_size for f in graph_files(self._path) if f.is_file())  # + .wal and friends

    def checkpoint(self) -> None:
        """``CHECKPOINT``: the WAL's pages go into ``graph.lbug`` and the WAL file is removed."""
        with self._guard("checkpoint") as conn:
            execute(conn, cy.CHECKPOINT)

    def health(self) -> ComponentHealth:
        try:
            with self._guard("health") as conn:
                execute(conn, cy.PING)
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
