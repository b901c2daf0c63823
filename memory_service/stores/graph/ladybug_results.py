"""LadybugDB results as Python rows, the adapter's rows as port types, engine values as plain JSON.

What ``query`` returns: nodes become ``{"_label", "id", ...}``, relationships ``{"_type",
"_src", "_src_label", "_dst", "_dst_label", ...}``, paths ``{"nodes", "relationships"}``; the
``props`` JSON text is merged in (never over id/name/type or the ``_`` keys) and null properties
are left out (as Neo4j does). A relationship carries only its endpoints' internal ids: endpoints
not among the rows' own nodes are looked up by their table and offset.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import defaultdict
from typing import Any

import ladybug as lb

from memory_service.core.ports import GraphEdge, RelatedEntity
from memory_service.stores.graph.cypher_guard import IDENT
from memory_service.stores.graph.ladybug_cypher import LIST_TABLE_IDS, RESOLVE_OFFSETS
from memory_service.stores.graph.rows import EdgeKey, edges_from, json_object, node_props

Names = dict[tuple[int, int], tuple[str, str]]  # internal node id -> (label, id)


def fetch(result: lb.QueryResult | list[lb.QueryResult], limit: int | None = None) -> list[list[Any]]:
    """The rows of one statement's result (at most ``limit``); the result is closed."""
    assert not isinstance(result, list)  # one statement per call (check_cypher)
    rows: list[list[Any]] = []
    while result.has_next() and (limit is None or len(rows) < limit):
        rows.append(list(result.get_next()))
    result.close()
    return rows


def execute(conn: lb.Connection, cypher: str, params: dict[str, Any] | None = None) -> list[list]:
    """The rows of one statement run on ``conn``."""
    return fetch(conn.execute(cypher, params or {}))


def endpoint_names(conn: lb.Connection, rows: list[list[Any]]) -> Names:
    """Relationship endpoints (internal ids) -> (label, id): from nodes in the rows, else looked up."""
    known: Names = {}
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
    tables = dict(execute(conn, LIST_TABLE_IDS)) if missing else {}
    for table, offsets in missing.items():
        label = tables.get(table, "")
        if IDENT.match(label):
            found = execute(conn, RESOLVE_OFFSETS.format(label=label), {"offsets": offsets})
            known.update({(table, offset): (label, nid) for offset, nid in found})
    return known


def edges_from_rows(label: str, node_id: str, out: list[list[Any]], inc: list[list[Any]]) -> list[GraphEdge]:
    """Rows of ``EDGES_OUT`` and ``EDGES_IN`` (type, label, id, props of each edge of a node) as edges."""
    found = {(t, label, node_id, ol, oid): p for t, ol, oid, p in out}
    for t, ol, oid, p in inc:  # a self-loop is both outgoing and incoming: keep it once
        found.setdefault((t, ol, oid, label, node_id), p)
    return edges_from(found)


def edges_between_rows(other: str, rows: list[tuple[str, list[Any]]]) -> list[GraphEdge]:
    """Rows of ``EDGES_FROM_OTHER`` and ``EDGES_TO_OTHER``, each with its node's label, as edges."""
    found: dict[EdgeKey, Any] = {}
    for label, (t, oid, nid, props, inward) in rows:  # a self-loop (other == label) once
        ends = (other, str(oid), label, str(nid)) if inward else (label, str(nid), other, str(oid))
        found.setdefault((t, *ends), props)
    return edges_from(found)


def related_from_rows(rows: list[list[Any]]) -> list[RelatedEntity]:
    """Rows of ``RELATED`` as entities."""
    return [
        RelatedEntity(xid, xlabel, name, rel, "OUTGOING" if forward else "INCOMING", d,
                      node_props(None, typ, props),  # the name is reported apart
                      [str(t) for t in path])
        for xid, xlabel, name, typ, props, d, rel, forward, path in rows
    ]  # fmt: skip


def _iid(value: dict[str, int]) -> tuple[int, int]:
    return (value["table"], value["offset"])


def plain(v: Any, names: Names) -> Any:
    """An engine value as plain JSON: nodes, relationships and paths become dicts."""
    if isinstance(v, dict):
        if "_NODES" in v and "_RELS" in v:  # a path, or a variable-length relationship
            return {"nodes": [plain(n, names) for n in v["_NODES"]],
                    "relationships": [plain(r, names) for r in v["_RELS"]]}  # fmt: skip
        if set(v) == {"offset", "table"}:  # an internal id, e.g. from id(n)
            return f"{v['table']}:{v['offset']}"
        if "_LABEL" not in v or not ("_SRC" in v or "_ID" in v):
            return {str(k): plain(x, names) for k, x in v.items()}
        if "_SRC" in v:
            (sl, sid), (dl, did) = (names.get(_iid(v[k]), ("", "")) for k in ("_SRC", "_DST"))
            out: dict[str, Any] = {"_type": v["_LABEL"], "_src": sid, "_src_label": sl}
            out.update(_dst=did, _dst_label=dl)
        else:
            out = {"_label": v["_LABEL"]}
        for key, val in v.items():
            decoded = json_object(val) if key == "props" else None
            if decoded is not None:  # never shadows id/name/type or the _keys
                for k, x in decoded.items():
                    out.setdefault(k, plain(x, names))
            elif not key.startswith("_") and val is not None:
                out[key] = plain(val, names)
        return out
    if isinstance(v, list | tuple):
        return [plain(x, names) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, dt.date | dt.time):  # a datetime is a date
        return v.isoformat()
    if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
        return int(v)
    return str(v)  # uuid, decimal, interval, blob...
