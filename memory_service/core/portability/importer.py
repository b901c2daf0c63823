"""import_memory's writing side: a validated file's memories, edges and votes into the stores.

Records go through the one write path (RecordWriter.write) keeping their ids, versions, timestamps
and actor; the file's vectors are reused when its model and dimension are ours. Graph edges are
queued after every record (an overwrite first drops the memory's old edges, so an edge written
for an earlier batch must not be dropped by a later one). Conflict modes on an existing id:

* ``skip``: the existing memory, its edges and votes stay as they are.
* ``overwrite``: the file's record replaces it, and its edges replace the existing ones.
* ``merge``: the higher version's content wins (ours on a tie); metadata, tags, edges and votes
  are unioned (on a key both have, the winner's value); a merge that adds nothing leaves the
  record alone (counted as skipped), otherwise its version is one above both.

Votes are added only when the store does not hold the same vote already (memory, problem, value,
actor, timestamp), so importing a file twice never counts a vote twice.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from memory_service.core.audit_event import audit_event
from memory_service.core.memory.service import MemoryService, memory_node
from memory_service.core.models import MemoryRecord, utcnow
from memory_service.core.portability.format import MemoryLine, ValidatedFile
from memory_service.core.portability.schemas import ConflictMode, ImportMemoryOutput
from memory_service.core.ports import GraphEdge, Vote
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores, from_payload, thread_of
from memory_service.core.write.graph_sync import op_delete_edges_of, op_upsert_edges, op_upsert_nodes
from memory_service.core.write.writer import RecordWriter

BATCH = 256
EDGE_BATCH = 2000
Outcome = Literal["created", "updated", "merged", "skipped"]
Progress = Callable[[int, int], None]


@dataclass
class _Plan:
    line: MemoryLine
    outcome: Outcome
    record: MemoryRecord | None = None  # what to write (None: nothing)
    vector: list[float] | None = None  # the file's, when it can be reused
    payload_only: bool = False  # the stored vectors still fit (a merge that kept our text)


@dataclass
class _Tally:
    counts: Counter[str] = field(default_factory=Counter)
    edge_ids: set[str] = field(default_factory=set)  # memories whose edges are imported


class Importer:
    def __init__(self, stores: Stores, writer: RecordWriter, memory: MemoryService, actor: str) -> None:
        self._stores = stores
        self._writer = writer
        self._memory = memory
        self._actor = actor

    def run(
        self,
        file: ValidatedFile,
        mode: ConflictMode,
        *,
        dry_run: bool,
        source: str,
        progress: Progress | None,
    ) -> ImportMemoryOutput:
        embedder = self._stores.embedder
        reuse = file.header.model == embedder.model_name and file.header.dim == embedder.dim
        tally = _Tally()
        done = 0
        for batch in _batches(_in_creation_order(file), BATCH):
            ids = [line.memory.id for line in batch]
            with self._memory.writing(*[(mid, "memory_id") for mid in ids]):
                found = self._stores.vectors.retrieve(MEMORIES, ids)
                existing = {p.id: from_payload(p.payload) for p in found}
                plans = [_plan(line, existing.get(line.memory.id), mode, reuse) for line in batch]
                for plan in plans:
                    tally.counts[plan.outcome] += 1
                    if plan.record is not None and not plan.payload_only:
                        tally.counts["reused" if plan.vector is not None else "reembedded"] += 1
                    if plan.record is not None or mode == "merge":
                        tally.edge_ids.add(plan.line.memory.id)
                votes = self._new_votes([p.line for p in plans if p.line.memory.id in tally.edge_ids])
                tally.counts["votes"] += len(votes)
                if not dry_run:
                    self._write(plans, mode, source)
                    if votes:
                        self._stores.votes.add(votes)
            done += len(batch)
            if progress is not None:
                progress(done, file.lines)
        tally.counts["edges"] = self._edges(file, tally.edge_ids, dry_run=dry_run)
        if progress is not None and not file.lines:
            progress(0, 0)
        c = tally.counts
        return ImportMemoryOutput(
            imported=c["created"],
            skipped=c["skipped"],
            updated=c["updated"],
            merged=c["merged"],
            dry_run=dry_run,
            relationships_imported=c["edges"],
            votes_imported=c["votes"],
            reembedded=c["reembedded"],
            vectors_reused=c["reused"],
            format_version=file.header.format_version,
        )

    def _write(self, plans: list[_Plan], mode: ConflictMode, source: str) -> None:
        written = [p for p in plans if p.record is not None]
        if not written:
            return
        audit = {
            p.line.memory.id: audit_event(
                "import",
                "memory",
                p.line.memory.id,
                self._actor,
                {
                    "mode": mode,
                    "outcome": p.outcome,
                    "version": p.record.version if p.record else None,
                    "content_hash": p.record.content_hash if p.record else None,
                    "source": source,
                },
            )
            for p in written
        }
        reused = [p for p in written if p.vector is not None]
        fresh = [p for p in written if p.vector is None and not p.payload_only]
        kept = [p for p in written if p.payload_only]
        ops = [op_delete_edges_of(MEMORY_LABEL, p.line.memory.id) for p in written if p.outcome == "updated"]
        ops.append(op_upsert_nodes([memory_node(p.record) for p in written if p.record is not None]))
        for group, kwargs in ((reused, "vectors"), (fresh, "embed"), (kept, "keep")):
            if not group:
                continue
            records = [p.record for p in group if p.record is not None]
            self._writer.write(
                records,
                audit=[audit[r.id] for r in records],
                vectors=[p.vector for p in group if p.vector is not None] if kwargs == "vectors" else None,
                reembed=kwargs != "keep",
            )
        self._writer.write([], graph_ops=ops)

    def _new_votes(self, lines: list[MemoryLine]) -> list[Vote]:
        """The file's votes the store does not hold yet (a re-import adds none)."""
        held = Counter(self._stores.votes.all_of([line.memory.id for line in lines]))
        out = []
        for line in lines:
            for item in line.votes:
                vote = item.to_vote(line.memory.id)
                if held[vote] > 0:
                    held[vote] -= 1
                else:
                    out.append(vote)
        return out

    def _edges(self, file: ValidatedFile, edge_ids: set[str], *, dry_run: bool) -> int:
        """Queue the edges of the file that touch a memory written (or merged) by this import."""
        count = 0
        chunk: list[GraphEdge] = []
        for line in _read(file):
            for rel in line.relationships:
                ends = {i for label, i in rel.ends() if label == MEMORY_LABEL}
                if ends & edge_ids:
                    chunk.append(rel.edge())
            if len(chunk) >= EDGE_BATCH:
                count += self._flush(chunk, dry_run)
                chunk = []
        return count + self._flush(chunk, dry_run)

    def _flush(self, edges: list[GraphEdge], dry_run: bool) -> int:
        if edges and not dry_run:
            self._writer.write([], graph_ops=[op_upsert_edges(edges)])
        return len(edges)


