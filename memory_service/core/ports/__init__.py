"""Ports: what the core needs from the outside world, typed with our own models.

Each port has an embedded adapter (``memory_service/stores``, ``memory_service/embeddings``) and,
later, a server adapter. Adapters translate driver exceptions into
:class:`~memory_service.core.errors.ServiceUnavailableError` and never leak driver records.
All methods are synchronous; the MCP layer runs them in worker threads.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from memory_service.core import actor
from memory_service.core.limits import AUDIT_ITEMS, AUDIT_TEXT_CHARS, clip_value
from memory_service.core.redaction.sanitize import kinds_note, scrub_value

# --------------------------------------------------------------------------- health


@dataclass(frozen=True)
class ComponentHealth:
    """State of one store or model: ``ok``, ``degraded`` or ``unavailable``, with a reason."""

    name: str
    state: Literal["ok", "degraded", "unavailable"]
    backend: str
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- vectors


@dataclass(frozen=True)
class SparseVector:
    """A sparse lexical vector (BM25-style term weights)."""

    indices: list[int]
    values: list[float]


@dataclass
class VectorPoint:
    """A point to upsert: id, optional dense vector, optional sparse vector, JSON payload."""

    id: str
    payload: dict[str, Any]
    dense: list[float] | None = None
    sparse: SparseVector | None = None
    # The record read in its thread's context (the memories just before it, then itself): a second
    # dense + sparse pair, kept only by collections whose spec has ``context``.
    context_dense: list[float] | None = None
    context_sparse: SparseVector | None = None


@dataclass
class ScoredPoint:
    """A search hit: id, raw engine score (cosine for dense, BM25 dot for sparse) and payload."""

    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class PayloadFilter:
    """A conjunction of payload conditions, translated by each adapter.

    ``equals``: field == value; ``any_of``: field in values; ``ranges``: field within
    [gte, lte] (numbers; None = open); ``not_equals``: field != value; ``also_any``: more
    (field, values) conditions, each of which holds (several on one list field). On a field that
    holds a list, == and "in" hold when an element does.
    """

    equals: dict[str, Any] = field(default_factory=dict)
    any_of: dict[str, Sequence[Any]] = field(default_factory=dict)
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    not_equals: dict[str, Any] = field(default_factory=dict)
    also_any: tuple[tuple[str, Sequence[Any]], ...] = ()


@dataclass(frozen=True)
class CollectionSpec:
    """A collection: dense dimension, whether it has a sparse vector, payload fields to index.

    ``context`` adds a second dense + sparse pair for the record read in context (VectorPoint);
    a store that cannot keep it reports ``has_context(name) == False`` and search skips it.
    """

    name: str
    dense_dim: int
    sparse: bool = True
    context: bool = False
    keyword_indexes: tuple[str, ...] = ()
    float_indexes: tuple[str, ...] = ()
    # Keyword fields (of keyword_indexes) whose values are mostly distinct (hashes, keys, threads):
    # an engine that can keeps their index on disk, read through the page cache, instead of in
    # memory (qdrant-edge: ~70 MB for three such fields at 100k memories).
    disk_indexes: tuple[str, ...] = ()


@runtime_checkable
class VectorStore(Protocol):
    """Records and their vectors (source of truth for memory records)."""

    def ensure_collection(self, spec: CollectionSpec) -> None: ...

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None: ...

    def overwrite_payload(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Replace the payload of existing points, keeping their vectors (metadata-only changes)."""
        ...

    def retrieve(self, collection: str, ids: Sequence[str], *, with_dense: bool = False) -> list[VectorPoint]:
        """Points by id with payload; unknown ids are left out. ``with_dense`` also fills ``dense``
        (as stored: cosine collections keep it normalised; None for a point without one)."""
        ...

    def delete(self, collection: str, ids: Sequence[str]) -> None: ...

    def search_dense(
        self,
        collection: str,
        vector: Sequence[float],
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        context: bool = False,
        payload: bool = True,
    ) -> list[ScoredPoint]:
        """Nearest by cosine; ``context`` searches the context vectors (empty when there are none);
        without ``payload`` the hits carry ``{}`` (read them by id: cheaper for many lists)."""
        ...

    def search_sparse(
        self,
        collection: str,
        vector: SparseVector,
        limit: int,
        flt: PayloadFilter | None = None,
        *,
        context: bool = False,
        payload: bool = True,
    ) -> list[ScoredPoint]: ...

    def has_context(self, collection: str) -> bool:
        """Whether the open collection keeps context vectors (older ones may not)."""
        ...

    def context_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        """Which of these points have a context pair (normalization finds memories of a thread
        that lost theirs); empty for a collection without context vectors."""
        ...

    def scroll(
        self, collection: str, flt: PayloadFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[VectorPoint], str | None]:
        """A page of points (payload only) and the offset of the next page (None at the end)."""
        ...

    def latest(
        self, collection: str, flt: PayloadFilter | None, order_key: str, limit: int
    ) -> list[VectorPoint]:
        """Up to ``limit`` points (payload only) with the highest ``order_key`` (an indexed number),
        highest first."""
        ...

    def count(self, collection: str, flt: PayloadFilter | None = None) -> int: ...

    def optimize(self, collection: str) -> bool:
        """Build indexes (HNSW). Slow: call it from background work only."""
        ...

    def size_bytes(self) -> int: ...

    def upkeep(self) -> bool:
        """Background upkeep after writes, called by housekeeping every few seconds (cheap when
        nothing was written): an embedded engine persists what its log holds and gives back
        memory it holds in this process and does not read on the search path. Returns whether
        writes went quiet since the last call: the time to give back other memory too (always
        False for a server: the data lives there)."""
        ...

    def checkpoint(self) -> None:
        """Make every write so far whole in the store's files (an embedded engine flushes its
        segments and syncs its log), so that a copy of them taken before the next write opens as
        this state (an online backup, with writes paused). Nothing for a server."""
        ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- graph


