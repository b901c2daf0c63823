"""Housekeeping's embedding refresh never writes back an older copy of a record (issue 8, item 5).

The refresher finds records stored without a model and writes them back with vectors. If it
wrote what it had read while a memory_update or memory_delete ran in between, it would undo the
update or bring the deleted memory back. The race is made deterministic: the test holds the
record's write lock, lets the refresher read and then wait on that lock, changes the record, and
only then lets the refresher go on.
"""

from __future__ import annotations

import threading
import time

from memory_service.app import Services
from memory_service.core.maintenance.embedding_refresh import EmbeddingRefresher
from memory_service.core.memory.schemas import MemoryAddInput, MemoryGetInput, MemoryUpdateInput
from memory_service.core.ports import VectorPoint
from memory_service.core.records import MEMORIES, to_payload


def _pending_memory(services: Services, content: str) -> str:
    """A memory as if stored while no model was loaded: flagged for the refresher."""
    added = services.memory.add(MemoryAddInput(type="design", content=content))
    record = services.memory.load(added.memory_id)
    record.embedding_pending = True
    services.stores.vectors.overwrite_payload(
        MEMORIES, [VectorPoint(id=record.id, payload=to_payload(record))]
    )
    services.memory._writer.pending.set()  # as the writer does after such a write
    return record.id


def _refresh_behind_lock(services: Services, memory_id: str, change: object) -> int:
    """Run the refresher while the record's lock is held; ``change()`` runs once it waits."""
    refresher = EmbeddingRefresher(services.stores, services.memory._writer, services.memory.locks)
    result: list[int] = []
    with services.memory.locks.hold([memory_id]):
        worker = threading.Thread(target=lambda: result.append(refresher.run()))
        worker.start()
        deadline = time.monotonic() + 30
        while services.memory.locks._entries[memory_id].users < 2:  # the refresher waits on it
            assert time.monotonic() < deadline and worker.is_alive(), "the refresher never waited"
            time.sleep(0.005)
        change()  # type: ignore[operator]
    worker.join(30)
    return result[0]


def test_refresh_does_not_revive_a_memory_deleted_meanwhile(services: Services) -> None:
    memory_id = _pending_memory(services, "Deleted while housekeeping embeds it.")
    embedded = _refresh_behind_lock(services, memory_id, lambda: services.memory.delete(memory_id))
    assert embedded == 0
    stored = services.stores.vectors.retrieve(MEMORIES, [memory_id])[0].payload
    assert stored["status"] == "deleted"


def test_refresh_does_not_undo_an_update_made_meanwhile(services: Services) -> None:
    memory_id = _pending_memory(services, "Updated while housekeeping embeds it.")

    def update() -> None:
        services.memory.update(MemoryUpdateInput(memory_id=memory_id, metadata={"owner": "team-a"}))

    # The update re-embedded the record itself, so the refresher has nothing left to write.
    assert _refresh_behind_lock(services, memory_id, update) == 0
    got = services.memory.get(MemoryGetInput(memory_id=memory_id)).memory
    assert got["metadata"]["owner"] == "team-a" and got["embedding_pending"] is False
