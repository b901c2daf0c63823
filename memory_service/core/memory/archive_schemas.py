"""The answer of an archive or restore (seed 002's ``archive_state`` update).

An archived memory is hidden from every read (search, explain, traceability, export) like a
deleted one, but keeps its content, its votes and its graph links, and is restored by id
(memory_get still shows it, with status "archived"). See core/memory/archive.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_service.core.schema_base import ToolOutput

ArchiveStatus = Literal["archived", "restored", "unchanged", "dry_run"]


class ArchiveOutput(ToolOutput):
    memory_id: str
    archived: bool = Field(
        description="Whether the memory is archived after the call (would be, in a dry run)"
    )
    status: ArchiveStatus = Field(
        description="archived or restored: written; unchanged: it was in that state already, nothing "
        "written; dry_run: validated and previewed, nothing written"
    )
    previous_archived: bool = Field(description="Whether it was archived before the call")