@dataclass(frozen=True)
class GraphNode:
    """A node: label (Memory, File, Function, Class...), id, scalar properties."""

    label: str
    id: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphEdge:
    """A directed, typed edge between two nodes, identified by (label, id) at each end."""

    type: str
    source_label: str
    source_id: str
    target_label: str
    target_id: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RelatedEntity:
    """One entity reached by a traversal, with the edge type that reached it and the hop count.

    ``path`` holds the relationship types of the whole path from the start to the entity, in
    order, one per hop (``len(path) == distance``; its last item is ``relationship``)."""

    id: str
    label: str
    name: str | None
    relationship: str
    direction: Literal["OUTGOING", "INCOMING"]
    distance: int
    properties: dict[str, Any] = field(default_factory=dict)
    path: list[str] = field(default_factory=list)


@runtime_checkable
class GraphStore(Protocol):
    """Relationships, traceability and the code graph (source of truth for edges)."""

    def upsert_nodes(self, nodes: Sequence[GraphNode]) -> None: ...

    def upsert_edges(self, edges: Sequence[GraphEdge]) -> None: ...

    def delete_node(self, label: str, node_id: str) -> int:
        """Delete a node and its edges; returns the number of edges removed."""
        ...

    def delete_nodes(self, label: str, node_ids: Sequence[str]) -> int:
        """Delete many nodes of one label and their edges; returns the number of edges removed."""
        ...

    def delete_edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        """Delete every edge touching a node (the node stays); returns the removed edges."""
        ...

    def edges_of(self, label: str, node_id: str) -> list[GraphEdge]:
        """Every edge touching a node, both directions."""
        ...

    def edges_between(self, other_label: str, nodes: Mapping[str, Sequence[str]]) -> list[GraphEdge]:
        """Edges, either direction, between the given nodes (``{label: ids}``) and any node of
        ``other_label``, in one call (the indexer: which memories cite the code units it is
        replacing or removing). Labels never written give nothing."""
        ...

    def related(
        self,
        label: str,
        node_id: str,
        rel_types: Sequence[str] | None = None,
        direction: Literal["OUTGOING", "INCOMING", "BOTH"] = "BOTH",
        depth: int = 1,
        limit: int = 200,
    ) -> list[RelatedEntity]: ...

    def find_nodes(self, labels: Sequence[str], key: str, limit: int = 10) -> list[GraphNode]:
        """Nodes of ``labels`` whose ``id`` is ``key``; when none is, those whose ``name`` is
        (get_related resolving a code unit by qualified name). Labels never written give nothing."""
        ...

    def in_degree(self, label: str, ids: Sequence[str], exclude_types: Sequence[str] = ()) -> dict[str, int]:
        """Incoming edges per node of ``label`` among ``ids``, not counting ``exclude_types``
        (ranking: how often a memory is cited). Ids with none may be left out."""
        ...

    def neighbours(self, label: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids``, the distinct nodes of the same ``label`` linked to it by an edge of
        any type, in either direction (ranking and graph expansion)."""
        ...

    def count_edges_by_type(self) -> dict[str, int]: ...

    def count_nodes_by_label(self) -> dict[str, int]: ...

    def node_ids(self, label: str) -> list[str]:
        """The id of every node of ``label`` (none for a label never written): normalization
        looks for Memory nodes without a record and code nodes whose file left the index."""
        ...

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        *,
        read_only: bool = True,
        row_limit: int = 1000,
    ) -> list[dict[str, Any]]:
        """Run a user's Cypher (graph_query); rows as plain JSON-able dicts. Write clauses are refused
        when read_only. Services never call it: each engine has its own dialect, so what a service
        reads is a method above, implemented per adapter."""
        ...

    def size_bytes(self) -> int: ...

    def checkpoint(self) -> None:
        """Write everything the engine's log holds into its database file (an online backup copies
        the files next, with writes paused). Nothing for a server."""
        ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- cache / queue / audit


@runtime_checkable
class Cache(Protocol):
    """A key/value cache with optional TTL (embeddings by content hash, search results)."""

    def get(self, namespace: str, key: str) -> bytes | None: ...

    def get_many(self, namespace: str, keys: Sequence[str]) -> dict[str, bytes]: ...

    def set(self, namespace: str, key: str, value: bytes, ttl_seconds: float | None = None) -> None: ...

    def set_many(self, namespace: str, items: dict[str, bytes], ttl_seconds: float | None = None) -> None: ...

    def delete_namespace(self, namespace: str) -> int: ...

    def incr(self, namespace: str, key: str) -> int:
        """Add one to a counter (atomically, for every process sharing the cache) and return it;
        a missing counter starts from 0. ``get`` reads it as ASCII digits."""
        ...

    def stats(self) -> dict[str, float]:
        """hits, misses, hit_rate, entries."""
        ...

    def size_bytes(self) -> int: ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...


@dataclass
class QueueMessage:
    """A queue entry as claimed (or dead): id, topic, JSON payload, failed attempts, last error.

    ``id`` is opaque (a SQLite row id, a Redis stream entry id, as a string): compare it for
    equality and hand it back to ``ack``/``fail``/``replay_dead``; never parse or order by it.
    """

    id: str
    topic: str
    payload: dict[str, Any]
    attempts: int = 0
    last_error: str | None = None


@runtime_checkable
class Queue(Protocol):
    """A durable, at-least-once, consumer-aware queue per topic (the graph-sync outbox).

    A message is *pending* (waiting, possibly in a retry backoff), *inflight* (held by the
    consumer that claimed it, until it acks, fails or releases it) or *dead* (failed
    ``max_attempts`` times; kept for inspection and replay). A consumer is a name chosen by its
    process (``"host:pid"``); several processes may claim from one topic.

    Ordering guarantee (graph sync relies on it: node upserts before the edges that reference
    them, a delete after an upsert). Within a topic:

    * Messages are delivered in enqueue order, head first, to **one consumer at a time**: while
      a consumer holds messages of the topic, ``claim`` by any other consumer returns ``[]``; the
      holder's next claim continues after what it holds.
    * **Head of line**: a message behind the head is never delivered before the head. A failed
      message stays at the head; while it waits out its backoff nothing behind it is delivered;
      once dead it leaves the line and the rest moves on.
    * So a consumer applies a batch in order and, at its first failure, calls ``fail`` for that
      message and ``release`` for the rest, which are then delivered again after it.
    * ``replay_dead`` re-enqueues dead letters at the tail, in their original order, with new ids.

    A consumer that dies holding messages blocks its topic until the hold is older than the
    adapter's visibility timeout; then ``claim`` (or ``reclaim``) returns them to the head, as
    Redis's XAUTOCLAIM does with its min-idle-time. Delivery is at-least-once (a consumer too slow
    or dead before its ack has its messages delivered again), so operations must be idempotent.
    """

    def enqueue(self, topic: str, payloads: Sequence[dict[str, Any]]) -> list[str]:
        """Append messages durably, in order; returns their ids."""
        ...

    def claim(self, topic: str, consumer: str, limit: int = 100) -> list[QueueMessage]:
        """Up to ``limit`` messages from the head of the line for ``consumer``, oldest first
        (``[]`` when another consumer holds the topic or the head is in its retry backoff)."""
        ...

    def ack(self, topic: str, ids: Sequence[str]) -> int:
        """Done: delete the messages (whoever holds them now); returns how many were there."""
        ...

    def fail(self, topic: str, message_id: str, error: str, *, max_attempts: int = 5) -> bool:
        """Record a failed attempt of a held message: back to the head of the line, claimable
        again once its backoff (growing with each attempt) has passed, or dead when this was
        attempt ``max_attempts``. Returns True when it went dead; a message nobody holds is left
        as it is (False)."""
        ...

    def release(self, topic: str, consumer: str) -> int:
        """Give back what ``consumer`` (and only it) holds, untouched, to the head of the line;
        returns how many."""
        ...

    def reclaim(self, topic: str, min_idle_seconds: float | None = None) -> int:
        """Return messages held longer than ``min_idle_seconds`` (default: the visibility
        timeout) by any consumer to the head of the line; returns how many. ``0`` takes back
        every hold: only for a process that knows it is the topic's sole consumer."""
        ...

    def dead(self, topic: str, limit: int = 100) -> list[QueueMessage]:
        """Dead letters, oldest first, with their ids, attempts and last error."""
        ...

    def replay_dead(self, topic: str, ids: Sequence[str] | None = None) -> int:
        """Re-enqueue dead letters (these ids, or all) at the tail with attempts reset; returns
        how many."""
        ...

    def counts(self, topic: str) -> dict[str, int]:
        """``pending`` (waiting, backoff included), ``inflight`` (held) and ``failed`` (dead)."""
        ...

    def health(self) -> ComponentHealth: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class AuditEvent:
    """One mutation: who did what to which entity, when, with what change."""

    operation: str
    entity_type: str
    entity_id: str
    actor: str
    details: dict[str, Any] = field(default_factory=dict)
    timestamp: str | None = None
    seq: int | None = None  # its place in the log (set when read back): newer events have higher

    def __post_init__(self) -> None:
        details = self.details
        if self.seq is None:  # a new event (one read back has its seq): as the rules stand now
            # Secrets never reach the audit: masked, and the event notes how many of which kind.
            details, kinds = scrub_value(details)
            if kinds:
                details = {**details, "redacted": kinds_note(kinds)}
            object.__setattr__(self, "actor", actor.effective(self.actor))  # frozen
        # What a mutation repeats of its input is bounded: the record says what changed, and
        # the memory itself holds the full text (ids, hashes and field names are short anyway).
        object.__setattr__(self, "details", clip_value(details, AUDIT_TEXT_CHARS, items=AUDIT_ITEMS))

    def at(self, timestamp: str) -> AuditEvent:
        """This event with its time set: a copy whose details are not checked again (they were,
        when it was made; ``dataclasses.replace`` would mask and clip them a second time)."""
        event = copy.copy(self)
        object.__setattr__(event, "timestamp", timestamp)  # frozen
        return event


