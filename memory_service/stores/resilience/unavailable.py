"""A stand-in for a store that could not be opened at start-up.

Why: a damaged derived store (a corrupt or WAL-truncated graph) must not keep the whole
server from starting while the memory records themselves are readable (issue 12). The factory puts
this object in the store's place: every call raises :class:`ServiceUnavailableError` with the
reason the store could not be opened (the tools turn it into the ``SERVICE_UNAVAILABLE`` envelope),
and ``health()`` reports ``unavailable`` with that reason. Writes keep queueing their graph changes
in the durable outbox; they are applied once the store is repaired (``memory-cli repair``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import ComponentHealth, GraphStore
from memory_service.stores.resilience.delegate import PortDelegate

REPAIR_HINT = (
    "Stop the server and run `memory-cli repair`: it moves the damaged graph aside (never deletes "
    "it) and rebuilds the graph from the memory records."
)


class UnavailableGraphStore(PortDelegate, port=GraphStore):
    """GraphStore whose every call fails with why the real one could not be opened."""

    def __init__(self, cause: ServiceUnavailableError, *, backend: str, path: str = "") -> None:
        self.cause = cause
        self.backend = backend
        self.path = path

    def around(self, name: str, call: Callable[[], Any]) -> NoReturn:
        """Every GraphStore method but ``health``, ``checkpoint`` and ``close`` (resilience/delegate.py)."""
        raise ServiceUnavailableError(
            f"The graph store could not be opened at start-up: {self.cause.message}",
            code="SVC_GRAPH_STORE_DAMAGED",
            details={"backend": self.backend, "path": self.path, "operation": name},
            suggestion=REPAIR_HINT,
        )

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
