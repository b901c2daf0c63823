"""The refresher's look for memories without vectors is remembered across starts.

That look is an unindexed scan (about 2 s at 100k memories, holding the GIL: the first search after
a start waited for it). A durable flag beside the journal says the last look found none and no write of
such memories began after it; a start with the flag set does not look. Real stores and model.
"""

from __future__ import annotations

from pathlib import Path

from memory_service.app import Services, open_services
from memory_service.core.maintenance.embedding_refresh import EmbeddingRefresher
from memory_service.core.memory.schemas import MemoryAddInput
from memory_service.core.records import MEMORIES
from memory_service.core.write.writer import COMPLETE
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import require_model


def _open(root: Path, model: Path) -> Services:
    settings = Settings(
        data_dir=root / "data",
        project_root=root,
        project="p",
        embedding=EmbeddingSettings(model_path=model, load_timeout_seconds=5),
    )
    return open_services(settings, housekeeping=False)


def _refresher(services: Services) -> EmbeddingRefresher:
    return EmbeddingRefresher(services.stores, services.memory._writer, services.memory.locks)


def _flag(services: Services) -> bool | None:
    assert services.stores.flags is not None
    return services.stores.flags.get(COMPLETE)


def test_a_start_after_a_look_that_found_nothing_does_not_look_again(tmp_path: Path) -> None:
    model = require_model()
    services = _open(tmp_path, model)
    try:
        assert services.memory._writer.pending.is_set()  # a new store: never looked
        services.memory.add(MemoryAddInput(type="design", content="Queues drain before shutdown."))
        assert _refresher(services).run() == 0
        assert _flag(services) is True
    finally:
        services.close()
    services = _open(tmp_path, model)
    try:
        assert not services.memory._writer.pending.is_set()
        assert _refresher(services).run() == 0
    finally:
        services.close()


def test_memories_stored_without_a_model_are_looked_for_after_a_restart(tmp_path: Path) -> None:
    model = require_model()
    services = _open(tmp_path, model)
    try:
        assert services.stores.embedder.wait_ready(60)  # the refresher only looks with a model
        assert _refresher(services).run() == 0 and _flag(services) is True
    finally:
        services.close()
    services = _open(tmp_path, tmp_path / "no-model")  # the model cannot load: lexical only
    try:
        added = services.memory.add(MemoryAddInput(type="design", content="Retries back off to 30 s."))
        assert services.memory.load(added.memory_id).embedding_pending
        assert _flag(services) is False  # on disk before the memory was stored
    finally:
        services.close()  # no refresher ran: as a crash would leave it
    services = _open(tmp_path, model)
    try:
        assert services.memory._writer.pending.is_set()
        assert services.stores.embedder.wait_ready(60)
        assert _refresher(services).run() == 1
        (point,) = services.stores.vectors.retrieve(MEMORIES, [added.memory_id], with_dense=True)
        assert point.dense is not None and not point.payload["embedding_pending"]
        assert _flag(services) is False  # that look found one: not complete yet
        assert _refresher(services).run() == 0 and _flag(services) is True
    finally:
        services.close()


def test_a_look_is_not_remembered_when_a_write_without_vectors_began_since(tmp_path: Path) -> None:
    services = _open(tmp_path, require_model())
    try:
        writer = services.memory._writer
        token = writer.incomplete_token()
        writer._begin_incomplete()  # a write of records without vectors, still in flight
        assert not writer.mark_complete(writer.incomplete_token())  # in flight: may land after it
        assert not writer.mark_complete(token)  # began after the token
        with writer._incomplete_lock:
            writer._incomplete_open -= 1  # it landed
        writer.pending.set()
        assert not writer.mark_complete(writer.incomplete_token())  # a look is owed first
        writer.pending.clear()
        assert writer.mark_complete(writer.incomplete_token()) and _flag(services) is True
    finally:
        services.close()