@dataclass(frozen=True)
class AuditQuery:
    """Which audit events to read: every given condition holds (``since``/``until`` are ISO-8601
    UTC timestamps, inclusive); ``before_seq`` pages back from an earlier page's last ``seq``."""

    entity_id: str | None = None
    entity_type: str | None = None
    operation: str | None = None
    actor: str | None = None
    since: str | None = None
    until: str | None = None
    before_seq: int | None = None
    limit: int = 100


@runtime_checkable
class AuditLog(Protocol):
    """Append-only log of every mutation."""

    def append(self, events: Sequence[AuditEvent]) -> None: ...

    def count(self, entity_id: str | None = None) -> int: ...

    def list(self, entity_id: str | None = None, limit: int = 100) -> list[AuditEvent]: ...

    def query(self, q: AuditQuery) -> tuple[builtins.list[AuditEvent], int]:
        """Matching events newest first (at most ``q.limit``, each with its ``seq``), and how many
        match in all (``before_seq`` aside)."""
        ...

    def memory_ids(self) -> set[str]:
        """Every memory the log has an event of, less those a ``record_lost`` event wrote off:
        each should have a record (deleted ones keep theirs)."""
        ...

    def created_with_edges(self) -> builtins.list[tuple[str, dict[str, Any]]]:
        """(memory id, details) of each ``create`` event that lists the memory's edges."""
        ...

    def close(self) -> None: ...


