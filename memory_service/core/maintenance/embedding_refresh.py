"""Give dense vectors to memories stored while no embedding model was loaded.

Such records are found by lexical search only; once a model is ready, housekeeping embeds them
in small batches (off the request path) and they become visible to semantic search as well.
Each batch is re-read under the records' write locks (the ones memory_update and memory_delete
hold), so a refresh never writes back an older copy over an update, or revives a deleted memory.
"""

from __future__ import annotations

from memory_service.core.ports import PayloadFilter
from memory_service.core.records import MEMORIES, Stores, from_payload
from memory_service.core.write.locks import KeyedLocks
from memory_service.core.write.writer import RecordWriter

PENDING = PayloadFilter(equals={"status": "active", "embedding_pending": True})


class EmbeddingRefresher:
    def __init__(self, stores: Stores, writer: RecordWriter, locks: KeyedLocks) -> None:
        self._stores = stores
        self._writer = writer
        self._locks = locks

    def run(self, batch: int = 100) -> int:
        """Embed up to ``batch`` pending records; returns how many were embedded."""
        if not self._stores.embedder.ready or not self._writer.pending.is_set():
            return 0  # no write since the last look left a record without vectors
        # Cleared before looking: a pending write landing meanwhile sets it again. (The field is
        # not indexed: at 100k memories the scan took 600 ms, every tick, blocking searches.)
        token = self._writer.incomplete_token()
        self._writer.pending.clear()
        points, _ = self._stores.vectors.scroll(MEMORIES, PENDING, limit=batch)
        ids = [p.id for p in points]
        if not ids:
            self._writer.mark_complete(token)  # the next start need not look again
            return 0
        self._writer.pending.set()  # this batch may not be all of them: look again next tick
        with self._locks.hold(ids):
            current = self._stores.vectors.retrieve(MEMORIES, ids)  # changed since the scroll?
            records = [
                from_payload(p.payload)
                for p in current
                if p.payload.get("status") == "active" and p.payload.get("embedding_pending")
            ]
            if records:
                self._writer.write(records)
        return len(records)
