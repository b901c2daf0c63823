"""The write journal port: write intents, committed answers and replay after a crash."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memory_service.core.ports.audit import AuditEvent


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

    def close(self) -> None: ...
