"""What the Neo4j graph store raises: the store unavailable, or the query at fault.

A server error whose code says the statement, a procedure or the schema is at fault is the
query's (``Neo.ClientError.Statement.*`` and the like); any other is the store's. Errors name the
server by scheme, host and port only: a URI's credentials never appear in them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from neo4j.exceptions import Neo4jError

from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError, ValidationError
from memory_service.stores.graph.cypher_guard import timed_out, write_refused

# Server errors that are the query's fault (syntax, types, unknown procedure...), not the server's.
_USER_ERRORS = ("Neo.ClientError.Statement.", "Neo.ClientError.Procedure.", "Neo.ClientError.Schema.")


def unavailable(where: Mapping[str, str], message: str, **details: Any) -> ServiceUnavailableError:
    """``where``: the store's uri (without credentials), database and namespace."""
    return ServiceUnavailableError(
        message, code="SVC_GRAPH_STORE", details={"backend": "neo4j", **where, **details},
        suggestion="Retry later; if it persists, check that Neo4j answers at MEMORY_GRAPH__URI, the "
        "credentials (MEMORY_GRAPH__USER, MEMORY_GRAPH__PASSWORD) and MEMORY_GRAPH__DATABASE.",
    )  # fmt: skip


def query_error(exc: Neo4jError, where: Mapping[str, str]) -> MemoryServiceError:
    code, msg = exc.code or "", exc.message or str(exc)
    if code == "Neo.ClientError.Statement.AccessMode":
        return write_refused(msg)
    if code.startswith("Neo.ClientError.Transaction.TransactionTimedOut"):
        return timed_out(msg)
    if code.startswith(_USER_ERRORS):
        return ValidationError(
            f"Invalid Cypher: {msg}", code="VAL_CYPHER", details={"engine": msg, "code": code},
            suggestion="Check the syntax. Neo4j dialect: type(r), not label(r); nodes have id, name, "
            "type, props and ns (WHERE n.ns = $namespace keeps to this project), relationships props "
            "(JSON text).",
        )  # fmt: skip
    return unavailable(where, f"Graph query failed: {msg}", operation="query", code=code)


def without_credentials(uri: str) -> str:
    """The URI as it may appear in errors and health: scheme, host and port only."""
    parts = urlsplit(uri)
    if not parts.scheme or not parts.hostname:
        return "(no host in MEMORY_GRAPH__URI)"
    with contextlib.suppress(ValueError):  # a port that is not a number
        return f"{parts.scheme}://{parts.hostname}:{parts.port or 7687}"
    return f"{parts.scheme}://{parts.hostname}"
