"""A memory's vectors stay out of the embedding cache (writer.embed), on the real engines and model."""

from __future__ import annotations

from pathlib import Path

from memory_service.app import open_services
from memory_service.core.memory.schemas import MemoryBulkAddRequest
from memory_service.core.models import derive_title, embedding_text
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.embeddings.embedding_cache import text_key
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import require_model


def test_bulk_add_leaves_the_embedding_cache_alone_and_is_found(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        project_root=tmp_path,
        project="p",
        embedding=EmbeddingSettings(model_path=require_model()),
    )
    services = open_services(settings, housekeeping=False)
    try:
        embedder, cache = services.stores.embedder, services.stores.cache
        # A thread's turns: their context texts are embedded by the writer too.
        items = [
            {"type": "session", "content": f"turn {i}: the outbox drains into graph shard {i}",
             "metadata": {"session_id": "s1"}}
            for i in range(40)
        ]  # fmt: skip
        before = cache.stats()
        out = services.memory.bulk_add(MemoryBulkAddRequest.model_validate({"memories": items}))
        assert out.created == 40 and not out.errors
        after = cache.stats()
        assert (after["hits"], after["misses"]) == (before["hits"], before["misses"])  # no lookup
        for item in items:
            text = embedding_text(derive_title(item["content"], item["metadata"]), item["content"])
            assert cache.get(embedder.namespace, text_key(text)) is None
        hits = services.search.search(MemorySearchInput(query="graph shard 17 outbox", limit=3)).results
        assert hits and "shard 17" in hits[0].content
        assert embedder.embed_documents(["kept: a code unit"])[0]  # other callers still cache
        assert cache.get(embedder.namespace, text_key("kept: a code unit")) is not None
    finally:
        services.close()
