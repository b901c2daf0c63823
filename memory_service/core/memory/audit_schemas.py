"""memory_audit: read the append-only audit log (seed 004: every mutation, by whom, when)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from memory_service.core.schema_base import (
    DATETIME_FORMAT,
    MAX_NAME_CHARS,
    UUID_FORMAT,
    ToolInput,
    ToolOutput,
)


class MemoryAuditInput(ToolInput):
    memory_id: str | None = Field(
        default=None, json_schema_extra=UUID_FORMAT, description="Only events of this memory"
    )
    entity_id: str | None = Field(
        default=None,
        max_length=4096,
        description="Only events of this entity (a memory id, or an indexed file path for code_index)",
    )
    entity_type: str | None = Field(
        default=None, max_length=MAX_NAME_CHARS, description="memory, code_index, graph_node, job or graph"
    )
    operation: str | None = Field(
        default=None,
        max_length=MAX_NAME_CHARS,
        description="e.g. create, update, delete, supersede, utility_vote, mark_stale, import, merge, repair",
    )
    actor: str | None = Field(default=None, max_length=256)
    since: datetime | None = Field(default=None, description="Events at or after this time (ISO-8601)")
    until: datetime | None = Field(default=None, description="Events at or before this time (ISO-8601)")
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Field(
        default=None, max_length=32, description="next_cursor of the previous page, to read older events"
    )


class AuditEntry(ToolOutput):
    seq: int = Field(description="Position in the log: higher is newer")
    timestamp: str = Field(json_schema_extra=DATETIME_FORMAT)
    operation: str
    entity_type: str
    entity_id: str
    actor: str
    details: dict[str, Any] = Field(default_factory=dict)


class MemoryAuditOutput(ToolOutput):
    events: list[AuditEntry] = Field(description="Newest first")
    total: int = Field(description="Events matching the filters, over every page")
    next_cursor: str | None = Field(default=None, description="Pass as cursor for the next (older) page")
