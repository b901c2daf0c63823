"""What an update or a soft delete makes of a loaded record (memory_update, memory_delete, the TTL
sweep's expire); the service writes it under the memory's lock."""

from __future__ import annotations

from dataclasses import dataclass

from memory_service.core import ttl
from memory_service.core.code.citations import CODE_REFS, code_ref_edges
from memory_service.core.guards import check_metadata
from memory_service.core.memory.new_records import tags_of
from memory_service.core.memory.schemas import MemoryUpdateInput
from memory_service.core.models import (
    MemoryRecord,
    MemoryStatus,
    Relationship,
    content_hash,
    derive_title,
    utcnow,
)
from memory_service.core.ports import GraphEdge
from memory_service.core.records import Stores, thread_of
from memory_service.core.redaction.sanitize import scrub_text, scrub_value
from memory_service.core.write.rules import check_chain_keys_kept, check_governed_update, check_kind_update


@dataclass
class Update:
    """A record's next version: what changed (nothing: no write), the code it newly cites, the
    kinds of secret masked in the input, and whether its vectors must be made again."""

    record: MemoryRecord
    changed: list[str]
    cited: list[GraphEdge]
    redacted: list[str]
    reembed: bool = False


def updated(stores: Stores, record: MemoryRecord, data: MemoryUpdateInput) -> Update:
    """``record`` with ``data``'s content and metadata applied (sanitised and checked), as a new
    version; ``record`` itself is left as it is."""
    content, redacted = scrub_text(data.content) if data.content is not None else (None, [])
    updates, meta_redacted = scrub_value(data.metadata) if data.metadata is not None else (None, [])
    redacted += meta_redacted
    check_kind_update(record, content, updates)
    updates = check_governed_update(record, content, updates)
    changed: list[str] = []
    new = record.model_copy(deep=True)
    if content is not None and content != record.content:
        new.content = content
        new.content_hash = content_hash(content)
        changed.append("content")
    if updates is not None:
        merged = dict(record.metadata)
        check_chain_keys_kept(record, updates)
        for key, value in updates.items():
            if value is None:
                if key in merged:
                    del merged[key]
                    changed.append(f"metadata.{key}")
            elif merged.get(key) != value:
                merged[key] = value
                changed.append(f"metadata.{key}")
        new.metadata = check_metadata(record.type, merged, field="metadata")
    cited: list[GraphEdge] = []
    if f"metadata.{CODE_REFS}" in changed:  # newly cited code is linked; dropped refs stay linked
        cited = code_ref_edges(stores.graph, new.id, new.metadata, field="metadata")
    if record.stale is not None:  # an update is the agent's word that the memory holds again
        new.stale = None
        changed.append("stale")
    if not changed:
        return Update(new, changed, cited, redacted)
    new.title = derive_title(new.content, new.metadata)
    new.tags = tags_of(new.metadata)
    new.version += 1
    new.updated_at = utcnow()
    new.expires_at = ttl.expires_at(new.ttl_policy, new.created_at, new.metadata)  # e.g. PR merged
    reembed = (
        new.embedding_text() != record.embedding_text()
        or record.embedding_pending
        or thread_of(new) != thread_of(record)  # moved to another session: new context
    )
    return Update(new, changed, cited, redacted, reembed)


def mark_deleted(record: MemoryRecord, removed: list[GraphEdge]) -> None:
    """Mark ``record`` deleted, as a new version that keeps the edges it loses (``removed``)."""
    now = utcnow()
    record.status = MemoryStatus.DELETED
    record.deleted_at = now
    record.updated_at = now
    record.version += 1
    record.removed_relationships = [
        Relationship(type=e.type, source_id=e.source_id, target_id=e.target_id, properties=e.properties)
        for e in removed
    ]
