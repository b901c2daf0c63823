"""services.index_links: which memories a code unit's docstring, signature or name links to."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from indexer import CodeUnit
from memory_service.core.code.links import unit_links
from memory_service.core.models import MemoryRecord, Scope
from memory_service.core.write.linking import MemoryCatalog

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _memory(mid: str, kind: str, **metadata: Any) -> MemoryRecord:
    return MemoryRecord(id=mid, type=kind, content=mid, metadata=metadata, scope=Scope(project="p"),
                        content_hash=mid, created_at=T0, updated_at=T0)  # fmt: skip


def _unit(path: str, name: str, doc: str | None, signature: str = "def f()") -> CodeUnit:
    return CodeUnit.model_validate({
        "id": f"{path}::{name}#function", "name": name, "qualified_name": name, "kind": "function",
        "signature": signature, "docstring": doc, "file_path": path, "language": "python",
        "start_line": 1, "end_line": 2, "body_hash": "h", "normalized_hash": "n",
    })  # fmt: skip


CATALOG = MemoryCatalog([
    _memory("req", "requirements", requirement_id="REQ-LED-001"),
    _memory("plain", "component", component_id="ledger", name="Ledger"),
    _memory("dist", "component", component_id="billing-core", name="Billing core"),
])  # fmt: skip


def _links(*units: CodeUnit) -> set[tuple[str, str, str]]:
    return {(e.type, e.source_id, e.target_id) for e in unit_links(units, CATALOG)}


def test_requirement_ids_give_tests_and_implements() -> None:
    impl = _unit("billing/ledger.py", "post", "Implements REQ-led-001 and REQ-NOPE-9.")
    test = _unit("tests/ledger_spec.py", "check_post", None, "def check_post() -> None:  # REQ-LED-001")
    assert _links(impl, test) == {
        ("IMPLEMENTS", impl.id, "req"),
        ("TESTS", test.id, "req"),
    }
    edge = unit_links([impl], CATALOG)[0]
    assert (edge.source_label, edge.target_label, edge.properties) == (
        "Function",
        "Memory",
        {"via": "indexer"},
    )


def test_components_only_by_a_distinctive_exact_id() -> None:
    impl = _unit("billing/core.py", "total", "Part of billing-core; the ledger and Ledger are prose.")
    test = _unit("billing/core.py", "test_total", "Checks billing-core.")
    loose = _unit("billing/core.py", "other", "Billing-Core, billing-cores, Billing core.")
    assert _links(impl, test, loose) == {("RELATED_TO", impl.id, "dist"), ("TESTS", test.id, "dist")}
