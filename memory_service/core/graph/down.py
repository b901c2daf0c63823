"""The answer of a graph tool while the graph store is down (seed 001 §6.3, "Neo4j unavailable").

The memory tools keep working without the graph (writes wait in the outbox, reads come from the
vector store); a tool whose answer *is* the graph cannot, so it says so, and what still works:
"Graph database unavailable ... Graph queries disabled; vector search still works". Only the
graph store's own failures (``SVC_GRAPH_STORE``, ``SVC_GRAPH_STORE_DAMAGED``) are rephrased: a
vector store that is down is not covered by "vector search still works"; nor is a failure
while the store still answers its health probe (a query the server refused is that query's
fault, and keeps its own message).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import GraphStore

P = ParamSpec("P")
R = TypeVar("R")
GRAPH_STORE_CODE = "SVC_GRAPH_STORE"
GRAPH_DISABLED = "Graph queries disabled; vector search still works"


def graph_unavailable(tool: str, cause: ServiceUnavailableError) -> ServiceUnavailableError:
    """The SERVICE_UNAVAILABLE error a graph tool answers with while the graph store is down: the
    cause's code, what still works, and the cause's own advice on bringing the store back."""
    return ServiceUnavailableError(
        f"Graph database unavailable, so {tool} cannot answer. {GRAPH_DISABLED}.",
        code=cause.code,
        details={"tool": tool, "cause": cause.message, **cause.details},
        suggestion="Use memory_search and memory_get meanwhile (they do not need the graph); memory "
        "writes are kept and reach the graph when it is back; retry this call then. " + cause.suggestion,
    )


def needs_graph(tool: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a graph tool's service method (of a service holding the store as ``_graph``): a
    graph store failure becomes the answer above."""

    def decorate(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return method(*args, **kwargs)
            except ServiceUnavailableError as exc:
                if not exc.code.startswith(GRAPH_STORE_CODE) or exc.details.get("tool"):
                    raise
                graph: GraphStore | None = getattr(args[0] if args else None, "_graph", None)
                if not exc.details.get("fail_fast") and graph is not None and graph.health().state == "ok":
                    raise
                raise graph_unavailable(tool, exc) from exc

        return wrapper

    return decorate
