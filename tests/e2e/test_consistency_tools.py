"""check_consistency and validate_fix through the MCP client, on the fixture project.

tests/fixtures/traceproject/stores holds a store pattern's reference code (user_store.py), a
component following it (order_store.py) and one departing from it (invoice_store.py). Memories
are written through memory_add, so every link read here was made by reference extraction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from tests.e2e.conftest import call_error, call_ok, fixture_project

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _component(cid: str, path: str) -> dict[str, Any]:
    meta = {"component_id": cid, "name": cid.replace("_", " ").title(), "file_path": path}
    return {"type": "component", "content": f"The {cid} component.", "metadata": meta}


def _design(title: str, status: str, content: str) -> dict[str, Any]:
    meta = {"design_type": "ADR", "title": title, "status": status, "component": "order_store"}
    return {"type": "design", "content": content, "metadata": meta}


MEMORIES: list[tuple[str, dict[str, Any]]] = [
    ("order", _component("order_store", "stores/order_store.py")),
    ("invoice", _component("invoice_store", "stores/invoice_store.py")),
    ("pattern", {"type": "code_pattern",
                 "content": "Stores extend BaseStore with get/put/delete, as `stores/user_store.py` does.",
                 "metadata": {"pattern_name": "Store pattern", "components": ["order_store", "invoice_store"],
                              "usage_context": "Any keyed persistence"}}),
    ("req", {"type": "requirements", "content": "Cached order items expire after an hour.",
             "metadata": {"requirement_id": "REQ-STO-001", "title": "Expire cached items",
                          "status": "Approved", "component": "order_store"}}),
    ("adr", _design("ADR-9 Soft delete for orders", "accepted",
                    "Orders are never erased: `delete_item` writes a tombstone (soft-delete).")),
    ("draft", _design("ADR-10 Write-through cache", "proposed",
                      "Put a write-through cache before the store.")),
]  # fmt: skip


@pytest.fixture(scope="module")
async def stores(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    async with fixture_project(tmp_path_factory, "consistency", MEMORIES) as project:
        yield project


async def test_following_component_scores_higher(stores: tuple[Client, dict[str, str]]) -> None:
    client, ids = stores
    good = await call_ok(client, "check_consistency", {"component_id": "order_store"})
    bad = await call_ok(client, "check_consistency", {"component_id": "Invoice Store"})
    assert good["component"]["memory_id"] == ids["order"]
    assert good["base_pattern"] == {
        "name": "Store pattern", "file_path": "stores/user_store.py", "memory_id": ids["pattern"],
        "source": "pattern code", "reference_files": ["stores/user_store.py"],
    }  # fmt: skip
    assert good["consistency_score"] == 1.0 and good["deviations"] == []
    assert "11/11" in good["basis"]
    assert bad["consistency_score"] == 0.6 and "6/10" in bad["basis"]
    found = {(d["type"], d["unit"], d["expected"], d["actual"], d["severity"]) for d in bad["deviations"]}
    assert found == {
        ("missing_member", "UserStore.delete_item",
         "stores/user_store.py: def delete_item(self, key: str) -> None", "absent", "high"),
        ("signature", "InvoiceStore.put_item", "(key, value)", "(key, value, ttl)", "medium"),
        ("base_class", "InvoiceStore", "extends BaseStore", "no base", "medium"),
        ("naming", "InvoiceStore.getItem", "get_item (the pattern's name)", "getItem", "low"),
        ("extra_member", "InvoiceStore.flush_all", "not in the pattern", "def flush_all(self) -> None",
         "info"),
    }  # fmt: skip
    assert any("delete_item" in r for r in bad["recommendations"])
    assert any("Rename InvoiceStore.getItem" in r for r in bad["recommendations"])


async def test_component_without_pattern_gets_naming_checks_only(
    stores: tuple[Client, dict[str, str]],
) -> None:
    client, _ = stores
    body = _component("base_store", "stores/base.py")
    await call_ok(client, "memory_add", body)
    out = await call_ok(client, "check_consistency", {"component_id": "base_store"})
    assert "base_pattern" not in out and out["consistency_score"] == 1.0
    assert "no pattern" in out["basis"] and "naming 2/2" in out["basis"]
    assert "code_pattern" in out["recommendations"][0]


async def test_validate_fix_raises_concerns(stores: tuple[Client, dict[str, str]]) -> None:
    client, ids = stores

    async def validate(fix: str, files: list[str] | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {"fix_description": fix, "component_id": "order_store"}
        if files is not None:
            args["affected_files"] = files
        return await call_ok(client, "validate_fix", args)

    good = await validate(
        "Validate the key in `get_item` before reading (REQ-STO-001).", ["stores/order_store.py"]
    )
    assert good["alignment_score"] == 1.0 and good["concerns"] == []
    context = good["design_context"]
    assert [r["requirement_id"] for r in context["requirements"]] == ["REQ-STO-001"]
    assert {d["memory_id"] for d in context["design_documents"]} == {ids["adr"], ids["draft"]}
    assert [p["name"] for p in context["patterns"]] == ["Store pattern"]

    decision = await validate("Drop the soft-delete and erase order rows in `delete_item`.")
    [concern] = decision["concerns"]
    assert concern["type"] == "contradicts_decision" and concern["severity"] == "high"
    assert concern["related_decision"] == ids["adr"] and "soft-delete" in concern["message"]

    requirement = await validate("Disable expiry of cached items to speed up reads.")
    [concern] = requirement["concerns"]
    assert (concern["type"], concern["related_requirement"]) == ("removes_required_behaviour", "REQ-STO-001")

    draft = await validate("Remove the write-through cache idea from `put_item`.")
    assert draft["concerns"] == []  # ADR-10 is only proposed

    foreign = await validate(
        "Share `get_item` checks (REQ-STO-001).", ["stores/invoice_store.py", "new/x.py"]
    )
    kinds = [(c["type"], c["severity"], c.get("related_component")) for c in foreign["concerns"]]
    assert kinds == [("foreign_file", "high", "invoice_store"), ("outside_component", "low", None)]
    assert foreign["alignment_score"] == 0.65 and "1 - 0.3*1 - 0.15*0 - 0.05*1" in foreign["basis"]

    vague = await validate("Tweak logging.")
    assert [c["type"] for c in vague["concerns"]] == ["no_design_reference"]
    scores = [s["alignment_score"] for s in (foreign, decision, vague, good)]
    assert scores == sorted(scores) and decision["alignment_score"] == 0.7


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("check_consistency", {"component_id": "order_stor"}, "NF_COMPONENT"),
        ("check_consistency", {}, "VAL_MISSING_FIELD"),
        ("check_consistency", {"component_id": " "}, "VAL_EMPTY"),
        ("validate_fix", {"fix_description": "x", "component_id": "invoices"}, "NF_COMPONENT"),
        ("validate_fix", {"component_id": "order_store"}, "VAL_MISSING_FIELD"),
        ("validate_fix", {"fix_description": "x", "component_id": "order_store", "affected_files": "a.py"},
         "VAL_INVALID_FIELD_TYPE"),
    ],
)  # fmt: skip
async def test_bad_inputs(
    stores: tuple[Client, dict[str, str]], tool: str, args: dict[str, Any], code: str
) -> None:
    client, _ = stores
    error = await call_error(client, tool, args)
    assert error["code"] == code, error
    if code.startswith("NF_"):
        assert "Did you mean" in error["suggestion"] or "Known" in error["suggestion"], error
