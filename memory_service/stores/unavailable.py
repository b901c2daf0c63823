"""A stand-in for a store that could not be opened at start-up.

Why: a damaged derived store (a corrupt or WAL-truncated graph) must not keep the whole
server from starting while the memory records themselves are readable (issue 12). The factory puts
this object in the store's place: every call raises :class:`ServiceUnavailableError` with the
reason the store could not be opened (the tools turn it into the ``SERVICE_UNAVAILABLE`` envelope),
and ``health()`` reports ``unavailable`` with that reason. Writes keep queueing their graph changes
in the durable outbox; they are applied once the store is repaired (``memory-cli repair``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NoReturn

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, GraphEdge, GraphNode, RelatedEntity

REPAIR_HINT = (
    "Stop the server and run `memory-cli repair`: it moves the damaged graph aside (never deletes "
    "it) and rebuilds the graph from the memory records."
)


class UnavailableGraphStore:
    """GraphStore whose every call fails with why the real one could not be opened."""

    def __init__(self, cause: ServiceUnavailableError, *, backend: str, path: str = "") -> None:
        self.cause = cause
        self.backend = backend
        self.path = path

    def _fail(self, operation: str) -> NoReturn:
        raise ServiceUnavailableError(
            f"The graph store could not be opened at start-up: {self.cause.message}",
            code="SVC_GRAPH_STORE_DAMAGED",
            details={"backend": self.backend, "path": self.path, "operation": operation},
            suggestion=REPAIR_HINT,
        )

    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None:
        self._fail("upsert_nodes")

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None:
        self._fail("upsert_edges")

    def delete_node(self, label: str, node_id: str) -> int:
        self._fail("delete_node")

    def delete_nodes(self, label: str, node_ids: Sequence[str]) -> int:
        self._fail("delete_nodes")

    def delete_edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        self._fail("delete_edges_of")

    def edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        self._fail("edges_of")

    def edges_between(self, other_label: str, nodes: Mapping[str, Sequence[str]]) -> list[GraphEdge]:
        self._fail("edges_between")

    def related(
        self,
        label: str,
        node_id: str,
        rel_types: Sequence[str] | None = None,
        direction: Literal["OUTGOING", "INCOMING", "BOTH"] = "BOTH",
        depth: int = 1,
        limit: int = 200,
    ) -> list[RelatedEntity]:
        self._fail("related")

    def find_nodes(self, labels: Sequence[str], key: str, limit: int = 10) -> list[GraphNode]:
        self._fail("find_nodes")

    def in_degree(self, label: str, ids: Sequence[str], exclude_types: Sequence[str] = ()) -> dict[str, int]:
        self._fail("in_degree")

    def neighbours(self, label: str, ids: Sequence[str]) -> dict[str, list[str]]:
        self._fail("neighbours")

    def count_edges_by_type(self) -> dict[str, int]:
        self._fail("count_edges_by_type")

    def count_nodes_by_label(self) -> dict[str, int]:
        self._fail("count_nodes_by_label")

    def node_ids(self, label: str) -> list[str]:
        self._fail("node_ids")

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        *,
        read_only: bool = True,
        row_limit: int = 1000,
    ) -> list[dict[str, Any]]:
        self._fail("query")

    def size_bytes(self) -> int:
        self._fail("size_bytes")

    def health(self) -> ComponentHealth:
        return ComponentHealth(
            "graph",
            "unavailable",
            self.backend,
            detail=f"could not be opened at start-up: {self.cause.message}. {REPAIR_HINT}",
            extra={"path": self.path, "damaged": True},
        )

    def checkpoint(self) -> None:
        """Nothing is open: the files are copied as they are."""

    def close(self) -> None:
        """Nothing is open."""
