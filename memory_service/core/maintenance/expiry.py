"""The TTL sweep (seed 004 FR-044): soft-delete memories whose TTL has run out, with an audit.

Reads never return an expired memory (core/ttl.py), so the sweep only tidies up: it runs in the
owner's housekeeping thread every ``memory.ttl_sweep_seconds``, each deletion under the memory's own
write lock like any other write, so queries are not held up.
"""

from __future__ import annotations

import logging

from memory_service.core.memory.service import MemoryService
from memory_service.core.models import MemoryStatus, utcnow
from memory_service.core.ports import PayloadFilter, VectorStore
from memory_service.core.records import MEMORIES
from memory_service.core.ttl import EXPIRES_FIELD

logger = logging.getLogger(__name__)
BATCH = 200


class ExpiryService:
    def __init__(self, vectors: VectorStore, memory: MemoryService) -> None:
        self._vectors = vectors
        self._memory = memory

    def due(self) -> list[str]:
        """Ids of active memories expired by now."""
        flt = PayloadFilter(
            equals={"status": MemoryStatus.ACTIVE.value}, ranges={EXPIRES_FIELD: (None, utcnow().timestamp())}
        )
        ids: list[str] = []
        offset = None
        while True:
            points, offset = self._vectors.scroll(MEMORIES, flt, limit=BATCH, offset=offset)
            ids += [p.id for p in points]
            if offset is None or not points:
                return ids

    def sweep(self) -> int:
        """Expire what is due; how many memories were soft-deleted."""
        expired = sum(1 for memory_id in self.due() if self._memory.expire(memory_id))
        if expired:
            logger.info("TTL sweep: %d expired memories soft-deleted", expired)
        return expired