@dataclass
class JournalEntry:
    """A write's intent as the journal kept it: its id and the JSON body the writer gave."""

    id: str
    body: dict[str, Any]


@runtime_checkable
class WriteJournal(Protocol):
    """Intents of writes in flight, durable before any store changes (architecture §4).

    A write records what it will do (``begin``), changes the vector store, then ``commit``s:
    its graph operations go to the outbox, its audit events to the log, and the entry is
    forgotten. Entries left by a crash are replayed at the next start (``pending``), so a
    derived write is never lost between the record and the outbox.
    """

    def begin(self, body: dict[str, Any]) -> str:
        """Keep an intent durably (on disk when this returns); returns its id."""
        ...

    def commit(
        self,
        entry_id: str | None,
        topic: str,
        ops: Sequence[dict[str, Any]],
        audit: Sequence[AuditEvent],
        also: Callable[[], None] | None = None,
        *,
        request_key: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> None:
        """Enqueue ``ops`` on ``topic``, append ``audit``, run ``also`` (local bookkeeping that
        must land with them, such as the code index state or a vote), record ``request_key`` as
        applied with the ``answer`` its tool call gave, and forget the entry (None: there is
        none). One transaction when the queue lives in the journal's file; otherwise the queue
        is written first, so a crash in between enqueues again at replay (operations are
        idempotent)."""
        ...

    def applied(self, request_key: str) -> bool:
        """Whether a write with this key was committed (core/write/request_key.py: a re-send skips it)."""
        ...

    def answer(self, request_key: str) -> dict[str, Any] | None:
        """The answer recorded with an applied key (None: not applied, or recorded without one)."""
        ...

    def pending(self) -> builtins.list[JournalEntry]:
        """Entries not committed (a crash interrupted their write), oldest first."""
        ...

    def discard(self, entry_id: str) -> None:
        """Forget an entry whose write never reached the stores."""
        ...

    def flag(self, name: str) -> bool | None:
        """A durable marker kept beside the journal (None: never set)."""
        ...

    def set_flag(self, name: str, value: bool) -> None:
        """Set a marker durably (on disk when this returns)."""
        ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- code index state


@dataclass
class IndexedFile:
    """What the index knows of one source file: its content hash and the parse it produced.

    ``path`` is the file's key (relative to the project root, or absolute outside it);
    ``data`` is the indexer's FileIndex as JSON, kept so that cross-file names can be resolved
    again when only some files change.
    """

    path: str
    root: str
    language: str
    content_hash: str
    indexed_at: str
    units: int = 0
    parse_errors: int = 0
    data: dict[str, Any] | None = None


@runtime_checkable
class IndexState(Protocol):
    """Per-file bookkeeping of the code index (incremental reindex by content hash)."""

    def get(self, path: str) -> IndexedFile | None: ...

    def list(self, root: str | None = None, *, with_data: bool = False) -> list[IndexedFile]: ...

    def put(self, files: Sequence[IndexedFile]) -> None: ...

    def delete(self, paths: Sequence[str]) -> None: ...

    def totals(self) -> dict[str, Any]:
        """files, languages {name: files}, last_indexed (ISO or None)."""
        ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- embeddings


@runtime_checkable
class Embedder(Protocol):
    """Dense text embeddings. ``ready`` is False when no model could be loaded."""

    @property
    def model_name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def ready(self) -> bool: ...

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the model is loaded or failed; True when usable."""
        ...

    def embed_documents(self, texts: Sequence[str], *, remember: bool = True) -> list[list[float]]:
        """Vectors in input order. ``remember``: look the texts up in the shared cache and keep
        their vectors there; False for texts unlikely to come again (a memory's vectors are
        stored with it), which spares the cache's read and commit."""
        ...

    def embed_query(self, text: str) -> list[float]: ...

    def release_memory(self) -> None:
        """Give back buffers that earlier model runs left (housekeeping calls it once writes went
        quiet: a burst of long texts grows them)."""
        ...

    def health(self) -> ComponentHealth: ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Sparse lexical vectors (BM25); needs no model, so it always works."""

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]: ...

    def encode_query(self, text: str) -> SparseVector: ...


# --------------------------------------------------------------------------- utility votes


@dataclass(frozen=True)
class Vote:
    """One utility vote (seed 002): how useful ``memory_id`` was for ``problem_id``, -1..1."""

    memory_id: str
    problem_id: str
    vote: float
    actor: str
    timestamp: str | None = None


@runtime_checkable
class VoteStore(Protocol):
    """Utility votes, read by every search for its candidates: kept apart from the audit log,
    which stays append-and-list (the audit still records each vote as a mutation)."""

    def add(self, votes: Sequence[Vote]) -> None: ...

    def of(self, memory_ids: Sequence[str], *, latest: int = 500) -> dict[str, builtins.list[float]]:
        """The latest ``latest`` votes per memory, oldest first; memories without votes are left out."""
        ...

    def all_of(self, memory_ids: Sequence[str]) -> builtins.list[Vote]:
        """Every vote on these memories, whole (problem, actor, timestamp), grouped by memory in
        the order asked, each memory's in the order cast (export_memory)."""
        ...

    def close(self) -> None: ...
