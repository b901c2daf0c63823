"""Graph tools (seed 001 §4.2.2): a user's Cypher, and a walk from one entity."""

from __future__ import annotations

from memory_service.core.graph.schemas import (
    GetRelatedInput,
    GetRelatedOutput,
    GraphQueryInput,
    GraphQueryOutput,
)
from memory_service.tools.registry import READ_ONLY, ToolSpec

GRAPH_TOOLS = [
    ToolSpec(
        name="graph_query",
        title="Query the graph (Cypher)",
        description=(
            "Run one Cypher statement against the project's graph (memories, files, functions, "
            "classes and their relationships) and get rows as JSON: nodes as {_label, id, name, "
            "type, ...}, relationships as {_type, _src, _dst, ...}, paths as {nodes, relationships}. "
            "Pass values through params ($name). Read-only unless the server sets "
            "MEMORY_GRAPH__ALLOW_WRITES: CREATE, MERGE, SET, DELETE, REMOVE, DROP, LOAD CSV and "
            "write procedures are refused with VAL_WRITE_NOT_ALLOWED. limit caps the rows (default "
            "100, max 1000; truncated=true when there were more); a query running past the server's "
            "timeout fails with VAL_QUERY_TIMEOUT. Dialects: on the embedded LadybugDB use label(r) "
            "and name only labels that exist; on Neo4j use type(r) and WHERE n.ns = $namespace to "
            "stay in this project."
        ),
        schema_model=GraphQueryInput,
        output_model=GraphQueryOutput,
        handler=lambda s, r: s.graph.query(r),
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="get_related",
        title="Get related entities",
        description=(
            "Walk the graph from one entity: a memory id, a code unit id, a file path relative to "
            "the project, or a function's or class's qualified name. Returns each entity within "
            "depth hops (1-5, default 1) once, at its shortest distance, nearest first, with the "
            "type and direction of the last hop that reached it. direction: OUTGOING, INCOMING or "
            'BOTH (default); relationship_types restricts every hop (e.g. ["CALLS"], '
            '["SUPERSEDES"]); limit 1-200 (default 50).'
        ),
        schema_model=GetRelatedInput,
        output_model=GetRelatedOutput,
        handler=lambda s, r: s.graph.related(r),
        annotations=READ_ONLY,
    ),
]
