"""find_duplicates on real engines: near-miss clones from the shingles stored at index time, and an
index written before shingles existed (no ``clone_shingles`` in the payloads) until a full reindex."""

from __future__ import annotations

from pathlib import Path

from memory_service.app import Services
from memory_service.core.code import records as cr
from memory_service.core.code.schemas import FindDuplicatesInput, IndexDirectoryInput, ReindexInput
from memory_service.core.ports import VectorPoint
from tests.e2e.test_index_tools import BILLING, MONEY, NEAR_MISS


def _index(services: Services, root: Path) -> None:
    (root / "shop").mkdir()
    (root / "shop" / "billing.py").write_text(BILLING)
    (root / "shop" / "money.py").write_text(MONEY)
    started = services.index.start_directory(IndexDirectoryInput(directory_path="shop"))
    assert services.index.jobs.wait(started.job_id, 120)


def _forget_shingles(services: Services) -> int:
    """Make the index look as an older version wrote it."""
    vectors = services.stores.vectors
    points, _ = vectors.scroll(cr.FUNCTIONS, None, limit=100)
    old = [
        VectorPoint(
            p.id, {k: v for k, v in p.payload.items() if k not in (cr.CLONE_SHINGLES, cr.CLONE_VERSION)}
        )
        for p in points
    ]
    vectors.overwrite_payload(cr.FUNCTIONS, old)
    return len(old)


def test_near_miss_clone_from_stored_shingles_and_an_older_index(services: Services, tmp_path: Path) -> None:
    _index(services, tmp_path)
    query = FindDuplicatesInput(code=NEAR_MISS, language="python")
    found = {d.name: d for d in services.code.find_duplicates(query).duplicates}
    assert found["total_with_tax"].match_type == "similar" and found["total_with_tax"].similarity >= 0.85

    assert _forget_shingles(services) == 5
    legacy = services.code.find_duplicates(query)
    assert any("reindex with scope 'full'" in w for w in legacy.warnings), legacy.warnings
    exact = services.code.find_duplicates(FindDuplicatesInput(code=MONEY, language="python"))
    assert {d.name: d.match_type for d in exact.duplicates}["round_cents"] == "exact"  # hashes still work

    started = services.index.start_reindex(ReindexInput(scope="full", directory_path="shop"))
    assert services.index.jobs.wait(started.job_id, 120)
    again = services.code.find_duplicates(query)
    assert not again.warnings
    assert {d.name: d.match_type for d in again.duplicates}["total_with_tax"] == "similar"
