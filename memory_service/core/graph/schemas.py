"""graph_query and get_related inputs and outputs (seed 001 §4.2.2), with a few optional extras.

graph_query adds ``limit`` (the row cap) and reports ``row_count`` and ``truncated``; get_related
adds ``limit``, the resolved start ``entity``, and per result the entity's ``kind``, the last
hop's ``direction`` and ``path_relationships`` (every hop's type, from the start).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from memory_service.core.schema_base import MAX_PATH_CHARS, MAX_QUERY_CHARS, NonBlank, ToolInput, ToolOutput

MAX_QUERY_ROWS = 1000
Direction = Literal["OUTGOING", "INCOMING", "BOTH"]


class GraphQueryInput(ToolInput):
    cypher: NonBlank = Field(max_length=MAX_QUERY_CHARS, description="Cypher query string")
    params: dict[str, Any] | None = Field(
        default=None, description="Query parameters ($name in the query); on Neo4j $namespace is always set"
    )
    limit: int = Field(
        default=100, ge=1, le=MAX_QUERY_ROWS, description="Row cap: more rows set truncated=true"
    )


class GraphQueryOutput(ToolOutput):
    results: list[dict[str, Any]] = Field(
        description="One object per row, keyed by column; nodes, relationships and paths as plain objects"
    )
    query_time_ms: int
    row_count: int = Field(description="Rows in results")
    truncated: bool = Field(description="The query had more rows than limit")
    read_only: bool = Field(description="false only when the server allows writes (graph.allow_writes)")


class GetRelatedInput(ToolInput):
    entity_id: NonBlank = Field(
        max_length=MAX_PATH_CHARS,
        description="A memory id, a code unit id, a file path (relative to the project) or a qualified name",
    )
    relationship_types: list[str] | None = Field(
        default=None, max_length=20, description="Only walk these edge types (every hop)"
    )
    direction: Direction = "BOTH"
    depth: int = Field(default=1, ge=1, le=5)
    limit: int = Field(default=50, ge=1, le=200, description="At most this many related entities")


class EntityRef(ToolOutput):
    entity_id: str
    type: str = Field(description="Node label: Memory, Function, Class, File, Module")
    name: str | None = None


class RelatedItem(ToolOutput):
    entity_id: str
    type: str = Field(description="Node label: Memory, Function, Class, File, Module")
    name: str | None = None
    kind: str | None = Field(
        default=None, description="The node's own type: memory type, function kind, language"
    )
    relationship: str = Field(description="Type of the last hop of a shortest path to the entity")
    direction: Literal["OUTGOING", "INCOMING"] = Field(description="Direction of that last hop")
    distance: int = Field(description="Hops from the start entity")
    path_relationships: list[str] = Field(
        default_factory=list,
        description="Relationship types of the whole path from the start entity, in order: one per hop "
        "(as many as distance; the last is relationship)",
    )


class GetRelatedOutput(ToolOutput):
    entity: EntityRef
    related: list[RelatedItem]
    truncated: bool = Field(description="More entities were within reach than limit")
