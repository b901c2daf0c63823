"""The graph store port: typed nodes and edges, walks, and a read-only Cypher query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from memory_service.core.ports.health import ComponentHealth


@dataclass(frozen=True)
class GraphNode:
    """A node: label (Memory, File, Function, Class...), id, scalar properties."""

    label: str
    id: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphEdge:
    """A directed, typed edge between two nodes, identified by (label, id) at each end."""

    type: str
    source_label: str
    source_id: str
    target_label: str
    target_id: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RelatedEntity:
    """One entity reached by a traversal, with the edge type that reached it and the hop count.

    ``path`` holds the relationship types of the whole path from the start to the entity, in
    order, one per hop (``len(path) == distance``; its last item is ``relationship``)."""

    id: str
    label: str
    name: str | None
    relationship: str
    direction: Literal["OUTGOING", "INCOMING"]
    distance: int
    properties: dict[str, Any] = field(default_factory=dict)
    path: list[str] = field(default_factory=list)


@runtime_checkable
class GraphStore(Protocol):
    """Relationships, traceability and the code graph (source of truth for edges)."""

    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None: ...

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None: ...

    def delete_node(self, label: str, node_id: str) -> int:
        """Delete a node and its edges; returns the number of edges removed."""
        ...

    def delete_nodes(self, label: str, node_ids: Sequence[str]) -> int:
        """Delete many nodes of one label and their edges; returns the number of edges removed."""
        ...

    def delete_edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        """Delete every edge touching a node (the node stays); returns the removed edges."""
        ...

    def edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        """Every edge touching a node, both directions."""
        ...

    def edges_between(self, other_label: str, nodes: Mapping[str, Sequence[str]]) -> list[GraphEdge]:
        """Edges, either direction, between the given nodes (``{label: ids}``) and any node of
        ``other_label``, in one call (the indexer: which memories cite the code units it is
        replacing or removing). Labels never written give nothing."""
        ...

    def related(
        self,
        label: str,
        node_id: str,
        rel_types: Sequence[str] | None = None,
        direction: Literal["OUTGOING", "INCOMING", "BOTH"] = "BOTH",
        depth: int = 1,
        limit: int = 200,
    ) -> list[RelatedEntity]: ...

    def find_nodes(self, labels: Sequence[str], key: str, limit: int = 10) -> list[GraphNode]:
        """Nodes of ``labels`` whose ``id`` is ``key``; when none is, those whose ``name`` is
        (get_related resolving a code unit by qualified name). Labels never written give nothing."""
        ...

    def in_degree(self, label: str, ids: Sequence[str], exclude_types: Sequence[str] = ()) -> dict[str, int]:
        """Incoming edges per node of ``label`` among ``ids``, not counting ``exclude_types``
        (ranking: how often a memory is cited). Ids with none may be left out."""
        ...

    def neighbours(self, label: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids``, the distinct nodes of the same ``label`` linked to it by an edge of
        any type, in either direction (ranking and graph expansion)."""
        ...

    def count_edges_by_type(self) -> dict[str, int]: ...

    def count_nodes_by_label(self) -> dict[str, int]: ...

    def node_ids(self, label: str) -> list[str]:
        """The id of every node of ``label`` (none for a label never written): normalization
        looks for Memory nodes without a record and code nodes whose file left the index."""
        ...

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        *,
        read_only: bool = True,
        row_limit: int = 1000,
    ) -> list[dict[str, Any]]:
        """Run a user's Cypher (graph_query); rows as plain JSON-able dicts. Write clauses are refused
        when read_only. Services never call it: each engine has its own dialect, so what a service
        reads is a method above, implemented per adapter."""
        ...

    def size_bytes(self) -> int: ...

    def checkpoint(self) -> None:
        """Write everything the engine's log holds into its database file (an online backup copies
        the files next, with writes paused). Nothing for a server."""
        ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...
