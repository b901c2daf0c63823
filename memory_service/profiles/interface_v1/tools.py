"""The ``memory-interface-v1`` profile (seed 002): memory.read, memory.write, memory.update.

Served as ``memory-read`` / ``memory-write`` / ``memory-update`` by default (Claude Code refuses
dots in tool names) and by the seed's dotted names with MEMORY_SERVER__TOOL_NAMES=seed
(tools/profiles.py). Seed 002 defines no envelope of its own, so answers and errors are seed
001's. The mapping onto the services is in profiles/interface_v1/mapping.py, the semantic rules
in rules.py.
"""

from __future__ import annotations

from memory_service.profiles.interface_v1 import mapping as v1
from memory_service.profiles.interface_v1.schemas import (
    ReadOutput,
    ReadRequest,
    UpdateOutput,
    UpdateRequest,
    UpdateRequestSchema,
    WriteOutput,
    WriteRequest,
)
from memory_service.tools.registry import ADDITIVE, DESTRUCTIVE_APPEND, READ_ONLY, ToolSpec

INTERFACE_V1_TOOLS = [
    ToolSpec(
        name="memory-read",
        seed_name="memory.read",
        title="Read memories",
        description=(
            "Retrieve memories of a repository (op='read'). mode='ambient' returns a startup pack "
            "(preferences, facts, recent problems); 'targeted' answers an explicit mid-task question. "
            "include_global (default true) adds memories written with scope 'global'; kinds filters "
            "(problem, solution, failed_tactic, fact, preference, change); limit defaults to 20. "
            "expand: semantic_hops (0-3, default 2) searches again from the best hits, "
            "include_problem_links adds a problem's solutions and failed tactics (and a fix's "
            "problem), include_fact_update_links adds fact-update chain neighbours."
        ),
        schema_model=ReadRequest,
        output_model=ReadOutput,
        handler=v1.read,
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="memory-write",
        seed_name="memory.write",
        title="Write a memory",
        description=(
            "Store an immutable memory (op='write'): memory {text, scope 'repo'|'global', kind, "
            "confidence 0-1, rationale?, links {problem_id, related_memory_ids}?, evidence_refs?}. "
            "A solution or failed_tactic needs links.problem_id of a 'problem' memory; a 'change' "
            "needs at least one evidence_ref. Linked memories must be this repository's or global. "
            "An identical memory is not stored twice (status skipped_dedupe, with its id)."
        ),
        schema_model=WriteRequest,
        output_model=WriteOutput,
        handler=v1.write,
        annotations=ADDITIVE,
        keyed=True,
    ),
    ToolSpec(
        name="memory-update",
        seed_name="memory.update",
        title="Update a memory's lifecycle or feedback",
        description=(
            "Lifecycle and feedback (op='update'), never content: update.type 'archive_state' "
            "{archived, rationale?} hides a memory from reads (archived false restores it); "
            "'utility_vote' {problem_id, vote -1..1} appends a vote for the memory in that problem's "
            "context; 'fact_update_link' {old_fact_id, new_fact_id} links a replacement fact through "
            "the change memory_id (write the change and the new fact first; evidence_refs needed "
            "unless the change has them). mode 'dry_run' validates and previews, 'commit' persists."
        ),
        schema_model=UpdateRequestSchema,
        request_model=UpdateRequest,
        output_model=UpdateOutput,
        handler=v1.update,
        # Archives (hides) memories and supersedes facts, each utility_vote appends a vote (a re-send
        # with the same request key does not: keyed).
        annotations=DESTRUCTIVE_APPEND,
        keyed=True,
    ),
]
