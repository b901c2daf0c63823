"""Re-sent tool calls on the real stores: the same request key writes once and answers the same.

The stdio forwarder re-sends a call whose daemon died before answering, with the same request
key (core/write/request_key.py). Each test runs a call bound to a key, then runs it again with that key,
either in the same process or after a crash: the crash is raised at one of the writer's crash
points (the ones ``MEMORY_TEST_CRASH_AT`` names), the services are closed without settling it and
opened again, so the start's journal replay finishes or drops the write, as after a kill -9.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from memory_service.app import Services
from memory_service.core.errors import ConflictError, NotFoundError
from memory_service.core.memory.feedback_schemas import MemoryFeedbackInput, MemorySupersedeInput, NewMemory
from memory_service.core.memory.schemas import (
    MemoryAddInput,
    MemoryBulkAddRequest,
    MemoryGetInput,
    MemoryUpdateInput,
)
from memory_service.core.models import content_hash
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import MEMORIES
from memory_service.core.write import request_key, writer
from tests.integration.conftest import reopened

KEY = "0b6f3f6e-6d0c-4a53-9d1e-3c1f6f0e2a10"


pytestmark = pytest.mark.usefixtures("profile_servers")


def _opened(data: Path) -> AbstractContextManager[Services]:
    return reopened(data, "keys")


class _Crash(BaseException):
    """The process dying at a crash point: nothing after it runs, nothing settles the write."""


def _crashing_at(point: str, call: Callable[[], Any], nth: int = 1) -> None:
    passes = [0]

    def crash_point(name: str) -> None:
        passes[0] += name == point
        if passes[0] == nth and name == point:
            raise _Crash(name)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(writer, "crash_point", crash_point)
        with pytest.raises(_Crash):
            call()


def _keyed(key: str | None, call: Callable[[], BaseModel]) -> dict[str, Any]:
    with request_key.bound(key):
        return call().model_dump(mode="json")


def _with_content(services: Services, content: str) -> list[str]:
    flt = PayloadFilter(equals={"content_hash": content_hash(content)})
    return [p.id for p in services.stores.vectors.scroll(MEMORIES, flt, limit=10)[0]]


def _operations(services: Services, memory_id: str) -> list[str]:
    return sorted(e.operation for e in services.stores.audit.list(memory_id))


def _add(services: Services, content: str, kind: str = "session") -> str:
    return services.memory.add(MemoryAddInput(type=kind, content=content)).memory_id  # type: ignore[arg-type]


# ------------------------------------------------------------------ one process


def test_a_resent_add_writes_once_and_answers_the_same(services: Services) -> None:
    content = "Retries of the payment call are keyed by the order id."

    def add() -> BaseModel:
        return services.memory.add(MemoryAddInput(type="session", content=content))  # type: ignore[arg-type]

    first = _keyed(KEY, add)
    assert _keyed(KEY, add) == first
    assert _with_content(services, content) == [first["memory_id"]]
    assert _operations(services, first["memory_id"]) == ["create"]
    other = _keyed(KEY + "-other", add)  # another call: the content dedupe answers it, unwritten
    unkeyed = _keyed(None, add)
    assert other["memory_id"] == unkeyed["memory_id"] == first["memory_id"]
    assert other["status"] == unkeyed["status"] == "skipped_dedupe"
    assert _with_content(services, content) == [first["memory_id"]]
    assert _operations(services, first["memory_id"]) == ["create"]


def test_a_resent_bulk_add_writes_once_with_the_same_ids(services: Services) -> None:
    items = [{"type": "session", "content": f"Bulk note {i} about the queue lease."} for i in range(3)]
    items.append({"type": "nope", "content": "refused"})
    request = MemoryBulkAddRequest(memories=items)
    first = _keyed(KEY, lambda: services.memory.bulk_add(request))
    assert first["created"] == 3 and len(first["errors"]) == 1
    assert _keyed(KEY, lambda: services.memory.bulk_add(request)) == first
    for item, memory_id in zip(items, first["memory_ids"], strict=False):
        assert _with_content(services, item["content"]) == [memory_id]
        assert _operations(services, memory_id) == ["create"]


def test_a_resent_update_bumps_the_version_once(services: Services) -> None:
    memory_id = _add(services, "The cache TTL is five minutes.")
    update = MemoryUpdateInput(
        memory_id=memory_id, content="The cache TTL is ten minutes.", expected_version=1
    )
    first = _keyed(KEY, lambda: services.memory.update(update))
    assert first["updated_fields"] == ["content"]
    assert _keyed(KEY, lambda: services.memory.update(update)) == first  # no version conflict
    assert services.memory.load(memory_id).version == 2
    assert _operations(services, memory_id) == ["create", "update"]
    with pytest.raises(ConflictError):  # another call with the stale version is refused
        _keyed(KEY + "-other", lambda: services.memory.update(update))


def test_a_resent_delete_answers_deleted_not_not_found(services: Services) -> None:
    memory_id = _add(services, "A note to delete twice.")
    first = _keyed(KEY, lambda: services.memory.delete(memory_id))
    assert first["status"] == "deleted"
    assert _keyed(KEY, lambda: services.memory.delete(memory_id)) == first
    assert _operations(services, memory_id) == ["create", "delete"]
    with pytest.raises(NotFoundError):  # another call finds no memory
        _keyed(KEY + "-other", lambda: services.memory.delete(memory_id))


def test_a_resent_vote_is_counted_once(services: Services) -> None:
    memory_id = _add(services, "Restart the lock holder to unblock the tests.")
    problem = _add(services, "Tests hang on the store lock.", kind="problem")
    vote = MemoryFeedbackInput(memory_id=memory_id, problem_id=problem, vote=1.0)
    first = _keyed(KEY, lambda: services.feedback.vote(vote))
    assert first["votes_count"] == 1
    assert _keyed(KEY, lambda: services.feedback.vote(vote)) == first
    assert services.stores.votes.of([memory_id]) == {memory_id: [1.0]}
    assert _operations(services, memory_id) == ["create", "utility_vote"]
    assert _keyed(None, lambda: services.feedback.vote(vote))["votes_count"] == 2


def test_a_resent_supersede_writes_its_chain_once(services: Services) -> None:
    old = _add(services, "The service listens on port 8080.", kind="fact")
    request = MemorySupersedeInput(
        old_fact_id=old,
        new_fact=NewMemory(content="The service listens on port 9090."),
        change=NewMemory(content="Moved the port to 9090.", metadata={"change_type": "config"}),
    )
    first = _keyed(KEY, lambda: services.supersede.supersede(request))
    assert first["status"] == "committed"
    assert _keyed(KEY, lambda: services.supersede.supersede(request)) == first  # not "already superseded"
    assert _with_content(services, "The service listens on port 9090.") == [first["new_fact_id"]]
    assert _with_content(services, "Moved the port to 9090.") == [first["change_id"]]
    assert _operations(services, old) == ["create", "supersede"]


# ------------------------------------------------------------------ across a crash


@pytest.mark.parametrize(
    ("point", "finished"),
    [("write.journaled", False), ("write.upserted", True), ("write.committed", True)],
)
def test_an_add_cut_short_by_a_crash_is_written_once_when_resent(
    tmp_path: Path, point: str, finished: bool
) -> None:
    data, content = tmp_path / "data", "The importer skips rows without a checksum."
    request = MemoryAddInput(type="session", content=content)  # type: ignore[arg-type]
    with _opened(data) as services:
        _crashing_at(point, lambda: _keyed(KEY, lambda: services.memory.add(request)))
        landed = _with_content(services, content)
    with _opened(data) as services:  # the replay finishes the write, or drops it
        assert services.stores.journal is not None and services.stores.journal.pending() == []
        assert _with_content(services, content) == (landed if finished else [])
        again = _keyed(KEY, lambda: services.memory.add(request))
        (memory_id,) = _with_content(services, content)
        shown = {k: again[k] for k in ("memory_id", "status", "conflicts")}
        assert shown == {"memory_id": memory_id, "status": "created", "conflicts": []}
        assert _operations(services, memory_id) == ["create"]
        with request_key.bound(KEY):  # the id the first attempt made, whether it landed or not
            assert memory_id == request_key.new_id()
        assert not finished or landed == [memory_id]


def test_a_bulk_add_cut_short_after_its_upsert_is_not_written_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    items = [{"type": "session", "content": f"Crash batch note {i}."} for i in range(2)]
    request = MemoryBulkAddRequest(memories=items)
    with _opened(data) as services:
        _crashing_at("write.upserted", lambda: _keyed(KEY, lambda: services.memory.bulk_add(request)))
        landed = [_with_content(services, item["content"]) for item in items]
    with _opened(data) as services:
        again = _keyed(KEY, lambda: services.memory.bulk_add(request))
        assert again == {
            "created": 2,
            "memory_ids": [ids[0] for ids in landed],
            "errors": [],
            "skipped": [],
            "warnings": [],
        }
        for item, ids in zip(items, landed, strict=True):
            assert _with_content(services, item["content"]) == ids
            assert _operations(services, ids[0]) == ["create"]


def test_a_bulk_add_only_partly_stored_is_written_whole_when_resent(tmp_path: Path) -> None:
    """A batch cut short in the vector store (one point landed, one did not) was never answered:
    its key must not be recorded at start, or the re-send would answer ids that were not stored."""
    data = tmp_path / "data"
    items = [{"type": "session", "content": f"Partly stored batch note {i}."} for i in range(2)]
    request = MemoryBulkAddRequest(memories=items)
    with _opened(data) as services:
        _crashing_at("write.upserted", lambda: _keyed(KEY, lambda: services.memory.bulk_add(request)))
        landed = [_with_content(services, item["content"])[0] for item in items]
        services.stores.vectors.delete(MEMORIES, [landed[1]])  # as if its point never landed
    with _opened(data) as services:
        assert _with_content(services, items[1]["content"]) == []
        again = _keyed(KEY, lambda: services.memory.bulk_add(request))
        assert again == {"created": 2, "memory_ids": landed, "errors": [], "skipped": [], "warnings": []}
        for item, memory_id in zip(items, landed, strict=True):
            assert _with_content(services, item["content"]) == [memory_id]
            assert (
                services.memory.get(MemoryGetInput(memory_id=memory_id)).memory["content"] == item["content"]
            )


def test_an_update_and_a_delete_cut_short_answer_success_when_resent(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with _opened(data) as services:
        updated = _add(services, "Workers poll every second.")
        deleted = _add(services, "A memory the crash deletes.")
        update = MemoryUpdateInput(
            memory_id=updated, content="Workers poll every minute.", expected_version=1
        )
        _crashing_at("write.upserted", lambda: _keyed(KEY, lambda: services.memory.update(update)))
        _crashing_at("write.upserted", lambda: _keyed(KEY + "-d", lambda: services.memory.delete(deleted)))
    with _opened(data) as services:
        assert _keyed(KEY, lambda: services.memory.update(update)) == {
            "memory_id": updated,
            "status": "updated",
            "updated_fields": ["content"],
        }
        assert services.memory.load(updated).version == 2
        assert _operations(services, updated) == ["create", "update"]
        out = _keyed(KEY + "-d", lambda: services.memory.delete(deleted))
        assert out["status"] == "deleted"
        assert _operations(services, deleted) == ["create", "delete"]


@pytest.mark.parametrize("point", ["write.upserted", "write.committed"])
def test_a_vote_cut_short_is_counted_once_when_resent(tmp_path: Path, point: str) -> None:
    data = tmp_path / "data"
    with _opened(data) as services:
        memory_id = _add(services, "Pin the driver version.")
        problem = _add(services, "The driver upgrade broke the tests.", kind="problem")
        vote = MemoryFeedbackInput(memory_id=memory_id, problem_id=problem, vote=0.5)
        _crashing_at(point, lambda: _keyed(KEY, lambda: services.feedback.vote(vote)))
    with _opened(data) as services:
        out = _keyed(KEY, lambda: services.feedback.vote(vote))
        assert out["status"] == "recorded" and out["votes_count"] == 1 and out["mean_vote"] == 0.5
        assert services.stores.votes.of([memory_id]) == {memory_id: [0.5]}
        assert _operations(services, memory_id) == ["create", "utility_vote"]


def test_a_supersede_cut_short_between_its_writes_finishes_once_when_resent(tmp_path: Path) -> None:
    data = tmp_path / "data"
    new_fact, change = "Deploys run from the main branch.", "Switched deploys to main."
    with _opened(data) as services:
        old = _add(services, "Deploys run from the release branch.", kind="fact")
        request = MemorySupersedeInput(
            old_fact_id=old, new_fact=NewMemory(content=new_fact), change=NewMemory(content=change)
        )
        # the new fact and the change are written, the old fact's rewrite is not
        _crashing_at("write.committed", lambda: _keyed(KEY, lambda: services.supersede.supersede(request)), 2)
        written = _with_content(services, new_fact) + _with_content(services, change)
    with _opened(data) as services:
        out = _keyed(KEY, lambda: services.supersede.supersede(request))
        assert out["status"] == "committed" and [out["new_fact_id"], out["change_id"]] == written
        assert _with_content(services, new_fact) + _with_content(services, change) == written
        assert services.memory.load(old).metadata["superseded_by"] == written[0]
        assert [_operations(services, i) for i in written] == [["create"], ["create"]]
        assert _keyed(KEY, lambda: services.supersede.supersede(request)) == out
