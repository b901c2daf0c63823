"""The one write path for memory records (ROADMAP: audit, outbox and idempotency each have one home).

validate (callers) → embed (dense when the model is loaded, sparse always; plus the thread-context
pair for memories of a session, :mod:`.threads`) → keep the intent in the write journal → upsert
the vector store → commit (graph changes into the durable outbox, audit events, journal entry
forgotten) → acknowledge; then drain the outbox so that the graph is usually current by the time
the caller reads it. A crash anywhere is finished or undone by :meth:`RecordWriter.recover` at
the next start (:mod:`.write_journal`; docs/architecture.md §4).

Idempotent retries: inside a keyed tool call (:mod:`memory_service.core.write.request_key`) each write
takes the request's next write key. The key is recorded as applied in the commit's transaction
(or by the replay that finishes the write), with the tool's answer; a re-send of the call reaches
the same write with the same key, skips it and answers as the first attempt did.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from memory_service.core.context_vectors import ContextPoint
from memory_service.core.errors import MemoryServiceError
from memory_service.core.models import MemoryRecord, content_hash
from memory_service.core.ports import AuditEvent, SparseVector
from memory_service.core.records import (
    GRAPH_SYNC_TOPIC,
    MEMORIES,
    WRITE_GENERATION,
    Stores,
    from_payload,
    to_payload,
)
from memory_service.core.redaction.sanitize import scrub_text, scrub_value
from memory_service.core.write.graph_sync import GraphSync
from memory_service.core.write.journal import (
    JournalReplay,
    Replayed,
    crash_point,
    records_body,
    stamp,
)
from memory_service.core.write.request_key import next_write_key, peek_write_key
from memory_service.core.write.threads import ThreadContext

logger = logging.getLogger(__name__)

A = TypeVar("A", bound=BaseModel)


def answered(answer: A, earlier: dict[str, Any] | None) -> A:
    """The call's answer: its own, or the one recorded by the earlier attempt that made the write
    (what :meth:`RecordWriter.write` returns when a re-send finds the write applied)."""
    return type(answer).model_validate(earlier) if earlier else answer


def scrub_record(record: MemoryRecord) -> None:
    """The last guard of the write path: no secret, lone surrogate or control character is stored,
    whichever service built the record (the services scrub their input first and note it)."""
    content = scrub_text(record.content)[0]
    if content != record.content:
        record.content, record.content_hash = content, content_hash(content)
    if record.title is not None:
        record.title = scrub_text(record.title)[0]
    record.metadata = scrub_value(record.metadata)[0]


# A durable flag (stores.flags): the refresher's last look found no active record without its
# dense vector, and no write of such records began after it.
COMPLETE = "embeddings_complete"


class RecordWriter:
    def __init__(
        self,
        stores: Stores,
        sync: GraphSync,
        *,
        model_wait_seconds: float = 60.0,
        threads: ThreadContext | None = None,
    ) -> None:
        self._stores = stores
        self._sync = sync
        self._model_wait_seconds = model_wait_seconds
        self._threads = threads
        self._unsettled: set[str] = set()  # journal entries a failed write left (retried on drain)
        self._unsettled_lock = threading.Lock()
        # Set while records stored without dense vectors may exist (embedding_refresh.py looks
        # for them only then): after any write without a model, and at start unless the
        # COMPLETE flag says the last look found none and no such write came after it. (That
        # look is an unindexed scan: ~2 s at 100k memories, holding the GIL, so searches stall.)
        self.pending = threading.Event()
        flags = stores.flags
        if flags is None or flags.get(COMPLETE) is not True:
            self.pending.set()
        self._incomplete_lock = threading.Lock()
        self._incomplete_writes = 0  # writes of records without vectors begun, ever (a token)
        self._incomplete_open = 0  # ... and not yet stored

    def embed(self, texts: Sequence[str]) -> list[list[float]] | None:
        """Dense vectors for texts, or None when no model is usable (records then go lexical-only).

        Not kept in the embedding cache: a memory's vectors are stored with it, and its text
        rarely comes again (dedupe skips a repeat before embedding, an edit is a new text); the
        cache's lookup and commit cost a bulk add of 100 about 5 ms."""
        embedder = self._stores.embedder
        if not texts or not embedder.wait_ready(self._model_wait_seconds):
            return None
        return embedder.embed_documents(list(texts), remember=False)

    def write(
        self,
        records: Sequence[MemoryRecord],
        *,
        graph_ops: list[dict[str, Any]] | None = None,
        audit: Sequence[AuditEvent] = (),
        reembed: bool = True,
        vectors: list[list[float]] | None = None,
        also: Callable[[], None] | None = None,
        answer: BaseModel | None = None,
    ) -> dict[str, Any] | None:
        """Persist records (re-embedding them unless told otherwise), queue graph ops, audit, and
        run ``also`` (bookkeeping in the local file, such as a vote: in the commit's transaction).

        In a keyed tool call the write takes the request's next write key. A key applied already
        (a re-send after this write landed) skips the whole write and returns the answer recorded
        with it ({} when none); otherwise the key and ``answer`` are recorded with the commit and
        None is returned (see :func:`answered`).
        """
        journal = self._stores.journal
        key = next_write_key() if journal is not None else None
        if journal is not None and key is not None and journal.applied(key):
            logger.info("write %s applied already (a re-sent call): skipped", key)
            return journal.answer(key) or {}
        for record in records:
            scrub_record(record)
        reply = answer.model_dump(mode="json") if answer is not None and key is not None else None
        if reply is not None:  # kept in local.sqlite3 for a re-send: no secret it may quote
            reply = scrub_value(reply)[0]
        # Graph ops carry titles and edge properties (a supersede's rationale): masked like records.
        ops, events = scrub_value(graph_ops or [])[0], stamp(tuple(audit))
        points: list[ContextPoint] = []
        if records:
            texts = [r.embedding_text() for r in records]
            dense = vectors if vectors is not None else (self.embed(texts) if reembed else None)
            sparse = self._stores.sparse.encode_documents(texts) if reembed else [None] * len(records)
            points = []
            for i, record in enumerate(records):
                if reembed:
                    record.embedding_pending = dense is None
                    record.embedding_model = None if dense is None else self._stores.embedder.model_name
                points.append(
                    ContextPoint(
                        id=record.id,
                        payload=to_payload(record),
                        dense=dense[i] if dense is not None else None,
                        sparse=sparse[i],
                    )
                )
            if reembed:
                self._add_context(records, texts, points)
        entry = (
            journal.begin(
                records_body(
                    list(records), points if reembed else None, ops, events, request_key=key, answer=reply
                )
            )
            if (journal is not None and records)
            else None
        )
        crash_point("write.journaled")
        incomplete = any(r.embedding_pending for r in records)
        try:
            if incomplete:
                self._begin_incomplete()
            if records and reembed:
                self._stores.vectors.upsert(MEMORIES, points)
            elif records:
                self._stores.vectors.overwrite_payload(MEMORIES, points)
            crash_point("write.upserted")
            self._commit(entry, ops, events, also, key, reply)
        except BaseException:
            if entry is not None:  # settled (finished or dropped) on the next drain, or at start
                with self._unsettled_lock:
                    self._unsettled.add(entry)
            raise
        finally:
            if incomplete:
                # Once stored (a refresher looking before then would miss them), and before the
                # write stops counting as in flight, so mark_complete sees one or the other.
                self.pending.set()
                with self._incomplete_lock:
                    self._incomplete_open -= 1
        crash_point("write.committed")
        self._bump_generation()
        self.drain_quietly()
        return None

    def _begin_incomplete(self) -> None:
        """A write of records without dense vectors begins: the COMPLETE flag goes first, on
        disk, so a start after a crash looks for them again."""
        with self._incomplete_lock:
            self._incomplete_writes += 1
            self._incomplete_open += 1
            flags = self._stores.flags
            if flags is not None:
                flags.set(COMPLETE, False)

    def incomplete_token(self) -> int:
        """Taken by the refresher before it looks for records without vectors."""
        with self._incomplete_lock:
            return self._incomplete_writes

    def mark_complete(self, token: int) -> bool:
        """The refresher looked (after taking ``token``) and found no record without vectors:
        remember it on disk, unless such a write began since the token or is still in flight
        (its records may have landed after the look). Returns whether the flag was set."""
        with self._incomplete_lock:
            flags = self._stores.flags
            if flags is None or token != self._incomplete_writes or self._incomplete_open:
                return False
            if self.pending.is_set():
                return False
            if flags.get(COMPLETE) is not True:
                flags.set(COMPLETE, True)
            return True

    def replayed(self, model: type[A]) -> A | None:
        """:meth:`answered_before` for a write that may be followed by others in the same call
        (an add inside memory_supersede): when the re-send finds it applied, its write key is used
        up as the write itself would have, so the later writes keep their keys."""
        done = self.answered_before(model)
        if done is not None:
            next_write_key()
        return done

    def answered_before(self, model: type[A], *, ahead: int = 0) -> A | None:
        """In a keyed call: the answer recorded by this request's next write (``ahead`` writes
        later) when a re-send finds that write applied, else None. For a tool whose re-send could
        not reach its write (the version checked or the record deleted by the first attempt):
        asked first, and the call then ends with this answer."""
        journal, key = self._stores.journal, peek_write_key(ahead)
        recorded = journal.answer(key) if journal is not None and key is not None else None
        return model.model_validate(recorded) if recorded is not None else None

    def _commit(
        self,
        entry: str | None,
        ops: list[dict[str, Any]],
        events: list[AuditEvent],
        also: Callable[[], None] | None,
        key: str | None,
        reply: dict[str, Any] | None,
    ) -> None:
        """Outbox + audit + ``also`` + the request key + forgetting the intent: one transaction
        on the embedded queue."""
        if self._stores.journal is not None:
            self._stores.journal.commit(
                entry, GRAPH_SYNC_TOPIC, ops, events, also, request_key=key, answer=reply
            )
            return
        if also is not None:
            also()
        self._sync.enqueue(ops)
        if events:
            self._stores.audit.append(events)

    def recover(self) -> Replayed:
        """At start, before serving: finish the writes a crash interrupted (their graph ops and
        audit for records that reached the vector store; context pairs written again), drop
        those that never reached it (they were never acknowledged)."""
        if self._stores.journal is None:
            return Replayed()
        done = JournalReplay(self._stores, self._stores.journal).run()
        self._rewrite(done.rewrite)
        if done.finished or done.dropped:
            logger.warning(
                "write journal: finished %d interrupted write(s), dropped %d that never reached the "
                "vector store (%d record(s) of partly written batches)",
                done.finished, done.dropped, done.records_dropped,
            )  # fmt: skip
        return done

    def _rewrite(self, ids: list[str]) -> None:
        """Write records again as they are, for the context pair a crash kept from them."""
        if ids:
            found = self._stores.vectors.retrieve(MEMORIES, ids)
            self.write([from_payload(p.payload) for p in found])

    def _settle_failed(self) -> None:
        """Entries of writes that failed at run time (a store was down): settle them now."""
        with self._unsettled_lock:
            todo, self._unsettled = self._unsettled, set()
        if not todo or self._stores.journal is None:
            return
        try:
            done = JournalReplay(self._stores, self._stores.journal).run(only=todo)
        except MemoryServiceError as exc:
            with self._unsettled_lock:
                self._unsettled |= todo
            logger.warning("write journal: %d entr(ies) left for later: %s", len(todo), exc.message)
            return
        if done.rewrite:  # the context pair missing: normalization writes it (a thread's memories)
            logger.warning("write journal: %d memory(ies) without their context pair", len(done.rewrite))

    def _bump_generation(self) -> None:
        """Invalidate cached search results; a cache that fails leaves them to expire (TTL)."""
        try:
            self._stores.cache.incr(*WRITE_GENERATION)
        except MemoryServiceError as exc:
            logger.warning("search cache not invalidated: %s", exc.message)

    def _add_context(
        self, records: Sequence[MemoryRecord], texts: Sequence[str], points: list[ContextPoint]
    ) -> None:
        """Give memories of a thread that have earlier turns their context vectors. A thread's
        first memory gets none: its context is itself, which search reads from its own vectors
        (ranker._context_views), so a copy would only cost a write and the sibling's storage."""
        if self._threads is None:
            return
        contexts = self._threads.texts(records)
        fresh = [i for i, c in enumerate(contexts) if c is not None and c != texts[i]]
        if not fresh:
            return
        fresh_texts = [contexts[i] or "" for i in fresh]
        have_dense = any(p.dense is not None for p in points)
        dense = self.embed(fresh_texts) if have_dense else None
        sparse: list[SparseVector] = self._stores.sparse.encode_documents(fresh_texts)
        for j, i in enumerate(fresh):
            point = points[i]
            point.context_dense = dense[j] if dense is not None and point.dense else None
            point.context_sparse = sparse[j]

    def drain_quietly(self) -> None:
        """Apply queued graph changes now; failures stay queued and are retried later."""
        if self._unsettled:
            self._settle_failed()
        try:
            self._sync.drain()
        except MemoryServiceError as exc:  # the graph being down must not fail an acknowledged write
            logger.warning("graph sync deferred: %s", exc.message)
