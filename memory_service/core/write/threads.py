"""Thread context: a memory written in a session is also indexed as read in its conversation.

A turn such as "Melanie: running, reading, or my violin" answers a question asked one turn
earlier ("what do you do to destress?"); on its own it shares no word with "how does Melanie
destress?". Memories that carry ``metadata.session_id`` form a thread (per project, in creation
order), and each one gets a second dense + sparse pair embedded from its context: the last
``turns`` memories before it in the thread (each cut to its last ``max_chars`` characters), then
itself. Search fuses both views (:mod:`.ranker`). Measured on LoCoMo's dev split: R@5 0.665 with
the memories alone, 0.744 with two turns of context (bench/locomo_recall.py, docs/search.md).

The first memory of a thread has no earlier turns, so its context is itself and it gets no
context pair. Neither do memories outside threads: search reads both by their own vectors in the
context view, so session turns gain no edge over other memories from being searched twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_service.core.models import MemoryRecord, MemoryStatus
from memory_service.core.ports import PayloadFilter, VectorStore
from memory_service.core.records import MEMORIES, THREAD_FIELD, from_payload, thread_of


class ThreadContext:
    def __init__(self, vectors: VectorStore, *, turns: int, max_chars: int) -> None:
        self._vectors = vectors
        self._turns = turns
        self._max_chars = max_chars

    def texts(self, records: Sequence[MemoryRecord]) -> list[str | None]:
        """For each record, the text to embed as its context, or None when it is in no thread.

        Earlier memories come from the store (one indexed query per threaded record) and from
        the same batch, so a bulk add of a whole conversation reads each turn after the ones
        before it.
        """
        out: list[str | None] = []
        threads = [thread_of(r) if self._turns > 0 else None for r in records]
        for position, (record, thread) in enumerate(zip(records, threads, strict=True)):
            if thread is None:
                out.append(None)
                continue
            batch = [  # earlier in the batch: by creation time, then by batch order
                (r.created_at.timestamp(), i, r)
                for i, r in enumerate(records)
                if (r.created_at, i) < (record.created_at, position)
                and threads[i] == thread
                and r.scope.project == record.scope.project
            ]
            batch_ids = {r.id for _, _, r in batch} | {record.id}
            stored = [
                (r.created_at.timestamp(), -1, r)
                for r in self._before(thread, record)
                if r.id not in batch_ids
            ]
            earlier = [r for _, _, r in sorted(stored + batch, key=lambda t: (t[0], t[1]))][-self._turns :]
            parts = [self._cut(r.content) for r in earlier]
            out.append("\n".join([*parts, record.embedding_text()]))
        return out

    def _before(self, thread: str, record: MemoryRecord) -> list[MemoryRecord]:
        flt = PayloadFilter(
            equals={
                THREAD_FIELD: thread,
                "project": record.scope.project,
                "status": MemoryStatus.ACTIVE.value,
            },
            ranges={"created_at_ts": (None, record.created_at.timestamp())},
        )
        points = self._vectors.latest(MEMORIES, flt, "created_at_ts", self._turns + 1)
        return [from_payload(p.payload) for p in points if p.id != record.id]

    def _cut(self, text: str) -> str:
        """The end of an earlier memory: a question is usually its last sentence."""
        text = text.strip()
        return text if len(text) <= self._max_chars else text[-self._max_chars :]
