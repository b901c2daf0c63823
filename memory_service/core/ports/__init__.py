"""Ports: what the core needs from the outside world, typed with our own models.

Each port has an embedded adapter (``memory_service/stores``, ``memory_service/embeddings``) and,
later, a server adapter. Adapters translate driver exceptions into
:class:`~memory_service.core.errors.ServiceUnavailableError` and never leak driver records.
All methods are synchronous; the MCP layer runs them in worker threads.
"""

from memory_service.core.ports.audit import AuditEvent, AuditLog, AuditQuery
from memory_service.core.ports.cache import Cache
from memory_service.core.ports.embedder import Embedder, SparseEncoder
from memory_service.core.ports.flags import Flags
from memory_service.core.ports.graph import GraphEdge, GraphNode, GraphStore, RelatedEntity
from memory_service.core.ports.health import ComponentHealth
from memory_service.core.ports.index_state import IndexedFile, IndexState
from memory_service.core.ports.journal import JournalEntry, WriteJournal
from memory_service.core.ports.maintenance import Maintainable
from memory_service.core.ports.queue import Queue, QueueMessage
from memory_service.core.ports.vector import (
    CollectionSpec,
    PayloadFilter,
    ScoredPoint,
    SparseVector,
    VectorPoint,
    VectorStore,
)
from memory_service.core.ports.votes import Vote, VoteStore

__all__ = [
    "AuditEvent",
    "AuditLog",
    "AuditQuery",
    "Cache",
    "CollectionSpec",
    "ComponentHealth",
    "Embedder",
    "Flags",
    "GraphEdge",
    "GraphNode",
    "GraphStore",
    "IndexState",
    "IndexedFile",
    "JournalEntry",
    "Maintainable",
    "PayloadFilter",
    "Queue",
    "QueueMessage",
    "RelatedEntity",
    "ScoredPoint",
    "SparseEncoder",
    "SparseVector",
    "VectorPoint",
    "VectorStore",
    "Vote",
    "VoteStore",
    "WriteJournal",
]
