"""What the LadybugDB graph store raises: the store unavailable, or the query at fault.

The engine raises ``RuntimeError`` with the kind of failure at the start of its message: a
parser, binder or catalog exception is the query's syntax or names; an IO, buffer manager,
storage or connection exception is the store's; anything else it refuses at run time is the
query's doing.
"""

from __future__ import annotations

from typing import Any

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.stores.graph.cypher_guard import timed_out, write_refused

STORE_FAILURES = ("IO exception", "Buffer manager exception", "Storage exception", "Connection exception")


def unavailable(message: str, **details: Any) -> ServiceUnavailableError:
    return ServiceUnavailableError(
        message, code="SVC_GRAPH_STORE", details={"backend": "ladybug", **details},
        suggestion="Retry later; if it persists, check the graph database file, its owner and the log.",
    )  # fmt: skip


def query_error(exc: RuntimeError) -> MemoryServiceError:
    msg = str(exc)
    if "read-only transaction" in msg:
        return write_refused(msg)
    if msg.startswith("Interrupted"):
        return timed_out(msg)
    if msg.startswith(("Parser exception", "Binder exception", "Catalog exception")):
        return ValidationError(f"Invalid Cypher: {msg}", code="VAL_CYPHER", details={"engine": msg},
                               suggestion="Check the syntax. LadybugDB dialect: label(r), not type(r); nodes "
                               "have id, name, type and props, relationships props (JSON text).")  # fmt: skip
    if msg.startswith(STORE_FAILURES):
        return unavailable(f"Graph query failed: {msg}", operation="query")
    # Anything else the engine refuses at run time is the query's doing: a division by zero, a
    # type mismatch, a conversion or overflow, a parameter it cannot bind.
    return ValidationError(f"Cypher failed: {msg}", code="VAL_CYPHER", details={"engine": msg},
                           suggestion="Fix the query or its params as the engine says.")  # fmt: skip
