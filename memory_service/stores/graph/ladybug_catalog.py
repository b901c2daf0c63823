"""The table catalog of the LadybugDB graph store: which node and rel tables exist, which are made.

LadybugDB is schema-first, so tables are created on first use, and a rel table must declare its
FROM/TO label pairs. It can add a pair to an existing table (``ALTER TABLE T ADD IF NOT EXISTS FROM
A TO B``; checked, idempotent), so a pair is added the first time it is written instead of
declaring every pair among known labels up front. Labels and types are interpolated into DDL, so
they must match ``cypher_guard.IDENT`` (and are backtick-quoted); values always go through ``$params``.
A read-only query naming a table that does not exist yet runs again with empty stand-ins for it
(:meth:`Catalog.stand_ins`; see ``ladybug``).
"""

from __future__ import annotations

from collections.abc import Iterable

import ladybug as lb

from memory_service.core.errors import ValidationError
from memory_service.stores.graph.cypher_guard import IDENT, TOKEN
from memory_service.stores.graph.ladybug_cypher import (
    ADD_REL_PAIR,
    CREATE_NODE_TABLE,
    CREATE_REL_TABLE,
    CREATE_STAND_IN_REL,
    LIST_PAIRS,
    LIST_TABLES,
    STAND_IN_LABEL,
    STAND_IN_TYPE,
)
from memory_service.stores.graph.ladybug_results import execute

Pair = tuple[str, str, str]  # (type, from label, to label)


class Catalog:
    """Labels, types and the (type, from, to) pairs of each type, as this process knows them."""

    def __init__(self) -> None:
        self.node_labels: set[str] = set()
        self.rel_types: set[str] = set()
        self.pairs: set[Pair] = set()  # ensured by this process

    def load(self, conn: lb.Connection) -> None:
        """Labels, types and the (type, from, to) pairs of each type, as the engine has them."""
        tables = execute(conn, LIST_TABLES)
        self.node_labels = {name for name, kind in tables if kind == "NODE"}
        self.rel_types = {name for name, kind in tables if kind == "REL"}
        self.pairs = {
            (rel, src, dst)
            for rel in self.rel_types
            if IDENT.match(rel)  # the only types this adapter writes (and safe to quote)
            for src, dst in execute(conn, LIST_PAIRS.format(type=rel))
        }

    def missing(self, labels: Iterable[str] = (), pairs: Iterable[Pair] = ()) -> tuple[set[str], list[Pair]]:
        """The node tables and rel pairs to create for these; a label that is a relationship type,
        or a type that is a label, is refused."""
        new_pairs = [p for p in pairs if p not in self.pairs]
        ends = {end for _, src, dst in new_pairs for end in (src, dst)}
        new_labels = {*labels, *ends} - self.node_labels
        for name in new_labels:
            if name in self.rel_types:  # IF NOT EXISTS would silently keep the rel table
                raise ValidationError(f"{name!r} is a relationship type", code="VAL_GRAPH_IDENTIFIER")
        for rel, _, _ in new_pairs:
            if rel in self.node_labels or rel in new_labels:
                raise ValidationError(f"{rel!r} is a node label", code="VAL_GRAPH_IDENTIFIER")
        return new_labels, new_pairs

    def create(self, conn: lb.Connection, labels: set[str], pairs: list[Pair]) -> None:
        """Create the node tables, then the rel tables or their new pairs (from :meth:`missing`)."""
        for label in sorted(labels):
            execute(conn, CREATE_NODE_TABLE.format(label=label))
            self.node_labels.add(label)
        for rel, src, dst in pairs:
            ddl = ADD_REL_PAIR if rel in self.rel_types else CREATE_REL_TABLE
            execute(conn, ddl.format(type=rel, src=src, dst=dst))
            self.rel_types.add(rel)
            self.pairs.add((rel, src, dst))

    def stand_ins(self, cypher: str, error: str) -> list[str]:
        """DDL for empty tables in place of those a read names but the catalog lacks (and, while
        there are none of a kind, one of that kind for ``(n)`` / ``-[e]-`` to bind to)."""
        if not error.startswith("Binder exception"):
            return []
        labels, types = pattern_names(cypher)
        labels = {x for x in labels if IDENT.match(x)} - self.node_labels - self.rel_types
        types = {x for x in types if IDENT.match(x)} - self.rel_types - self.node_labels - labels
        if not self.node_labels and not labels:
            labels.add(STAND_IN_LABEL)
        if not self.rel_types and not types:
            types.add(STAND_IN_TYPE)
        if not labels and not types:
            return []
        ends = sorted(self.node_labels | labels)
        pairs = ", ".join(f"FROM `{a}` TO `{b}`" for a in ends for b in ends)
        return [CREATE_NODE_TABLE.format(label=x) for x in sorted(labels)] + [
            CREATE_STAND_IN_REL.format(type=t, pairs=pairs) for t in sorted(types)
        ]


def pattern_names(cypher: str) -> tuple[set[str], set[str]]:
    """The labels (``(n:L)``) and relationship types (``[r:T|U]``) a statement's patterns name."""
    labels: set[str] = set()
    types: set[str] = set()
    brackets: list[str] = []
    prev = ""
    for m in TOKEN.finditer(cypher):
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
