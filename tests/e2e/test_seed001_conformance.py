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


def _nulls(tool: str, answer: dict[str, Any]) -> list[str]:
    """The seed-typed fields of this tool's answer that hold null (absent is fine)."""
    found = []
    for dotted in SEED_TYPED[tool]:
        value: Any = answer
        for part in dotted.split("."):
            value = value.get(part, "absent") if isinstance(value, dict) else "absent"
        if value is None:
            found.append(dotted)
    return found


# Output fields seed 001 types as string / integer / object (not null), by tool.
SEED_TYPED = {
    "index_status": ["job", "index.last_indexed"],
    "normalize_status": ["error", "estimated_remaining_seconds", "phase"],
    "check_consistency": ["component.name", "component.type", "component.file_path", "base_pattern"],
}


def _property(schema: dict[str, Any], dotted: str) -> dict[str, Any]:
    for part in dotted.split("."):
        schema = schema["properties"][part]
    return schema


async def test_seed_typed_fields_are_never_null(served: tuple[Client, Path]) -> None:
    client, _ = served
    tools = {t.name: t for t in (await client.list_tools()).tools}
    for tool, fields in SEED_TYPED.items():
        schema = tools[tool].output_schema
        assert schema is not None
        for field in fields:
            published = _property(schema, field).get("type")
            assert published is not None and "null" not in published, (tool, field, published)
    # Nothing indexed, no job asked for: no job, no last_indexed, and no null in their place.
    status = await call_ok(client, "index_status", {})
    assert "job" not in status and "last_indexed" not in status["index"], status
    assert _nulls("index_status", status) == [], status
    # A finished normalization job has no error.
    started = await call_ok(client, "normalize_memory", {"options": {"dry_run": True}, "wait": True})
    normalized = await call_ok(client, "normalize_status", {"job_id": started["job_id"]})
    assert normalized["status"] == "completed" and "error" not in normalized, normalized
    assert _nulls("normalize_status", normalized) == [], normalized
    # A component with no name, type or file, following no pattern.
    lonely = {"component_id": "lonely-x"}
    body = {"type": "component", "content": "A component with no code yet.", "metadata": lonely}
    await call_ok(client, "memory_add", body)
    checked = await call_ok(client, "check_consistency", {"component_id": "lonely-x"})
    assert "base_pattern" not in checked, checked
    assert set(checked["component"]) == {"name", "component_id", "memory_id"}, checked
    assert _nulls("check_consistency", checked) == [], checked


async def test_export_memory_writes_a_file_and_makes_its_directory(
    served: tuple[Client, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    client, root = served
    tools = {t.name: t for t in (await client.list_tools()).tools}
    hints = tools["export_memory"].annotations
    assert hints is not None and hints.read_only_hint is False and hints.destructive_hint is False
    await call_ok(client, "memory_add", {"type": "session", "content": "Exported into a new folder."})
    out = await call_ok(client, "export_memory", {"output_path": "exports/2026/q4/memories.jsonl"})
    target = root / "exports" / "2026" / "q4" / "memories.jsonl"
    assert Path(out["file_path"]) == target.resolve() and target.is_file(), out
    assert out["memories_exported"] >= 1 and out["file_size_bytes"] == target.stat().st_size
    # Outside the allowed roots nothing is created.
    outside = tmp_path_factory.mktemp("outside")
    error = await call_error(client, "export_memory", {"output_path": str(outside / "new" / "m.jsonl")})
    assert error["code"] == "VAL_PATH_OUTSIDE_ROOTS", error
    # Nor through a symlink inside the root that leads out.
    (root / "escape").symlink_to(outside, target_is_directory=True)
    error = await call_error(client, "export_memory", {"output_path": "escape/new/m.jsonl"})
    assert error["code"] == "VAL_PATH_OUTSIDE_ROOTS", error
    assert list(outside.iterdir()) == []
