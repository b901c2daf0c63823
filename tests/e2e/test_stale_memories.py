"""Memories that cite code go stale when the indexer sees that code change or vanish (issue 10.8)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import profile_settings, require_model
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

BILLING = '''\
def charge(card, amount):
    """Charge a card once."""
    return card.debit(amount)


def refund(card, amount):
    """Give money back."""
    return card.credit(amount)
'''
LEDGER = 'def post_entry(book, entry):\n    """Post one entry."""\n    book.append(entry)\n'


@pytest.fixture(scope="module")
async def project(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, Path]]:
    root = tmp_path_factory.mktemp("stale")
    repo = root / "repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "billing.py").write_text(BILLING)
    (repo / "shop" / "ledger.py").write_text(LEDGER)
    settings = Settings(
        data_dir=root / "data",
        project_root=repo,
        project="shop",
        embedding=EmbeddingSettings(model_path=require_model()),
        **profile_settings(root / "data"),
    )
    async with Client(build_server(settings)) as client:
        await reindex(client)
        yield client, repo


async def reindex(client: Client) -> dict[str, Any]:
    out = await call_ok(client, "reindex", {"scope": "changed", "wait": True})
    assert out["job"]["status"] == "completed", out
    return out["job"]["stats"]


async def cite(client: Client, content: str, refs: list[str]) -> str:
    out = await call_ok(
        client, "memory_add", {"type": "design", "content": content, "metadata": {"code_refs": refs}}
    )
    return out["memory_id"]


async def stale_of(client: Client, memory_id: str) -> dict[str, Any] | None:
    got = await call_ok(client, "memory_get", {"memory_id": memory_id})
    return got["memory"]["stale"]


async def test_changed_function_flags_memory_until_it_is_updated(project: tuple[Client, Path]) -> None:
    client, repo = project
    mid = await cite(client, "Charges are never retried: the gateway deduplicates them", ["charge"])
    other = await cite(client, "Refunds go back to the original card", ["shop/billing.py::refund#function"])
    got = await call_ok(client, "memory_get", {"memory_id": mid, "include_relationships": True})
    assert got["memory"]["stale"] is None
    assert {(r["type"], r["other_label"]) for r in got["relationships"]} >= {("CITES", "Function")}

    unchanged = await reindex(client)  # nothing changed: nothing flagged
    assert unchanged["files_indexed"] == 0 and await stale_of(client, mid) is None
    await call_ok(client, "index_file", {"file_path": "shop/billing.py", "force": True})  # same content
    assert await stale_of(client, mid) is None

    (repo / "shop" / "billing.py").write_text(
        BILLING.replace("card.debit(amount)", "card.debit(amount, retry=False)")
    )
    stats = await reindex(client)
    assert stats["memories_marked_stale"] == 1
    stale = await stale_of(client, mid)
    assert stale is not None and stale["code_ids"] == ["shop/billing.py::charge#function"]
    assert stale["reason"].startswith("function charge (shop/billing.py) changed (body hash ")
    assert await stale_of(client, other) is None  # refund's body did not change
    found = await call_ok(client, "memory_search", {"query": "charges never retried gateway deduplicates"})
    hit = next(r for r in found["results"] if r["memory_id"] == mid)
    assert hit["stale"] == stale

    updated = await call_ok(client, "memory_update", {"memory_id": mid, "metadata": {}})
    assert updated["updated_fields"] == ["stale"]
    assert await stale_of(client, mid) is None
    found = await call_ok(client, "memory_search", {"query": "charges never retried gateway deduplicates"})
    assert next(r for r in found["results"] if r["memory_id"] == mid)["stale"] is None

    # The link survived the reindex: the next change flags the memory again.
    (repo / "shop" / "billing.py").write_text(BILLING.replace("card.debit(amount)", "card.debit(amount * 1)"))
    await reindex(client)
    assert (await stale_of(client, mid) or {}).get("code_ids") == ["shop/billing.py::charge#function"]


async def test_deleted_file_flags_memories_citing_it_or_its_units(project: tuple[Client, Path]) -> None:
    client, repo = project
    by_unit = await cite(client, "Ledger entries are append-only", ["post_entry"])
    by_file = await cite(client, "The ledger module owns the books", ["shop/ledger.py"])
    (repo / "shop" / "ledger.py").unlink()
    stats = await reindex(client)
    assert stats["files_removed"] == 1
    unit_mark, file_mark = await stale_of(client, by_unit), await stale_of(client, by_file)
    assert unit_mark is not None and "function post_entry (shop/ledger.py) removed" in unit_mark["reason"]
    assert file_mark is not None and file_mark["code_ids"] == ["shop/ledger.py"]
    assert file_mark["reason"].startswith("file shop/ledger.py removed on ")


async def test_unknown_code_ref_is_refused(project: tuple[Client, Path]) -> None:
    client, _ = project
    error = await call_error(
        client, "memory_add", {"type": "design", "content": "x", "metadata": {"code_refs": ["no_such_fn"]}}
    )
    assert error["code"] == "NF_CODE_REF" and error["details"]["field"] == "metadata.code_refs[0]"
