"""The utility vote port: append-only votes on memories."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


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
