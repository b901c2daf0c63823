"""The code index's write path: the same journal-then-apply path as memory writes.

A batch keeps its intent in the write journal (points to delete and upsert, graph operations,
the index-state rows it ends with), changes the code vectors, then commits: graph operations into
the outbox and the state rows in one transaction, so a file's row says "indexed" only once its
graph operations are durable. A crash is settled at the next start (services.write_journal).

Calls and inheritance across files are resolved after the batches of a pass; a pass that dies in
between leaves some unresolved. A ``relink`` marker, kept in the journal for the length of a
pass, tells the next pass to resolve every file again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from memory_service.core.code import records as cr
from memory_service.core.errors import MemoryServiceError
from memory_service.core.ports import VectorPoint
from memory_service.core.records import GRAPH_SYNC_TOPIC, Stores
from memory_service.core.write.graph_sync import GraphSync
from memory_service.core.write.journal import RELINK, JournalReplay, crash_point

logger = logging.getLogger(__name__)


class IndexWrites:
    def __init__(self, stores: Stores, sync: GraphSync | None) -> None:
        self._stores = stores
        self._sync = sync

    def apply(
        self,
        body: dict[str, Any],
        deletes: dict[str, list[str]],
        upserts: dict[str, list[VectorPoint]],
        also: Callable[[], None] | None,
        *,
        journaled: bool = True,
    ) -> None:
        """Intent kept, vector points changed, then graph ops + ``also`` (the index state)
        committed together; then drained, so that the graph reads of the next batch see it."""
        journal = self._stores.journal
        entry = journal.begin(body) if journal is not None and journaled else None
        crash_point("index.journaled")
        try:
            for name in cr.CODE_COLLECTIONS:
                if deletes.get(name):
                    self._stores.vectors.delete(name, deletes[name])
                if upserts.get(name):
                    self._stores.vectors.upsert(name, upserts[name])
            crash_point("index.upserted")
            if journal is not None:
                journal.commit(entry, GRAPH_SYNC_TOPIC, body["ops"], [], also=also)
            else:
                self._stores.queue.enqueue(GRAPH_SYNC_TOPIC, body["ops"])
                if also is not None:
                    also()
        except BaseException:
            self._settle(entry)
            raise
        crash_point("index.committed")
        if self._sync is not None:
            self._sync.drain()

    def _settle(self, entry: str | None) -> None:
        """A batch that failed part way (a store down) is settled now, not at the next start,
        where replaying its deletes could undo later batches."""
        journal = self._stores.journal
        if entry is None or journal is None:
            return
        try:
            JournalReplay(self._stores, journal).run(only={entry})
        except MemoryServiceError as exc:
            logger.warning("index write left in the journal for the next start: %s", exc.message)

    def begin_pass(self) -> tuple[str | None, bool]:
        """Mark a pass as running; returns the marker and whether an earlier pass died before
        resolving its links (then every file is resolved again)."""
        journal = self._stores.journal
        if journal is None:
            return None, False
        pending = journal.pending()
        left = {e.id for e in pending if e.body.get("kind") == "code"}
        if left:  # a batch that failed at run time: settled before this pass rewrites its files
            JournalReplay(self._stores, journal).run(only=left)
        earlier = [e for e in pending if e.body.get("kind") == RELINK]
        return journal.begin({"kind": RELINK}), bool(earlier)

    def end_pass(self, marker: str | None, relinked_all: bool) -> None:
        """Links resolved: forget this pass's marker (and an earlier one, when all were resolved)."""
        journal = self._stores.journal
        if journal is None or marker is None:
            return
        if relinked_all:
            for entry in journal.pending():
                if entry.body.get("kind") == RELINK and entry.id != marker:
                    journal.discard(entry.id)
        journal.discard(marker)
