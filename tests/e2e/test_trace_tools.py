"""trace_requirements and get_design_context through the MCP client, on the profile's engines.

The fixture project (tests/fixtures/traceproject) is copied into the server's root and indexed;
the memories are written through memory_add, so every link traced here was made by reference
extraction at write time (docs/relationships.md), none by hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.e2e.conftest import TRACE_PROJECT, call_error, call_ok, fixture_project

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

FIXTURE = TRACE_PROJECT
LEDGER_PY = "billing/ledger.py"
POST_ENTRY = f"{LEDGER_PY}::post_entry#function"


def _requirement(rid: str, title: str, status: str, content: str) -> dict[str, Any]:
    meta = {"requirement_id": rid, "title": title, "status": status}
    return {"type": "requirements", "content": content, "metadata": meta}


def _component(cid: str, name: str, path: str, content: str, **more: Any) -> dict[str, Any]:
    meta = {"component_id": cid, "name": name, "file_path": path, **more}
    return {"type": "component", "content": content, "metadata": meta}


MEMORIES: list[tuple[str, dict[str, Any]]] = [
    ("led", _requirement("REQ-LED-001", "Post ledger entries", "Approved", "The ledger posts entries.")),
    ("pay", _requirement("REQ-PAY-002", "Charge at checkout", "Proposed", "Checkout charges the card.")),
    ("refund", _requirement("REQ-PAY-003", "Refunds", "Draft", "Refunds go back to the card.")),
    ("ledger", _component("ledger", "Ledger", LEDGER_PY, "Ledger component; implements REQ-LED-001.")),
    ("gateway", _component("gateway", "Gateway", "payments/gateway.ts", "Card gateway component.")),
    ("payments", _component("payments", "Payments", "payments/checkout.ts", "Checkout for REQ-PAY-002.",
                            dependencies=["ledger"])),
    ("adr", {"type": "design", "content": "ADR-7: every posting is double-entry; see `Ledger.post`.",
             "metadata": {"design_type": "ADR", "title": "ADR-7 Double-entry ledger", "status": "accepted",
                          "component": "ledger", "related_requirements": ["REQ-LED-001"]}}),
    ("pattern", {"type": "code_pattern", "content": "Post through `billing/ledger.py` so retries are safe.",
                 "metadata": {"pattern_name": "Idempotent posting", "component": "ledger",
                              "usage_context": "Posting entries that a client may retry"}}),
    ("t_ok", {"type": "test_history", "content": "Ledger post test for REQ-LED-001.",
              "metadata": {"test_name": "tests/ledger_spec.py::test_post_entry", "status": "passed"}}),
    ("t_bad", {"type": "test_history", "content": "Zero posting test for REQ-LED-001.",
               "metadata": {"test_name": "tests/ledger_spec.py::test_post_rejects_zero", "status": "FAILED",
                            "error_message": "ValueError: zero amount"}}),
]  # fmt: skip


@pytest.fixture(scope="module")
async def traced(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    async with fixture_project(tmp_path_factory, "trace", MEMORIES) as project:
        yield project


async def test_trace_finds_implementations_design_and_tests(traced: tuple[Client, dict[str, str]]) -> None:
    client, ids = traced
    out = await call_ok(client, "trace_requirements", {"requirement_id": "req-led-001"})
    assert out["requirement"] == {
        "requirement_id": "REQ-LED-001", "title": "Post ledger entries", "status": "Approved",
        "memory_id": ids["led"],
    }  # fmt: skip
    impls = {
        (i["component_id"], i["kind"], i["relationship"], i["completeness"]) for i in out["implementations"]
    }
    assert impls == {(POST_ENTRY, "Function", "NAMES", 1.0), (ids["ledger"], "component", "IMPLEMENTS", 1.0)}
    assert [(d["memory_id"], d["type"]) for d in out["design_documents"]] == [(ids["adr"], "ADR")]
    assert "double-entry" in out["design_documents"][0]["excerpt"]
    tests = [(t["test_name"], t["status"], t["memory_id"]) for t in out["tests"]]
    assert tests == [
        ("tests/ledger_spec.py::test_post_entry", "passed", ids["t_ok"]),
        ("tests/ledger_spec.py::test_post_rejects_zero", "failed", ids["t_bad"]),
    ]
    assert out["coverage"] == {"implementation": 1.0, "testing": 0.5}
    assert out["completeness"] == 0.8
    assert "1 of 2 test(s) passed" in out["basis"] and "1 design document(s)" in out["basis"]


async def test_more_evidence_raises_completeness(traced: tuple[Client, dict[str, str]]) -> None:
    client, ids = traced
    refund = await call_ok(client, "trace_requirements", {"requirement_id": ids["refund"]})
    assert refund["implementations"] == refund["tests"] == refund["design_documents"] == []
    assert refund["coverage"] == {"implementation": 0.0, "testing": 0.0} and refund["completeness"] == 0.0
    before = await call_ok(client, "trace_requirements", {"requirement_id": "REQ-PAY-002"})
    names = {i["name"] for i in before["implementations"]}
    assert names == {"Payments", "checkout"}  # the component memory, the function naming the id
    assert before["coverage"] == {"implementation": 1.0, "testing": 0.0}
    history = {"test_name": "checkout charges", "status": "passed"}
    body = {"type": "test_history", "content": "Checkout e2e for REQ-PAY-002.", "metadata": history}
    await call_ok(client, "memory_add", body)
    after = await call_ok(client, "trace_requirements", {"requirement_id": "REQ-PAY-002"})
    assert after["tests"][0]["status"] == "passed" and after["coverage"]["testing"] == 1.0
    assert refund["completeness"] < before["completeness"] < after["completeness"]


async def test_design_context_of_a_component(traced: tuple[Client, dict[str, str]]) -> None:
    client, ids = traced
    out = await call_ok(client, "get_design_context", {"component_id": "Ledger"})
    assert out["component"]["memory_id"] == ids["ledger"] and out["component"]["files"] == [LEDGER_PY]
    assert [r["requirement_id"] for r in out["requirements"]] == ["REQ-LED-001"]
    assert [d["title"] for d in out["design_documents"]] == ["ADR-7 Double-entry ledger"]
    assert out["patterns"] == [
        {"name": "Idempotent posting", "usage_context": "Posting entries that a client may retry",
         "memory_id": ids["pattern"]}
    ]  # fmt: skip
    assert out["dependencies"] == []
    assert [(d["component_id"], d["via"]) for d in out["dependents"]] == [("payments", "DEPENDS_ON")]
    assert out.get("code") is None
    with_code = await call_ok(client, "get_design_context", {"component_id": "ledger", "include_code": True})
    assert [(c["name"], c["kind"]) for c in with_code["code"]] == [
        ("post_entry", "function"), ("Ledger", "class"), ("Ledger.post", "method"),
    ]  # fmt: skip
    assert with_code["code"][0]["signature"].startswith("def post_entry(account: str, amount: int)")


async def test_design_context_follows_code_between_components(traced: tuple[Client, dict[str, str]]) -> None:
    client, ids = traced
    out = await call_ok(client, "get_design_context", {"component_id": ids["payments"]})
    deps = {(d["component_id"], d["via"]) for d in out["dependencies"]}
    assert {("ledger", "DEPENDS_ON"), ("gateway", "IMPORTS"), ("gateway", "CALLS")} <= deps, deps
    gateway = await call_ok(client, "get_design_context", {"component_id": "gateway"})
    assert {(d["component_id"], d["via"]) for d in gateway["dependents"]} >= {("payments", "IMPORTS")}


async def test_design_context_of_a_file_or_module(traced: tuple[Client, dict[str, str]]) -> None:
    """No component memory is asked for: the requirements come from what the code implements
    (its docstrings naming the id, as the indexer links them), the decisions from the requirements."""
    client, ids = traced
    for key in (LEDGER_PY, "billing.ledger", "billing", "billing/"):
        out = await call_ok(client, "get_design_context", {"component_id": key})
        assert out["component"]["files"] == [LEDGER_PY], (key, out)
        assert out["component"]["kind"] == ("file" if key == LEDGER_PY else "module")
        assert out["component"]["components"] == ["ledger"]  # the component memory containing it
        assert [(r["requirement_id"], r["memory_id"]) for r in out["requirements"]] == [
            ("REQ-LED-001", ids["led"])
        ], (key, out)
        assert [d["memory_id"] for d in out["design_documents"]] == [ids["adr"]], (key, out)
        assert [p["memory_id"] for p in out["patterns"]] == [ids["pattern"]]  # it names the file
    # Re-indexed now that the requirement exists, the indexer's IMPLEMENTS edges give the same.
    await call_ok(client, "index_file", {"file_path": LEDGER_PY, "force": True})
    again = await call_ok(client, "get_design_context", {"component_id": LEDGER_PY, "include_code": True})
    assert [r["requirement_id"] for r in again["requirements"]] == ["REQ-LED-001"]
    assert [c["name"] for c in again["code"]] == ["post_entry", "Ledger", "Ledger.post"]
    # A decision linked to the requirement only (it names no code) is reached through it.
    meta = {"design_type": "ADR", "title": "ADR-12 One charge per order", "status": "accepted",
            "related_requirements": ["REQ-PAY-002"]}  # fmt: skip
    body = {"type": "design", "content": "A retried order reuses its first charge.", "metadata": meta}
    adr12 = (await call_ok(client, "memory_add", body))["memory_id"]
    checkout = await call_ok(client, "get_design_context", {"component_id": "payments/checkout.ts"})
    assert [r["requirement_id"] for r in checkout["requirements"]] == ["REQ-PAY-002"]
    assert [d["memory_id"] for d in checkout["design_documents"]] == [adr12], checkout
    assert ("gateway", "IMPORTS") in {(d["component_id"], d["via"]) for d in checkout["dependencies"]}
    # Tests name REQ-LED-001 too, but a test tests a requirement, it does not implement it.
    spec = await call_ok(client, "get_design_context", {"component_id": "tests/ledger_spec.py"})
    assert spec["requirements"] == [] and spec["component"]["kind"] == "file"
    # A file without requirement ids: an empty but well-formed context.
    gateway = await call_ok(client, "get_design_context", {"component_id": "payments/gateway.ts"})
    assert gateway["requirements"] == [] and gateway["component"]["components"] == ["gateway"]


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("trace_requirements", {"requirement_id": "REQ-LED-01"}, "NF_REQUIREMENT"),
        ("trace_requirements", {"requirement_id": "00000000-0000-4000-8000-000000000000"}, "NF_REQUIREMENT"),
        ("trace_requirements", {}, "VAL_MISSING_FIELD"),
        ("trace_requirements", {"requirement_id": "  "}, "VAL_EMPTY"),
        ("get_design_context", {"component_id": "ledgr"}, "NF_COMPONENT"),
        ("get_design_context", {"component_id": "billing/nothing.py"}, "NF_COMPONENT"),
        ("get_design_context", {"component_id": "ledger", "include_code": "maybe"}, "VAL_INVALID_FIELD_TYPE"),
        ("get_design_context", {"component_id": "ledger", "extra": 1}, "VAL_UNKNOWN_FIELD"),
    ],
)
async def test_bad_inputs(
    traced: tuple[Client, dict[str, str]], tool: str, args: dict[str, Any], code: str
) -> None:
    client, _ = traced
    error = await call_error(client, tool, args)
    assert error["code"] == code, error
    if code.startswith("NF_"):
        assert "Did you mean" in error["suggestion"] or "Known" in error["suggestion"], error


def test_fixture_is_present() -> None:
    assert (FIXTURE / LEDGER_PY).is_file() and Path(FIXTURE / "payments" / "checkout.ts").is_file()
