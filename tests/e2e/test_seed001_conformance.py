"""Seed 001 as written, through the MCP client: its own examples work and its types hold.

- memory_update of a requirement's metadata alone (seed 001's example requirement, re-prioritised)
  succeeds although the requirement is Approved; a change of what it says still needs a version
  bump (docs/governance.md, FR-037).
- index_status, normalize_status and check_consistency never answer null where seed 001 types the
  field as a string, integer or object: such a field is left out instead.
- export_memory writes a file, so tools/list does not call it read-only; it creates a missing
  output directory inside the allowed roots (never outside them).
- memory_explain takes ``ids`` as seed 000 types them (integers): each is reported in ``errors``,
  the call does not fail.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from tests.conftest import require_model
from tests.e2e.conftest import TRACE_PROJECT, call_error, call_ok, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# Seed 001 §4.2.1, memory_add's example request.
SEED_REQUIREMENT = {
    "type": "requirements",
    "content": "The system shall provide semantic search across all memory types.",
    "metadata": {
        "requirement_id": "REQ-MEM-FN-080",
        "title": "Semantic Search",
        "priority": "Critical",
        "status": "Approved",
        "source_document": "requirements-memory-docs.md",
    },
}


@pytest.fixture(scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, Path]]:
    """A server whose project root holds a copy of the trace fixture project (for the code tools)."""
    root = tmp_path_factory.mktemp("seed001")
    shutil.copytree(TRACE_PROJECT, root, dirs_exist_ok=True)
    async with Client(build_server(make_settings(root, require_model()))) as client:
        yield client, root


async def test_metadata_only_update_of_an_approved_requirement(served: tuple[Client, Path]) -> None:
    client, _ = served
    added = await call_ok(client, "memory_add", SEED_REQUIREMENT)
    assert added["status"] == "created"
    mid = added["memory_id"]
    update = {"memory_id": mid, "metadata": {"priority": "High"}}
    done = await call_ok(client, "memory_update", update)
    assert done == {"memory_id": mid, "status": "updated", "updated_fields": ["metadata.priority"]}
    memory = (await call_ok(client, "memory_get", {"memory_id": mid}))["memory"]
    assert memory["metadata"]["priority"] == "High" and memory["metadata"]["status"] == "Approved"
    # What the requirement says stays write-locked without a version bump (seed 004 FR-037).
    reworded = {"content": "The system shall search some memory types."}
    for change in (reworded, {"metadata": {"title": "Search"}}):
        error = await call_error(client, "memory_update", {"memory_id": mid, **change})
        assert error["code"] == "CON_SPEC_LOCKED", error


def _nulls(value: Any, path: str = "") -> list[str]:
    """Every path in a JSON value that holds null."""
    if value is None:
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _nulls(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _nulls(v, f"{path}[{i}]")]
    return []
