"""graph_query and get_related: a user's Cypher, and a walk from one entity, over the GraphStore.

Only GraphStore methods are called. ``query`` carries the user's Cypher as written (the adapter
guards it, runs it read-only unless the server allows writes, with a timeout and a row cap);
this service asks for one row more than the cap to tell a full page from a truncated one, and
makes the adapter's refusals say which setting or limit was involved.
"""

from __future__ import annotations

import time

from memory_service.core.audit_event import audit_event
from memory_service.core.code.records import FILE_LABEL, MODULE_LABEL
from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.graph.down import needs_graph
from memory_service.core.graph.schemas import (
    EntityRef,
    GetRelatedInput,
    GetRelatedOutput,
    GraphQueryInput,
    GraphQueryOutput,
    RelatedItem,
)
from memory_service.core.ports import AuditLog, GraphNode, GraphStore
from memory_service.core.records import MEMORY_LABEL

# Where an entity id may point: memory ids, unit ids (Function/Class), file paths, module names;
# when no id matches, a node's name (a unit's qualified name, a file's base name).
ENTITY_LABELS = (MEMORY_LABEL, "Function", "Class", FILE_LABEL, MODULE_LABEL)
MAX_CANDIDATES = 5


class GraphToolsService:
    def __init__(
        self,
        graph: GraphStore,
        *,
        allow_writes: bool = False,
        timeout_ms: int = 30_000,
        audit: AuditLog | None = None,
        actor: str = "agent",
    ) -> None:
        self._graph = graph
        self._allow_writes = allow_writes
        self._timeout_ms = timeout_ms
        self._audit = audit
        self._actor = actor

    @needs_graph("graph_query")
    def query(self, request: GraphQueryInput) -> GraphQueryOutput:
        """Run the user's Cypher; rows beyond ``limit`` are dropped and ``truncated`` says so.

        Raises:
            ValidationError: a write clause while writes are off (VAL_WRITE_NOT_ALLOWED), a
                timeout (VAL_QUERY_TIMEOUT), invalid Cypher (VAL_CYPHER).
        """
        started = time.perf_counter()
        try:
            rows = self._graph.query(
                request.cypher, request.params, read_only=not self._allow_writes, row_limit=request.limit + 1
            )
        except ValidationError as exc:
            raise self._explained(exc) from exc
        elapsed = round((time.perf_counter() - started) * 1000)
        if self._allow_writes and self._audit is not None:
            # With write access a query may have changed the graph: the audit keeps what ran.
            details = {"cypher": request.cypher, "params": request.params or {}, "rows": len(rows)}
            self._audit.append([audit_event("graph_query", "graph", "cypher", self._actor, details)])
        return GraphQueryOutput(
            results=rows[: request.limit],
            query_time_ms=elapsed,
            row_count=min(len(rows), request.limit),
            truncated=len(rows) > request.limit,
            read_only=not self._allow_writes,
        )

    @needs_graph("get_related")
    def related(self, request: GetRelatedInput) -> GetRelatedOutput:
        """Entities within ``depth`` hops of the one ``entity_id`` names, nearest first.

        Raises:
            NotFoundError: nothing in the graph has that id or name (NF_ENTITY).
            ValidationError: the name matches several entities (VAL_AMBIGUOUS_ENTITY).
        """
        start = self._resolve(request.entity_id)
        found = self._graph.related(
            start.label,
            start.id,
            request.relationship_types,
            request.direction,
            request.depth,
            limit=request.limit + 1,
        )
        items = [
            RelatedItem(
                entity_id=r.id,
                type=r.label,
                name=r.name,
                kind=_str_or_none(r.properties.get("type")),
                relationship=r.relationship,
                direction=r.direction,
                distance=r.distance,
                path_relationships=list(r.path),
            )
            for r in found[: request.limit]
        ]
        entity = EntityRef(
            entity_id=start.id, type=start.label, name=_str_or_none(start.properties.get("name"))
        )
        return GetRelatedOutput(entity=entity, related=items, truncated=len(found) > request.limit)

    def _resolve(self, key: str) -> GraphNode:
        nodes = self._graph.find_nodes(ENTITY_LABELS, key, limit=MAX_CANDIDATES + 1)
        if not nodes:
            raise NotFoundError(
                f"No entity '{key}' in the graph",
                code="NF_ENTITY",
                details={"field": "entity_id", "provided": key, "looked_in": list(ENTITY_LABELS)},
                suggestion="Pass a memory id (from memory_search), a code unit id or qualified name (from "
                "code_search), or a file path relative to the project root; code must be indexed first "
                "(index_file, index_directory).",
            )
        if len(nodes) > 1:
            raise ValidationError(
                f"'{key}' names {len(nodes)} entities",
                code="VAL_AMBIGUOUS_ENTITY",
                details={
                    "field": "entity_id",
                    "provided": key,
                    "candidates": [{"entity_id": n.id, "type": n.label} for n in nodes[:MAX_CANDIDATES]],
                },
                suggestion="Pass one candidate's entity_id instead of the name.",
            )
        return nodes[0]

    def _explained(self, exc: ValidationError) -> ValidationError:
        """The adapter's refusal, with the setting or limit that applies."""
        if exc.code == "VAL_WRITE_NOT_ALLOWED":
            details = {**exc.details, "allow_writes": False, "setting": "MEMORY_GRAPH__ALLOW_WRITES"}
            suggestion = (
                f"{exc.suggestion} graph_query is read-only on this server; an operator can allow writes "
                "with MEMORY_GRAPH__ALLOW_WRITES=true."
            )
            return ValidationError(exc.message, code=exc.code, details=details, suggestion=suggestion)
        if exc.code == "VAL_QUERY_TIMEOUT":
            details = {**exc.details, "timed_out": True, "timeout_ms": self._timeout_ms}
            return ValidationError(
                f"Graph query timed out after {self._timeout_ms} ms",
                code=exc.code,
                details=details,
                suggestion=exc.suggestion,
            )
        return exc


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)
