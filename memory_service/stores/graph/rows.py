"""Nodes and edges as the UNWIND rows both graph adapters write (one graph model, two engines).

A node is ``{id, name, type, props}``: ``name`` and ``type`` are columns because traversals return
them, every other property is JSON in ``props``. Edges are grouped by (type, source label, target
label), since those are interpolated into the statement; within a group a repeated node or pair
is written once, the last one given winning.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from memory_service.core.ports import GraphEdge, GraphNode
from memory_service.stores.graph.cypher_guard import ident

Row = dict[str, Any]


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
