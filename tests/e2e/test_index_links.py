"""Index-time links: the indexer writes TESTS / IMPLEMENTS edges from code units whose docstring
names a requirement id to the requirement memories that exist when the file is indexed
(services.index_links, docs/relationships.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.e2e.conftest import call_ok, fixture_project

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LEDGER = "billing/ledger.py"
POST_ENTRY = f"{LEDGER}::post_entry#function"
TEST_OK = "tests/ledger_spec.py::test_post_entry#function"
TEST_ZERO = "tests/ledger_spec.py::test_post_rejects_zero#function"
CHECKOUT = "payments/checkout.ts::checkout#function"


def _requirement(rid: str, title: str) -> dict[str, Any]:
    meta = {"requirement_id": rid, "title": title, "status": "Approved"}
    return {"type": "requirements", "content": f"{title}.", "metadata": meta}


MEMORIES = [("led", _requirement("REQ-LED-001", "Post ledger entries")),
            ("pay", _requirement("REQ-PAY-002", "Charge at checkout"))]  # fmt: skip


@pytest.fixture(scope="module")
async def linked(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    """The fixture project indexed before the requirements existed, then indexed again (force)."""
    async with fixture_project(tmp_path_factory, "links", MEMORIES) as (client, ids):
        await _reindex(client)
        yield client, ids


async def _reindex(client: Client) -> None:
    for path in (LEDGER, "tests/ledger_spec.py", "payments/checkout.ts"):
        got = await call_ok(client, "index_file", {"file_path": path, "force": True})
        assert got["status"] == "indexed", got


async def _code_edges(client: Client, memory_id: str) -> list[tuple[str, str]]:
    """(edge type, source id) of every edge into the memory, duplicates kept."""
    cypher = "MATCH (c)-[r]->(m:Memory) WHERE m.id = $id RETURN r"
    got = await call_ok(client, "graph_query", {"cypher": cypher, "params": {"id": memory_id}})
    return sorted((row["r"]["_type"], row["r"]["_src"]) for row in got["results"])


async def test_units_naming_a_requirement_are_linked(linked: tuple[Client, dict[str, str]]) -> None:
    client, ids = linked
    args = {"entity_id": ids["led"], "direction": "INCOMING", "relationship_types": ["TESTS", "IMPLEMENTS"]}
    related = (await call_ok(client, "get_related", args))["related"]
    assert {(r["entity_id"], r["type"], r["relationship"]) for r in related} == {
        (POST_ENTRY, "Function", "IMPLEMENTS"),
        (TEST_OK, "Function", "TESTS"),
        (TEST_ZERO, "Function", "TESTS"),
    }
    assert await _code_edges(client, ids["pay"]) == [("IMPLEMENTS", CHECKOUT)]


async def test_reindexing_does_not_duplicate_links(linked: tuple[Client, dict[str, str]]) -> None:
    client, ids = linked
    before = await _code_edges(client, ids["led"])
    assert before == [("IMPLEMENTS", POST_ENTRY), ("TESTS", TEST_OK), ("TESTS", TEST_ZERO)]
    for _ in range(2):
        await _reindex(client)
    assert await _code_edges(client, ids["led"]) == before
    memory = await call_ok(client, "memory_get", {"memory_id": ids["led"]})
    assert not memory.get("stale"), memory  # a link the indexer derives never flags the requirement


async def test_trace_counts_the_links_once(linked: tuple[Client, dict[str, str]]) -> None:
    client, _ = linked
    out = await call_ok(client, "trace_requirements", {"requirement_id": "REQ-LED-001"})
    impls = [(i["component_id"], i["relationship"]) for i in out["implementations"]]
    assert impls == [(POST_ENTRY, "IMPLEMENTS")]
    assert [(t["test_name"], t["status"], t["file_path"]) for t in out["tests"]] == [
        ("test_post_entry", "unknown", "tests/ledger_spec.py"),
        ("test_post_rejects_zero", "unknown", "tests/ledger_spec.py"),
    ]
