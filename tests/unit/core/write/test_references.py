"""Reference extraction (core/write/references.py): what a memory names, and which edge it makes."""

from __future__ import annotations

from memory_service.core.code.context import module_matches
from memory_service.core.write.references import (
    CODE,
    COMPONENT,
    REQUIREMENT,
    References,
    classify_code_token,
    edge_rule,
    extract,
    requirement_ids,
)


def test_requirement_ids_are_found_in_order_once() -> None:
    text = "Covers REQ-MEM-FN-080 and REQ-mem-fn-081; again REQ-MEM-FN-080. Not PREREQ-1, req-2, REQ."
    assert requirement_ids(text) == ["REQ-MEM-FN-080", "REQ-MEM-FN-081"]


def test_a_requirement_does_not_reference_itself() -> None:
    meta = {"requirement_id": "REQ-A-1", "title": "Depends on REQ-A-2"}
    assert extract("requirements", "REQ-A-1 needs REQ-A-3.", meta).requirements == ("REQ-A-2", "REQ-A-3")


def test_metadata_lists_and_strings_are_read() -> None:
    meta = {"related_requirements": ["REQ-X-1", "REQ-X-2"], "component": "ledger", "file_path": "src/a.py"}
    refs = extract("design", "No ids here.", meta)
    assert refs == References(
        requirements=("REQ-X-1", "REQ-X-2"), components=("ledger",), files=("src/a.py",)
    )


def test_a_component_names_its_dependencies_but_not_itself() -> None:
    meta = {"component_id": "payments", "name": "Payments", "dependencies": ["ledger", "payments"]}
    assert extract("component", "Payments component.", meta).components == ("ledger",)


def test_backticked_code_tokens() -> None:
    content = "See `src/billing.py`, `Ledger.post`, `post_entry()`, `src/b.py::Ledger.post`, `x`, `REQ-A-1`."
    refs = extract("code_pattern", content, {})
    assert refs.files == ("src/billing.py",)
    assert refs.units == ("Ledger.post", "post_entry", "src/b.py::Ledger.post")
    assert refs.requirements == ("REQ-A-1",)


def test_classify_code_token() -> None:
    assert classify_code_token("./web/app.ts") == ("file", "./web/app.ts")
    assert classify_code_token("ledger.py") == ("file", "ledger.py")
    assert classify_code_token("a/b.py::C.m#method") == ("unit", "a/b.py::C.m")
    assert classify_code_token("memory_add") == (None, "memory_add")
    assert classify_code_token("x == y") == (None, "x == y")


def test_function_memories_name_their_unit_with_its_file() -> None:
    refs = extract("function", "Posts.", {"name": "post_entry", "file_path": "billing/ledger.py"})
    assert refs.units == ("billing/ledger.py::post_entry",) and refs.files == ("billing/ledger.py",)


def test_edge_rules() -> None:
    assert edge_rule("design", REQUIREMENT) == ("SATISFIES", False)
    assert edge_rule("code_pattern", REQUIREMENT) == ("IMPLEMENTS", False)
    assert edge_rule("test_history", REQUIREMENT) == ("TESTS", False)
    assert edge_rule("design", COMPONENT) == ("DOCUMENTED_IN", True)
    assert edge_rule("code_pattern", CODE) == ("FOLLOWS_PATTERN", True)
    assert edge_rule("component", CODE) == ("CONTAINS", False)
    assert edge_rule("session", REQUIREMENT) == ("RELATED_TO", False)


def test_empty_references_are_falsy() -> None:
    assert not extract("session", "Nothing to see.", {})


def test_module_names_match_files() -> None:
    assert module_matches("./gateway", "payments/gateway.ts")
    assert module_matches("billing.ledger", "billing/ledger.py")
    assert not module_matches("billing.ledger", "billing/ledgers.py")
    assert not module_matches(".", "billing/ledger.py")
