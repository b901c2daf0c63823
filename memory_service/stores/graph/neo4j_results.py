"""Neo4j driver values as plain JSON (users' Cypher) and adapter rows as port types.

What ``query`` returns: nodes become ``{"_label", "id", ...}``, relationships ``{"_type",
"_src", "_src_label", "_dst", "_dst_label", ...}``, paths ``{"nodes", "relationships"}``; the
``props`` JSON text is merged in (never over id/name/type or the ``_`` keys); temporal values
become ISO 8601 text. A node's ``ns`` (the adapter's namespace) is left out, so a node reads the
same as on LadybugDB. A relationship carries only its endpoints' element ids: endpoints not among
the rows' own nodes are looked up in the same transaction.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import neo4j
from neo4j.graph import Node, Path, Relationship

from memory_service.core.ports import GraphEdge, RelatedEntity
from memory_service.stores.graph.rows import EdgeKey, edges_from, json_object, node_props

RESOLVE_NODES = (
    "MATCH (n) WHERE elementId(n) IN $eids RETURN elementId(n) AS eid, head(labels(n)) AS label, n.id AS id"
)
NAMESPACE_KEY = "ns"  # the property holding a node's namespace (see neo4j)
Names = dict[str, tuple[str, str]]  # element id -> (label, id)


def plain_rows(
    tx: neo4j.ManagedTransaction, keys: Sequence[str], records: Sequence[neo4j.Record]
) -> list[dict[str, Any]]:
    """Records as plain JSON rows (relationship endpoints resolved in ``tx``)."""
    names = endpoint_names(tx, [r.values() for r in records])
    return [{k: plain(v, names) for k, v in zip(keys, r.values(), strict=True)} for r in records]


def edges_from_rows(label: str, node_id: str, rows: list[dict[str, Any]]) -> list[GraphEdge]:
    """Rows of ``EDGES_OF`` (type, out, label, id, props of each edge touching a node) as edges."""
    found: dict[EdgeKey, Any] = {}
    for r in rows:  # a self-loop is both ends: keep it once
        other = (r["label"] or "", r["id"])
        key = (r["type"], label, node_id, *other) if r["out"] else (r["type"], *other, label, node_id)
        found.setdefault(key, r["props"])
    return edges_from(found)


def edges_between_rows(other: str, rows: list[tuple[str, dict[str, Any]]]) -> list[GraphEdge]:
    """Rows of ``EDGES_BETWEEN`` (edges between nodes of a label and nodes of ``other``), each
    with the label, as edges."""
    found: dict[EdgeKey, Any] = {}
    for label, r in rows:
        mine, theirs = (label, str(r["id"])), (other, str(r["other"]))
        found.setdefault((r["type"], *(mine + theirs if r["out"] else theirs + mine)), r["props"])
    return edges_from(found)


def related_level(
    rows: list[dict[str, Any]], distance: int, paths: dict[str, list[str]]
) -> tuple[list[RelatedEntity], list[str]]:
    """One hop of ``related`` (rows of ``HOP``): each node reached once, with the smallest (type,
    direction, path) of its last hops, ordered by label and id; and their element ids (the next
    frontier). ``paths`` maps each frontier node (``src``) to the relationship types that reached
    it (``[]`` for the start); the nodes reached are added to it."""
    best: dict[str, tuple[tuple[str, bool, list[str]], dict[str, Any]]] = {}
    for r in rows:
        key = (r["rel"], not r["forward"], [*paths[r["src"]], r["rel"]])
        if r["eid"] not in best or key < best[r["eid"]][0]:
            best[r["eid"]] = (key, r)
    for eid, (key, _) in best.items():
        paths[eid] = key[2]
    level = sorted(best.items(), key=lambda kv: (kv[1][1]["label"] or "", str(kv[1][1]["id"])))
    found = [
        RelatedEntity(r["id"], r["label"] or "", r["name"], r["rel"], "OUTGOING" if r["forward"] else
                      "INCOMING", distance, node_props(None, r["type"], r["props"]),  # name apart
                      list(paths[eid]))
        for eid, (_, r) in level
    ]  # fmt: skip
    return found, list(best)


def endpoint_names(tx: neo4j.ManagedTransaction, rows: list[list[Any]]) -> Names:
    """Relationship endpoints (element ids) -> (label, id): from nodes in the rows, else looked up."""
    known: Names = {}
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


def plain(v: Any, names: Names) -> Any:
    """A driver value as plain JSON: nodes, relationships and paths become dicts."""
    if isinstance(v, Path):
        return {"nodes": [plain(n, names) for n in v.nodes],
                "relationships": [plain(r, names) for r in v.relationships]}  # fmt: skip
    if isinstance(v, Node | Relationship):
        if isinstance(v, Node):
            out: dict[str, Any] = {"_label": _label(v)}
            hidden = NAMESPACE_KEY
        else:
            (sl, sid), (dl, did) = (names.get(n.element_id, ("", "")) if n is not None else ("", "")
                                    for n in (v.start_node, v.end_node))  # fmt: skip
            out = {"_type": v.type, "_src": sid, "_src_label": sl, "_dst": did, "_dst_label": dl}
            hidden = ""
        out.update({k: plain(x, names) for k, x in v.items()
                    if k != hidden and (k != "props" or json_object(x) is None)})  # fmt: skip
        for k, x in (json_object(v.get("props")) or {}).items():
            out.setdefault(k, plain(x, names))  # never shadows id/name/type or the _keys
        return out
    if isinstance(v, dict):
        return {str(k): plain(x, names) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [plain(x, names) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, dt.date | dt.time):
        return v.isoformat()
    if hasattr(v, "iso_format"):  # neo4j.time Date, Time, DateTime, Duration
        return v.iso_format()
    return str(v)  # points, bytes...
