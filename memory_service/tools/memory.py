"""Memory CRUD tools (seed 001 §4.2.1): thin wrappers over MemoryService."""

from __future__ import annotations

from memory_service.core.memory.schemas import (
    MemoryAddInput,
    MemoryAddOutput,
    MemoryAddSchema,
    MemoryBulkAddInput,
    MemoryBulkAddOutput,
    MemoryBulkAddRequest,
    MemoryDeleteInput,
    MemoryDeleteOutput,
    MemoryGetInput,
    MemoryGetOutput,
    MemoryUpdateInput,
    MemoryUpdateOutput,
)
from memory_service.tools.registry import ADDITIVE, DESTRUCTIVE, READ_ONLY, UPDATE, ToolSpec

TYPES_HELP = (
    "Types: requirements, design (use metadata.design_type='ADR' for decisions), code_pattern, "
    "component, function, test_history, session, user_preference."
)

MEMORY_TOOLS = [
    ToolSpec(
        name="memory_add",
        title="Add a memory",
        description=(
            "Create a new memory entry (a requirement, design decision, code pattern, session "
            "learning, preference...). Returns its memory_id and any existing memories that look "
            "like conflicts/duplicates (similarity above the threshold). Optional relationships "
            "link it to existing memories, e.g. {'type': 'IMPLEMENTS', 'target_id': '<uuid>'}. " + TYPES_HELP
        ),
        schema_model=MemoryAddSchema,
        request_model=MemoryAddInput,
        output_model=MemoryAddOutput,
        handler=lambda s, r: s.memory.noticed(s.memory.add(r)),
        annotations=ADDITIVE,
        keyed=True,
    ),
    ToolSpec(
        name="memory_update",
        title="Update a memory",
        description=(
            "Update an existing memory's content and/or metadata. Metadata keys are merged into "
            "the existing metadata (a key set to null is removed). Changing content re-embeds the "
            "memory. Returns the fields that changed. archived=true (alone) archives the memory: "
            "hidden from search but kept, and restored by archived=false. A problem, solution, "
            "failed_tactic, fact, preference or change is an immutable record (seed 002): its "
            "content and write-time fields (confidence, rationale, evidence_refs, problem_id, "
            "related_memory_ids, repo_id) stay; its tags and other metadata may change."
        ),
        schema_model=MemoryUpdateInput,
        output_model=MemoryUpdateOutput,
        handler=lambda s, r: s.memory.update(r),
        annotations=UPDATE,
        keyed=True,
    ),
    ToolSpec(
        name="memory_delete",
        title="Delete a memory",
        description=(
            "Soft-delete a memory: it disappears from search and memory_get, its relationships "
            "are removed from the graph (and kept on the record, so nothing is lost). A problem, "
            "solution, failed_tactic, fact, preference or change is never deleted (seed 002's "
            "records): archive it with memory_update archived=true."
        ),
        schema_model=MemoryDeleteInput,
        output_model=MemoryDeleteOutput,
        handler=lambda s, r: s.memory.delete(r.memory_id, expected_version=r.expected_version),
        annotations=DESTRUCTIVE,
        keyed=True,
    ),
    ToolSpec(
        name="memory_get",
        title="Get a memory",
        description=(
            "Retrieve a memory by ID with all its fields; include_relationships=true adds its "
            "graph relationships (both directions)."
        ),
        schema_model=MemoryGetInput,
        output_model=MemoryGetOutput,
        handler=lambda s, r: s.memory.get(r),
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="memory_bulk_add",
        title="Add memories in bulk",
        description=(
            "Create up to 100 memories in one call. Each item is validated on its own: valid items "
            "are created, invalid ones are reported in 'errors' with their index (partial success). "
            f"{TYPES_HELP}"
        ),
        schema_model=MemoryBulkAddInput,
        request_model=MemoryBulkAddRequest,
        output_model=MemoryBulkAddOutput,
        handler=lambda s, r: s.memory.noticed(s.memory.bulk_add(r)),
        annotations=ADDITIVE,
        keyed=True,
    ),
]
