"""Only the head of the fused lists is read and re-scored (RankingSettings.rescore_factor)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_service.app import Services, open_services
from memory_service.core.memory.schemas import MemoryBulkAddRequest
from memory_service.core.records import MEMORIES
from memory_service.core.search.explain_schemas import MemoryExplainInput
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.settings import EmbeddingSettings, RankingSettings, Settings
from tests.conftest import require_model

NOTES = [
    f"The {service} service {verb} its {part} {why}."
    for service in ("billing", "checkout", "search", "ledger", "gateway")
    for verb, part, why in (
        ("retries", "HTTP client", "with exponential backoff"),
        ("caches", "price lookups", "for five minutes"),
        ("batches", "database writes", "to cut lock contention"),
        ("validates", "webhook payloads", "at the boundary"),
        ("pins", "driver version", "after the pool leak"),
        ("logs", "slow queries", "above 200 ms"),
    )
]


def _open(root: Path, **ranking: Any) -> Services:
    settings = Settings(
        data_dir=root / "data",
        project_root=root,
        project="p",
        embedding=EmbeddingSettings(model_path=require_model()),
        ranking=RankingSettings(**ranking),
    )
    return open_services(settings, housekeeping=False)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("head")
    services = _open(root)
    try:
        items = [{"type": "design", "content": note} for note in NOTES]
        out = services.memory.bulk_add(MemoryBulkAddRequest.model_validate({"memories": items}))
        assert not out.errors and len(out.memory_ids) == len(NOTES)
    finally:
        services.close()
    yield root


def _search(services: Services, query: str, limit: int) -> tuple[list[str], list[int]]:
    """The result ids, and how many memories each read by id of the search asked for."""
    vectors = services.stores.vectors
    reads: list[int] = []
    real = vectors.retrieve

    def counted(collection: str, ids: Any, **kw: Any) -> Any:
        if collection == MEMORIES:
            reads.append(len(ids))
        return real(collection, ids, **kw)

    vectors.retrieve = counted  # type: ignore[method-assign]  # a spy on the real store
    try:
        found = services.search.search(MemorySearchInput(query=query, limit=limit, semantic_hops=0))
    finally:
        vectors.retrieve = real  # type: ignore[method-assign]
    return [r.memory_id for r in found.results], reads


def test_only_the_head_of_the_fusion_is_read(root: Path) -> None:
    # pool = max(limit 6 x 1, 8) = 8 candidates per list; 8 x 0.5 = 4 memories read and re-scored.
    services = _open(root, candidate_factor=1, min_candidates=8, rescore_factor=0.5)
    try:
        ids, reads = _search(services, "how does the billing service retry its HTTP client", 6)
    finally:
        services.close()
    assert reads == [4]  # one read, of the head alone (the lists hold up to 16 distinct memories)
    assert len(ids) == 4


def test_the_head_holds_the_answer_and_a_wider_head_ranks_it_the_same(root: Path) -> None:
    query = "which service validates webhook payloads at the boundary for checkout"
    narrow = _open(root, rescore_factor=0.2)  # 30 x 0.2 = 6 re-scored
    try:
        few, reads = _search(narrow, query, 5)
    finally:
        narrow.close()
    wide = _open(root, rescore_factor=10.0)  # every candidate re-scored
    try:
        every, every_reads = _search(wide, query, 5)
    finally:
        wide.close()
    assert reads == [6] and every_reads[0] > 6
    answer = NOTES.index("The checkout service validates its webhook payloads at the boundary.")
    assert few[0] == every[0]
    stored = _open(root)
    try:
        (point,) = stored.stores.vectors.retrieve(MEMORIES, [few[0]])
    finally:
        stored.close()
    assert point.payload["content"] == NOTES[answer]


def test_an_empty_lexical_list_still_counts_in_the_fusion_scale(root: Path) -> None:
    """A query sharing no word with any memory: BM25 returns nothing, yet its weight stays in the
    fusion's denominator, so the best dense hit's base is dense / (dense + BM25), not 1."""
    services = _open(root)
    try:
        out = services.explain.explain(MemoryExplainInput(query="zyxwv qwertz plugh", limit=1))
    finally:
        services.close()
    settings = RankingSettings()
    (item,) = out.items
    assert item.score.components["base"] == pytest.approx(
        settings.dense_weight / (settings.dense_weight + settings.sparse_weight), abs=1e-3
    )
