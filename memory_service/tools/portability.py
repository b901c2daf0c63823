"""Maintenance tools export_memory and import_memory (seed 001 §4.2.5): thin wrappers over
:class:`~memory_service.core.portability.service.PortabilityService`."""

from __future__ import annotations

from memory_service.core.portability.schemas import (
    ExportMemoryInput,
    ExportMemoryOutput,
    ImportMemoryInput,
    ImportMemoryOutput,
)
from memory_service.tools.registry import ADDITIVE, DESTRUCTIVE, ToolSpec

PORTABILITY_TOOLS = [
    ToolSpec(
        name="export_memory",
        title="Export memories to a file",
        description=(
            "Write memories to a JSONL file that import_memory (here or on another server) reads back "
            "losslessly: every record field (versions, timestamps, supersede chains, stale marks), its "
            "graph relationships and its utility votes; include_embeddings adds the vectors so that an "
            "import with the same model need not re-embed. Filters: memory_types, since/until (on "
            "updated_at), project, branch, include_deleted. output_path must be inside the project "
            "root, an allowed root or the data directory and must not exist (missing directories are "
            "created); leave it out to get <data_dir>/exports/memories-<UTC time>.jsonl. Changes no "
            "memory, but writes a file."
        ),
        schema_model=ExportMemoryInput,
        output_model=ExportMemoryOutput,
        handler=lambda s, r, progress: s.portability.export(r, progress),
        reports_progress=True,
        annotations=ADDITIVE,  # writes a new file (never replaces one); changes no memory
    ),
    ToolSpec(
        name="import_memory",
        title="Import memories from a file",
        description=(
            "Read a file written by export_memory and store its memories with their ids, versions, "
            "timestamps, relationships and votes. The whole file is checked first: a bad line (cut "
            "short, corrupt, another format version) refuses the import and names the line, and "
            "nothing is written. conflict_resolution decides for ids that already exist: 'skip' "
            "(default) keeps ours, 'overwrite' replaces ours with the file's (record and "
            "relationships), 'merge' keeps the higher version's content and unions metadata, tags, "
            "relationships and votes. dry_run=true reports the counts without writing. Importing the "
            "same file twice adds nothing the second time."
        ),
        schema_model=ImportMemoryInput,
        output_model=ImportMemoryOutput,
        handler=lambda s, r, progress: s.portability.import_file(r, progress),
        reports_progress=True,
        annotations=DESTRUCTIVE,  # overwrite replaces existing memories; a re-import changes nothing
    ),
]
