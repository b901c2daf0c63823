"""How memory records are laid out in the vector store, and the store bundle the services use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_service.core.context_vectors import ContextVectors
from memory_service.core.models import MemoryRecord
from memory_service.core.ports import (
    AuditLog,
    Cache,
    CollectionSpec,
    Embedder,
    Flags,
    GraphStore,
    IndexState,
    Queue,
    SparseEncoder,
    VoteStore,
    WriteJournal,
)
from memory_service.core.scopes import FACETS, facet, scope_payload
from memory_service.core.ttl import EXPIRES_FIELD, expires_ts

MEMORIES = "memories"
MEMORY_LABEL = "Memory"
# The audit operation that writes off a memory whose record was lost and could not be recovered
# (``memory-cli repair --accept-loss``): the stores' cross-check stops reporting it.
RECORD_LOST = "record_lost"
# A counter in the cache that every memory write bumps: cached search results carry the value
# they were computed at, so a write anywhere (any process sharing the cache) invalidates them.
WRITE_GENERATION = ("memory", "write_generation")
GRAPH_SYNC_TOPIC = "graph_sync"

# Payload fields with an index: what filters and facets use.
KEYWORD_FIELDS = (
    "type",
    "status",
    "project",
    "branch",
    "content_hash",
    "superseded",
    "thread",
    FACETS,  # org, service, sprint, tenant, the dedupe key, the label and tags (core/scopes.py)
)
# Flat "true"/"false" copy of whether ``stale`` is set (statistics count it with a filter).
STALE_FIELD = "is_stale"
# Flat copy of metadata.session_id: memories of one session form a thread (services.threads).
THREAD_FIELD = "thread"
FLOAT_FIELDS = ("created_at_ts", "updated_at_ts", EXPIRES_FIELD)


def memories_collection(dim: int) -> CollectionSpec:
    return CollectionSpec(
        name=MEMORIES,
        dense_dim=dim,
        sparse=True,
        keyword_indexes=KEYWORD_FIELDS,
        float_indexes=FLOAT_FIELDS,
        disk_indexes=("content_hash", THREAD_FIELD, FACETS),
    )


# Collections whose records of a thread are also kept read in their context: a sibling collection
# each (core/context_vectors.py), which ``Stores.vectors`` keeps in step.
CONTEXT_COLLECTIONS = (MEMORIES,)


def thread_of(record: MemoryRecord) -> str | None:
    """The thread a record belongs to: its ``metadata.session_id`` (a non-empty string or number)."""
    value = record.metadata.get("session_id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text or None


def to_payload(record: MemoryRecord) -> dict[str, Any]:
    """The record as JSON, plus flat copies of the fields that filters use."""
    payload = record.model_dump(mode="json")
    payload["superseded"] = "true" if record.metadata.get("superseded") else "false"
    payload[STALE_FIELD] = "true" if record.stale is not None else "false"
    payload[THREAD_FIELD] = thread_of(record) or ""
    payload.update(scope_payload(record.scope))
    if record.dedupe_key:
        payload[FACETS].append(facet("dedupe", record.dedupe_key))
    if record.label:
        payload[FACETS].append(facet("kind", record.label))
    payload[FACETS].extend(facet("tag", tag) for tag in record.tags)
    payload[EXPIRES_FIELD] = expires_ts(record.expires_at)
    payload["created_at_ts"] = record.created_at.timestamp()
    payload["updated_at_ts"] = record.updated_at.timestamp()
    return payload


_RECORD_FIELDS = frozenset(MemoryRecord.model_fields)  # the class attribute is slow to read per key


def from_payload(payload: dict[str, Any]) -> MemoryRecord:
    data = {k: v for k, v in payload.items() if k in _RECORD_FIELDS}
    return MemoryRecord.model_validate(data)


@dataclass
class Stores:
    """The engines one process owns (ROADMAP 6: keep the handles in one place)."""

    vectors: ContextVectors  # the vector store, with the memories' context sibling (CONTEXT_COLLECTIONS)
    graph: GraphStore
    cache: Cache
    queue: Queue
    audit: AuditLog
    embedder: Embedder
    sparse: SparseEncoder
    index_state: IndexState
    votes: VoteStore
    journal: WriteJournal | None = None  # write intents (services.write_journal); None: writes unjournaled
    flags: Flags | None = None  # durable markers beside the journal (None: none kept)

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
        if self.flags is not None:
            self.flags.close()
        for store in (
            self.vectors,
            self.graph,
            self.queue,
            self.audit,
            self.index_state,
            self.votes,
            self.cache,
        ):
            store.close()
