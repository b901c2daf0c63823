"""ThreadContext's choice of earlier turns (pure logic: the store holds nothing earlier here)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from memory_service.core.models import MemoryRecord, Scope
from memory_service.core.ports import PayloadFilter, VectorPoint
from memory_service.core.records import thread_of
from memory_service.core.write.threads import ThreadContext

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class EmptyStore:
    """Only ``latest`` is called; nothing is stored yet."""

    def __init__(self) -> None:
        self.asked: list[PayloadFilter | None] = []

    def latest(
        self, collection: str, flt: PayloadFilter | None, order_key: str, limit: int
    ) -> list[VectorPoint]:
        self.asked.append(flt)
        return []


def turn(content: str, minute: int, session: Any = "s1", project: str = "p") -> MemoryRecord:
    at = T0 + timedelta(minutes=minute)
    return MemoryRecord(
        id=str(uuid.uuid4()),
        type="session",
        content=content,
        metadata={} if session is None else {"session_id": session},
        scope=Scope(project=project),
        content_hash=content,
        created_at=at,
        updated_at=at,
    )


def contexts(records: list[MemoryRecord], turns: int = 2, max_chars: int = 400) -> list[str | None]:
    return ThreadContext(EmptyStore(), turns=turns, max_chars=max_chars).texts(records)  # type: ignore[arg-type]


def test_each_turn_reads_the_turns_created_before_it_in_its_thread() -> None:
    a, b, c, d = turn("a?", 0), turn("b.", 1), turn("c!", 2), turn("d", 3)
    other = turn("elsewhere", 1, session="s2")
    assert contexts([a, b, other, c, d]) == ["a?", "a?\nb.", "elsewhere", "a?\nb.\nc!", "b.\nc!\nd"]


def test_creation_time_orders_the_batch_not_its_position() -> None:
    early, late = turn("early", 0), turn("late", 5)
    assert contexts([late, early]) == ["early\nlate", "early"]


def test_memories_outside_threads_or_projects_are_left_out() -> None:
    plain, mine, theirs = turn("plain", 0, session=None), turn("mine", 2), turn("theirs", 1, project="q")
    assert contexts([plain, theirs, mine]) == [None, "theirs", "mine"]
    assert contexts([mine], turns=0) == [None]


def test_earlier_turns_are_cut_to_their_end() -> None:
    long = turn("x" * 50 + " so, what do you think?", 0)
    assert contexts([long, turn("yes", 1)], max_chars=10) == [long.content, "you think?\nyes"]


def test_thread_ids_are_non_empty_strings_or_numbers() -> None:
    assert thread_of(turn("t", 0, session=" s-1 ")) == "s-1"
    assert thread_of(turn("t", 0, session=7)) == "7"
    assert thread_of(turn("t", 0, session="  ")) is None
    assert thread_of(turn("t", 0, session=True)) is None
    assert thread_of(turn("t", 0, session=["a"])) is None