def _plan(line: MemoryLine, existing: MemoryRecord | None, mode: ConflictMode, reuse: bool) -> _Plan:
    incoming = line.memory
    vector = line.embedding if reuse else None
    if existing is None:
        return _Plan(line, "created", incoming.model_copy(deep=True), vector)
    if mode == "skip":
        return _Plan(line, "skipped")
    if mode == "overwrite":
        return _Plan(line, "updated", incoming.model_copy(deep=True), vector)
    merged = merge_records(existing, incoming)
    if merged.model_dump() == existing.model_dump():
        return _Plan(line, "skipped")
    if vector is not None and merged.embedding_text() == incoming.embedding_text():
        return _Plan(line, "merged", merged, vector)
    same_text = merged.embedding_text() == existing.embedding_text()
    if same_text and thread_of(merged) == thread_of(existing) and not existing.embedding_pending:
        merged.embedding_model, merged.embedding_pending = existing.embedding_model, False
        return _Plan(line, "merged", merged, payload_only=True)
    return _Plan(line, "merged", merged)


def merge_records(existing: MemoryRecord, incoming: MemoryRecord) -> MemoryRecord:
    """The higher version's record (ours on a tie), with the other's metadata keys and tags added."""
    winner, other = (incoming, existing) if incoming.version > existing.version else (existing, incoming)
    merged = winner.model_copy(deep=True)
    merged.metadata = {**other.metadata, **winner.metadata}
    merged.tags = list(dict.fromkeys([*winner.tags, *other.tags]))
    if isinstance(merged.metadata.get("tags"), list):
        merged.metadata["tags"] = list(merged.tags)
    merged.created_at = min(existing.created_at, incoming.created_at)
    if merged.model_dump() != winner.model_dump():
        merged.version = max(existing.version, incoming.version) + 1
        merged.updated_at = max(utcnow(), existing.updated_at, incoming.updated_at)
    return merged


def _read(file: ValidatedFile) -> Iterator[MemoryLine]:
    with file.copy_path.open("rb") as stream:
        for raw in stream:
            yield MemoryLine.model_validate_json(raw)


def _in_creation_order(file: ValidatedFile) -> Iterator[MemoryLine]:
    """The file's memories oldest first (then by id), read by offset: a memory of a thread gets its
    context vectors from the turns before it, which must be stored (or in its batch) by then, as
    they were when the memories were first written."""
    order: list[tuple[datetime, str, int]] = []
    with file.copy_path.open("rb") as stream:
        offset = 0
        for raw in stream:
            memory = json.loads(raw)["memory"]
            order.append((datetime.fromisoformat(memory["created_at"]), memory["id"], offset))
            offset += len(raw)
        for _, _, at in sorted(order):
            stream.seek(at)
            yield MemoryLine.model_validate_json(stream.readline())


def _batches(lines: Iterator[MemoryLine], size: int) -> Iterator[list[MemoryLine]]:
    batch: list[MemoryLine] = []
    for line in lines:
        batch.append(line)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
