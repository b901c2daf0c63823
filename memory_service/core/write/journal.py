"""Write intents and their replay after a crash (docs/architecture.md §4, "write path").

A write first keeps its intent in the journal (which records at which version, the graph
operations, the audit events; or, for the code indexer, which points, graph operations and
index-state rows), then changes the vector store, then commits: outbox + audit + forgetting the
entry. An entry still there at start is a write a crash interrupted; :class:`JournalReplay`
finishes it for what reached the vector store and drops it for what did not (such a write was
never acknowledged). So no acknowledged write depends on luck for its derived writes. A finished
entry's request key is recorded as applied, so the tool call the crash cut short, re-sent, skips
it; a dropped entry's is not, so the re-send writes it (core/write/request_key.py).

:func:`crash_point` is a test-only fault hook (``MEMORY_TEST_CRASH_AT``), inert unless set.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.context_vectors import ContextPoint
from memory_service.core.models import MemoryRecord
from memory_service.core.ports import AuditEvent, IndexedFile, JournalEntry, WriteJournal
from memory_service.core.records import GRAPH_SYNC_TOPIC, MEMORIES, MEMORY_LABEL, Stores

logger = logging.getLogger(__name__)

# Test-only: "<point>:<n>" makes the process die (os._exit, as kill -9 would: no cleanup, no
# flush) the n-th time it passes <point>. Read once, at import; unset in any real deployment.
CRASH_ENV = "MEMORY_TEST_CRASH_AT"
CRASH_POINTS = (
    "write.journaled",  # the intent is durable; the vector store is untouched
    "write.upserted",  # the records are in the vector store; the outbox and audit are not
    "write.committed",  # outbox, audit and journal are committed; the graph is not drained yet
    "index.journaled",
    "index.upserted",
    "index.committed",
)


def _crash_spec() -> tuple[str, int] | None:
    name, _, count = os.environ.get(CRASH_ENV, "").partition(":")
    return (name, int(count) if count.isdigit() else 1) if name else None


_CRASH = _crash_spec()
_hits: Counter[str] = Counter()
_hits_lock = threading.Lock()


def crash_point(name: str) -> None:
    """Die here when the test hook names this point and this is its n-th pass; else nothing."""
    if _CRASH is None or _CRASH[0] != name:
        return
    with _hits_lock:
        _hits[name] += 1
        hit = _hits[name]
    if hit == _CRASH[1]:
        os._exit(137)


# ------------------------------------------------------------------ entry bodies

RELINK = "relink"  # an index pass is running (services.index_write): not a write, no replay


def stamp(events: list[AuditEvent] | tuple[AuditEvent, ...]) -> list[AuditEvent]:
    """Events with their time fixed now, so a replayed event says when the write happened."""
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    return [e if e.timestamp else e.at(now) for e in events]


def records_body(
    records: list[MemoryRecord],
    points: list[ContextPoint] | None,
    ops: list[dict[str, Any]],
    audit: list[AuditEvent],
    *,
    request_key: str | None = None,
    answer: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A memory write's intent: each record's id, version, content hash and whether it gets a
    thread-context pair (``points`` None: a payload-only rewrite, the pair is left as it is);
    the write's request key and its tool's answer, recorded when the write is finished."""
    context = (
        [bool(p.context_dense or p.context_sparse) for p in points] if points else [False] * len(records)
    )
    body: dict[str, Any] = {
        "kind": "records",
        "records": [
            {"id": r.id, "version": r.version, "hash": r.content_hash, "context": c}
            for r, c in zip(records, context, strict=True)
        ],
        "ops": ops,
        "audit": [_event_json(e) for e in audit],
    }
    if request_key:
        body["request_key"], body["answer"] = request_key, answer
    return body


def code_body(
    ops: list[dict[str, Any]],
    *,
    delete_points: dict[str, list[str]] | None = None,
    upsert_points: dict[str, list[tuple[str, str, int]]] | None = None,
    state_put: list[IndexedFile] | None = None,
    state_delete: list[str] | None = None,
) -> dict[str, Any]:
    """An index write's intent: points to delete, points to upsert as (point id, body hash,
    start line), graph operations, and the index-state rows it ends with."""
    return {
        "kind": "code",
        "ops": ops,
        "delete_points": delete_points or {},
        "upsert_points": {k: [list(p) for p in v] for k, v in (upsert_points or {}).items()},
        "state_put": [asdict(f) for f in state_put or []],
        "state_delete": state_delete or [],
    }


def _event_json(event: AuditEvent) -> dict[str, Any]:
    data = dict(vars(event))  # its details are JSON already (checked when the event was made)
    data.pop("seq", None)
    return data


# ------------------------------------------------------------------ replay


@dataclass
class Replayed:
    """What a replay did: entries finished, entries dropped (never reached the vector store),
    records dropped from partly applied batches, memories to rewrite for their context pair."""

    finished: int = 0
    dropped: int = 0
    records_dropped: int = 0
    rewrite: list[str] = field(default_factory=list)


