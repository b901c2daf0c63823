"""Inputs and outputs of export_memory / import_memory (seed 001 §4.2.5; format: docs/export-format.md).

Seed 001's fields come first in each model; the rest are ours (filters, counts, checksums).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from memory_service.core.schema_base import (
    DATETIME_FORMAT,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    ToolInput,
    ToolOutput,
)

TypeName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
ConflictMode = Literal["skip", "overwrite", "merge"]


class ExportMemoryInput(ToolInput):
    memory_types: list[TypeName] | None = Field(
        default=None, max_length=32, description="Only these memory types (default: every type)"
    )
    output_path: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="Where to write the JSONL file: inside the project root, an allowed root or the "
        "data directory (missing directories are created); the file must not exist yet. Default: "
        "<data_dir>/exports/memories-<UTC time>.jsonl",
    )
    include_embeddings: bool = Field(
        default=False,
        description="Also write each memory's dense vector, so that an import with the same model "
        "skips re-embedding (about 8 KB more per memory)",
    )
    include_deleted: bool = Field(default=False, description="Also export soft-deleted memories")
    since: datetime | None = Field(
        default=None, json_schema_extra=DATETIME_FORMAT, description="Only memories updated at or after"
    )
    until: datetime | None = Field(
        default=None, json_schema_extra=DATETIME_FORMAT, description="Only memories updated at or before"
    )
    project: str | None = Field(
        default=None, min_length=1, max_length=200, description="Only memories of this project scope"
    )
    branch: str | None = Field(
        default=None, min_length=1, max_length=200, description="Only memories of this branch scope"
    )


class ExportMemoryOutput(ToolOutput):
    file_path: str
    memories_exported: int
    file_size_bytes: int
    relationships_exported: int = 0
    votes_exported: int = 0
    embeddings_exported: int = 0
    sha256: str = Field(default="", description="SHA-256 of the whole file, hex")
    format_version: int = 1


class ImportMemoryInput(ToolInput):
    file_path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="A file written by export_memory, inside the project root, an allowed root or the "
        "data directory",
    )
    conflict_resolution: ConflictMode = Field(
        default="skip",
        description="When a memory id already exists: skip keeps ours; overwrite replaces it (record "
        "and relationships) with the file's; merge keeps the higher version's content and unions "
        "metadata, tags, relationships and votes",
    )
    dry_run: bool = Field(
        default=False, description="Validate the file and report what would happen; write nothing"
    )


class ImportLineError(BaseModel):
    line: int
    error: str


class ImportMemoryOutput(ToolOutput):
    imported: int = Field(description="Memories created (ids that did not exist)")
    skipped: int = Field(description="Existing memories left as they were")
    errors: list[ImportLineError] = Field(default_factory=list)
    updated: int = Field(default=0, description="Existing memories replaced (overwrite)")
    merged: int = Field(default=0, description="Existing memories changed by a merge")
    dry_run: bool = False
    relationships_imported: int = 0
    votes_imported: int = 0
    reembedded: int = Field(default=0, description="Memories embedded again (no usable vector in the file)")
    vectors_reused: int = 0
    file_path: str = ""
    format_version: int = 1
