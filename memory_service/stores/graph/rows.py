"""Rows and arguments both graph adapters share (one graph model, two engines).

A node is written as ``{id, name, type, props}``: ``name`` and ``type`` are columns because
traversals return them, every other property is JSON in ``props``. Edges are grouped by (type,
source label, target label), since those are interpolated into the statement; within a group a
repeated node or pair is written once, the last one given winning. Read back, ``props`` is decoded
and merged in again (:func:`node_props`, :func:`edges_from`). A ``related`` walk takes the same
arguments, checked the same way, on both engines (:func:`walk_types`, :func:`hop_pattern`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from memory_service.core.errors import ValidationError
from memory_service.core.ports import GraphEdge, GraphNode
from memory_service.stores.graph.cypher_guard import ident

Row = dict[str, Any]
EdgeKey = tuple[str, str, str, str, str]  # (type, source label, source id, target label, target id)
CHUNK = 5000  # rows per UNWIND: bounds the parameter size (5k edges merge in ~0.1 s on LadybugDB)


def node_rows(nodes: Sequence[GraphNode]) -> dict[str, dict[str, Row]]:
    """Rows per label, keyed by node id."""
    by_label: dict[str, dict[str, Row]] = defaultdict(dict)
    for n in nodes:
        name, typ = n.properties.get("name"), n.properties.get("type")
        extra = {k: v for k, v in n.properties.items() if k not in ("id", "name", "type")}
        by_label[ident(n.label, "label")][n.id] = {
            "id": n.id,
            "name": None if name is None else str(name),
            "type": None if typ is None else str(typ),
            "props": json.dumps(extra, default=str),
        }
    return dict(by_label)


def edge_rows(edges: Sequence[GraphEdge]) -> dict[tuple[str, str, str], dict[tuple[str, str], Row]]:
    """Rows ``{a, b, props}`` per (type, source label, target label), keyed by (source, target)."""
    groups: dict[tuple[str, str, str], dict[tuple[str, str], Row]] = defaultdict(dict)
    for e in edges:
        key = (
            ident(e.type, "relationship type"),
            ident(e.source_label, "label"),
            ident(e.target_label, "label"),
        )
        groups[key][(e.source_id, e.target_id)] = {
            "a": e.source_id,
            "b": e.target_id,
            "props": json.dumps(e.properties, default=str),
        }
    return dict(groups)


def json_object(raw: Any) -> dict[str, Any] | None:
    """``raw`` decoded if it is JSON text of an object, else None."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def node_props(name: Any, typ: Any, props: Any) -> dict[str, Any]:
    """A node's properties as written: name and type when set, then the JSON ones."""
    return {
        **{k: v for k, v in (("name", name), ("type", typ)) if v is not None},
        **(json_object(props) or {}),
    }


def edges_from(found: Mapping[EdgeKey, Any]) -> list[GraphEdge]:
    """Edges from their keys and the ``props`` JSON text read for each."""
    return [GraphEdge(*k, properties=json_object(p) or {}) for k, p in found.items()]


def walk_types(
    label: str, rel_types: Sequence[str] | None, direction: str, depth: int, limit: int
) -> list[str]:
    """The relationship types of a ``related`` walk, once its other arguments are checked."""
    ident(label, "label")
    types = [ident(t, "relationship type") for t in rel_types or ()]
    if direction not in ("OUTGOING", "INCOMING", "BOTH") or not 1 <= depth <= 5 or limit < 1:
        raise ValidationError(
            "related() needs direction OUTGOING/INCOMING/BOTH, depth 1-5 and limit >= 1",
            code="VAL_GRAPH_TRAVERSAL", details={"direction": direction, "depth": depth, "limit": limit},
            suggestion="Use a depth from 1 to 5 and a positive limit.",
        )  # fmt: skip
    return types


def hop_pattern(types: Sequence[str], direction: str) -> dict[str, str]:
    """The ``{types}``, ``{left}`` and ``{right}`` of a walk's relationship pattern."""
    return {
        "types": ":" + "|".join(f"`{t}`" for t in types) if types else "",
        "left": "<" if direction == "INCOMING" else "",
        "right": ">" if direction == "OUTGOING" else "",
    }