class JournalReplay:
    """Finishes or drops journal entries; run at start, before serving (nothing else writes)."""

    def __init__(self, stores: Stores, journal: WriteJournal) -> None:
        self._stores = stores
        self._journal = journal

    def run(self, only: set[str] | None = None) -> Replayed:
        """Settle every pending entry (or those of ``only``), oldest first."""
        out = Replayed()
        for entry in self._journal.pending():
            if only is None or entry.id in only:
                self.settle(entry, out)
        return out

    def settle(self, entry: JournalEntry, out: Replayed) -> None:
        body = entry.body
        if body.get("kind") == RELINK:  # not a write: the indexer's next pass reads and clears it
            return
        if body.get("kind") == "code":
            self._settle_code(entry)
            out.finished += 1
        else:
            self._settle_records(entry, out)

    def _settle_records(self, entry: JournalEntry, out: Replayed) -> None:
        wanted = entry.body.get("records", [])
        found = {p.id: p.payload for p in self._stores.vectors.retrieve(MEMORIES, [r["id"] for r in wanted])}
        kept: list[dict[str, Any]] = []
        dropped: set[str] = set()
        for r in wanted:
            payload = found.get(r["id"])
            if (
                payload
                and payload.get("version") == r["version"]
                and payload.get("content_hash") == r["hash"]
            ):
                kept.append(r)
            else:  # never written (or rewritten since by a later write, whose own ops stand)
                dropped.add(r["id"])
        if wanted and not kept:
            self._journal.discard(entry.id)
            out.dropped += 1
            return
        out.records_dropped += len(dropped)
        ops = [o for op in entry.body.get("ops", []) if (o := _without(op, dropped)) is not None]
        audit = [audit_event(**e) for e in entry.body.get("audit", []) if e.get("entity_id") not in dropped]
        with_context = [r["id"] for r in kept if r.get("context")]
        if with_context:
            have = self._stores.vectors.context_ids(MEMORIES, with_context)
            out.rewrite.extend(i for i in with_context if i not in have)
        # Whole: a re-send of that call now skips the write and gets its answer. Partly written
        # (a batch cut short in the vector store): the key stays unrecorded, so a re-send writes
        # the batch again (the same ids) instead of answering with ids that were never stored.
        whole = not dropped
        self._journal.commit(
            entry.id,
            GRAPH_SYNC_TOPIC,
            ops,
            audit,
            request_key=entry.body.get("request_key") if whole else None,
            answer=entry.body.get("answer") if whole else None,
        )
        out.finished += 1

    def _settle_code(self, entry: JournalEntry) -> None:
        """Roll an index write forward: deletes again (idempotent), graph operations queued, the
        state rows written; a file whose new points did not all land keeps its new parse but no
        content hash, so the next index pass redoes it."""
        body, vectors = entry.body, self._stores.vectors
        for collection, ids in body.get("delete_points", {}).items():
            if ids:
                vectors.delete(collection, ids)
        incomplete: set[str] = set()
        for collection, points in body.get("upsert_points", {}).items():
            found = {p.id: p.payload for p in vectors.retrieve(collection, [p[0] for p in points])}
            for pid, body_hash, start in points:
                payload = found.get(pid)
                if not payload or payload.get("body_hash") != body_hash or payload.get("start_line") != start:
                    incomplete.add(str(payload.get("file_path")) if payload else "*")
        rows = [IndexedFile(**row) for row in body.get("state_put", [])]
        if incomplete:  # "*": a point is missing altogether, so no file of the batch is trusted
            rows = [_unhashed(r) if "*" in incomplete or r.path in incomplete else r for r in rows]
        state, gone = self._stores.index_state, list(body.get("state_delete", []))

        def bookkeeping() -> None:
            if rows:
                state.put(rows)
            if gone:
                state.delete(gone)

        self._journal.commit(entry.id, GRAPH_SYNC_TOPIC, body.get("ops", []), [], also=bookkeeping)


def _unhashed(row: IndexedFile) -> IndexedFile:
    """The row with no content hash (in its parse too, which the indexer compares): the next
    index pass parses and stores the file again, knowing what it replaces."""
    data = {**row.data, "content_hash": ""} if row.data is not None else None
    return replace(row, content_hash="", data=data)


def _memory_end(label: str, node_id: str, dropped: set[str]) -> bool:
    return label == MEMORY_LABEL and node_id in dropped


def _without(op: dict[str, Any], dropped: set[str]) -> dict[str, Any] | None:
    """The operation minus what concerns dropped records (None when nothing is left)."""
    if not dropped:
        return op
    kind = op.get("op")
    if kind == "upsert_nodes":
        nodes = [n for n in op["nodes"] if not _memory_end(n["label"], n["id"], dropped)]
        return {**op, "nodes": nodes} if nodes else None
    if kind == "upsert_edges":
        edges = [
            e
            for e in op["edges"]
            if not _memory_end(e["source_label"], e["source_id"], dropped)
            and not _memory_end(e["target_label"], e["target_id"], dropped)
        ]
        return {**op, "edges": edges} if edges else None
    if kind in ("delete_edges_of", "delete_node"):
        return None if _memory_end(op["label"], op["id"], dropped) else op
    if kind == "delete_nodes":
        ids = [i for i in op["ids"] if not _memory_end(op["label"], i, dropped)]
        return {**op, "ids": ids} if ids else None
    return op
