"""Seed 002's schemas and the request-level rules of the memory-interface-v1 profile.

The published input schemas are compared with the seed's own JSON, key by key: every required
list, const, enum, bound, default and ``uniqueItems`` the seed gives is ours. The rules that need
stored memories (problem links, repositories, fact-update kinds) run against the real engine in
tests/e2e/test_profile_interface_v1.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.validation import validate_input
from memory_service.profiles.interface_v1 import mapping as v1
from memory_service.profiles.interface_v1.schemas import (
    ArchiveState,
    FactUpdateLink,
    ReadRequest,
    UpdateRequest,
    UtilityVote,
    WriteMemory,
    WriteRequest,
    parse_update,
)
from memory_service.profiles.interface_v1.tools import INTERFACE_V1_TOOLS
from memory_service.tools.profiles import tools_for
from tests.conftest import SHARED, missing
from tests.schema_contains import schema_problems

# Documentation, and the seed's "$id" (a schema id, not a constraint: two tools publishing the
# same $id can break clients that compile every schema into one validator).
IGNORED_KEYS = {"description", "$id"}
PID = "11111111-2222-3333-4444-555555555555"


def _seed_requests() -> dict[str, dict[str, Any]]:
    """The seed's request schemas by $id (memory.read.request ...), read from the seed itself."""
    seeds = sorted((SHARED / "seeds").glob("002_*.txt"))
    if not seeds:
        missing(f"seed 002 not found under {SHARED / 'seeds'}: check out ../shared beside this repository")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", seeds[0].read_text(), re.S)]
    return {b["$id"]: b for b in blocks if "$id" in b}


def _contains(seed: Any, ours: Any, path: str) -> list[str]:
    return schema_problems(seed, ours, path, IGNORED_KEYS)


SPECS = {spec.seed_name: spec for spec in INTERFACE_V1_TOOLS}


@pytest.mark.parametrize("op", ["read", "write", "update"])
def test_published_schema_holds_the_seed(op: str) -> None:
    seed = _seed_requests()[f"memory.{op}.request"]
    ours = SPECS[f"memory.{op}"].input_schema()
    assert _contains(seed, ours, f"memory.{op}") == []


def test_the_comparison_catches_a_difference() -> None:
    """The key-by-key check is not vacuous: a changed default or bound is reported."""
    seed = _seed_requests()["memory.read.request"]
    ours = SPECS["memory.read"].input_schema()
    ours["properties"]["limit"]["default"] = 10
    ours["properties"]["expand"]["properties"]["semantic_hops"]["maximum"] = 5
    problems = _contains(seed, ours, "read")
    assert any("limit.default" in p for p in problems)
    assert any("semantic_hops.maximum" in p for p in problems)


def test_update_is_published_as_one_of_three_objects() -> None:
    schema = SPECS["memory.update"].input_schema()["properties"]["update"]
    assert schema["type"] == "object" and "discriminator" not in schema
    consts = [branch["properties"]["type"]["const"] for branch in schema["oneOf"]]
    assert consts == ["archive_state", "utility_vote", "fact_update_link"]
    assert "$ref" not in json.dumps(schema)


def test_tool_names_legal_by_default_and_seed_on_request() -> None:
    legal = tools_for("memory-interface-v1")
    assert [s.name for s in legal.tools] == ["memory-read", "memory-write", "memory-update"]
    assert legal.aliases["memory.read"] == "memory-read"
    seed = tools_for("memory-interface-v1", "seed")
    assert [s.name for s in seed.tools] == ["memory.read", "memory.write", "memory.update"]


# --------------------------------------------------------------------------- request checks


def _read(**extra: Any) -> dict[str, Any]:
    return {"op": "read", "repo_id": "repo-a", "mode": "targeted", "query": "retry payments", **extra}


def _write(**memory: Any) -> dict[str, Any]:
    body = {"text": "Payments retry three times", "scope": "repo", "kind": "fact", "confidence": 0.8}
    return {"op": "write", "repo_id": "repo-a", "memory": {**body, **memory}}


def _refused(model: Any, args: dict[str, Any]) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        validate_input(model, args)
    return info.value


def test_read_defaults_are_the_seeds() -> None:
    req = validate_input(ReadRequest, _read())
    assert req.limit == 20 and req.include_global is True and req.kinds is None
    assert req.expand is None  # filled in by the mapping: Expand() below
    expand = validate_input(ReadRequest, _read(expand={})).expand
    assert expand is not None
    assert (expand.semantic_hops, expand.include_problem_links, expand.include_fact_update_links) == (
        2,
        True,
        True,
    )


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        (_read(op="write"), "VAL_INVALID_ENUM", "op"),
        ({k: v for k, v in _read().items() if k != "repo_id"}, "VAL_MISSING_FIELD", "repo_id"),
        (_read(repo_id=""), "VAL_EMPTY", "repo_id"),
        (_read(mode="startup"), "VAL_INVALID_ENUM", "mode"),
        (_read(query=""), "VAL_EMPTY", "query"),
        (_read(limit=0), "VAL_OUT_OF_RANGE", "limit"),
        (_read(limit=101), "VAL_OUT_OF_RANGE", "limit"),
        (_read(kinds=["fact", "design"]), "VAL_INVALID_ENUM", "kinds[1]"),
        (_read(kinds=["fact", "fact"]), "VAL_INVALID_VALUE", "kinds"),
        (_read(expand={"semantic_hops": 4}), "VAL_OUT_OF_RANGE", "expand.semantic_hops"),
        (_read(expand={"hops": 1}), "VAL_UNKNOWN_FIELD", "expand.hops"),
        (_read(branch="main"), "VAL_UNKNOWN_FIELD", "branch"),
    ],
)
def test_bad_reads_are_refused(args: dict[str, Any], code: str, field: str) -> None:
    error = _refused(ReadRequest, args)
    assert (error.code, error.details["field"]) == (code, field)


@pytest.mark.parametrize("repo_id", ["*", "_global", "  ", "repo\x00a"])
def test_reserved_or_malformed_repo_ids_are_refused(repo_id: str) -> None:
    error = _refused(ReadRequest, _read(repo_id=repo_id))
    assert error.details["field"] == "repo_id"
    assert error.code in ("VAL_INVALID_VALUE", "VAL_EMPTY")


@pytest.mark.parametrize(
    ("memory", "code", "field"),
    [
        ({"confidence": 7}, "VAL_OUT_OF_RANGE", "memory.confidence"),
        ({"confidence": -0.1}, "VAL_OUT_OF_RANGE", "memory.confidence"),
        ({"confidence": None}, "VAL_INVALID_FIELD_TYPE", "memory.confidence"),
        ({"scope": "org"}, "VAL_INVALID_ENUM", "memory.scope"),
        ({"kind": "design"}, "VAL_INVALID_ENUM", "memory.kind"),
        ({"text": "   "}, "VAL_EMPTY", "memory.text"),
        ({"evidence_refs": ["a", "a"]}, "VAL_INVALID_VALUE", "memory.evidence_refs"),
        (
            {"links": {"related_memory_ids": [PID, PID]}},
            "VAL_INVALID_VALUE",
            "memory.links.related_memory_ids",
        ),
        ({"links": {"problem": PID}}, "VAL_UNKNOWN_FIELD", "memory.links.problem"),
        ({"tags": ["x"]}, "VAL_UNKNOWN_FIELD", "memory.tags"),
    ],
)
def test_bad_writes_are_refused(memory: dict[str, Any], code: str, field: str) -> None:
    error = _refused(WriteRequest, _write(**memory))
    assert (error.code, error.details["field"]) == (code, field)


def test_confidence_is_required_at_write_time() -> None:
    args = _write()
    del args["memory"]["confidence"]
    error = _refused(WriteRequest, args)
    assert (error.code, error.details["field"]) == ("VAL_MISSING_FIELD", "memory.confidence")


def test_rationale_and_evidence_are_accepted() -> None:
    req = validate_input(WriteRequest, _write(rationale="seen in the logs", evidence_refs=["log:42"]))
    assert req.memory.rationale == "seen in the logs" and req.memory.evidence_refs == ["log:42"]


# --------------------------------------------------------------------------- update branches


def _update(update: Any, **extra: Any) -> dict[str, Any]:
    return {
        "op": "update",
        "repo_id": "repo-a",
        "memory_id": PID,
        "mode": "dry_run",
        "update": update,
        **extra,
    }


def test_update_branches_are_picked_by_type() -> None:
    cases = [
        ({"type": "archive_state", "archived": True}, ArchiveState),
        ({"type": "utility_vote", "problem_id": PID, "vote": -1}, UtilityVote),
        ({"type": "fact_update_link", "old_fact_id": PID, "new_fact_id": PID}, FactUpdateLink),
    ]
    for body, model in cases:
        req = validate_input(UpdateRequest, _update(body))
        assert isinstance(parse_update(req.update), model)


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"archived": True}, "VAL_MISSING_FIELD", "update.type"),
        ({"type": "delete"}, "VAL_INVALID_ENUM", "update.type"),
        ({"type": "archive_state"}, "VAL_MISSING_FIELD", "update.archived"),
        ({"type": "archive_state", "archived": True, "vote": 1}, "VAL_UNKNOWN_FIELD", "update.vote"),
        ({"type": "utility_vote", "problem_id": PID, "vote": 2}, "VAL_OUT_OF_RANGE", "update.vote"),
        ({"type": "utility_vote", "vote": 1}, "VAL_MISSING_FIELD", "update.problem_id"),
        ({"type": "fact_update_link", "old_fact_id": PID}, "VAL_MISSING_FIELD", "update.new_fact_id"),
        (
            {"type": "fact_update_link", "old_fact_id": PID, "new_fact_id": PID, "evidence_refs": ["x", "x"]},
            "VAL_INVALID_VALUE",
            "update.evidence_refs",
        ),
    ],
)
def test_bad_update_branches_name_the_seed_field(body: dict[str, Any], code: str, field: str) -> None:
    req = validate_input(UpdateRequest, _update(body))
    with pytest.raises(ValidationError) as info:
        parse_update(req.update)
    assert (info.value.code, info.value.details["field"]) == (code, field)


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        (_update({"type": "archive_state", "archived": True}, op="read"), "VAL_INVALID_ENUM", "op"),
        (_update({"type": "archive_state", "archived": True}, mode="apply"), "VAL_INVALID_ENUM", "mode"),
        (_update("archive"), "VAL_INVALID_FIELD_TYPE", "update"),
    ],
)
def test_bad_update_requests_are_refused(args: dict[str, Any], code: str, field: str) -> None:
    error = _refused(UpdateRequest, args)
    assert (error.code, error.details["field"]) == (code, field)


# --------------------------------------------------------------------------- semantic rules


def test_a_change_needs_evidence_and_a_fact_does_not() -> None:
    change = WriteMemory(text="Moved retries to the queue", scope="repo", kind="change", confidence=0.9)
    with pytest.raises(ValidationError) as info:
        v1.check_evidence(change)
    assert (info.value.code, info.value.details["field"]) == ("VAL_EVIDENCE_REQUIRED", "memory.evidence_refs")
    v1.check_evidence(change.model_copy(update={"evidence_refs": ["commit:3f2a91c"]}))
    v1.check_evidence(WriteMemory(text="Retries run in the queue", scope="repo", kind="fact", confidence=0.4))


def test_service_errors_are_renamed_to_the_requests_fields() -> None:
    error = ValidationError(
        "A 'solution' memory must be linked to the problem it addresses",
        code="VAL_PROBLEM_LINK_REQUIRED",
        details={"field": "metadata.problem_id"},
        suggestion="Add metadata.problem_id ... memory_add type='problem' ...",
    )
    renamed = v1.in_seed_terms(error, v1.WRITE_FIELDS)
    assert renamed.code == "VAL_PROBLEM_LINK_REQUIRED"
    assert renamed.details["field"] == "memory.links.problem_id"
    assert "memory_add" not in renamed.suggestion and "memory.write" in renamed.suggestion
    target = NotFoundError(
        "gone", code="NF_RELATIONSHIP_TARGET", details={"field": "relationships[1].target_id"}
    )
    assert v1.in_seed_terms(target, v1.WRITE_FIELDS).details["field"] == "memory.links.related_memory_ids[1]"
    change = NotFoundError(
        "gone", code="NF_MEMORY", details={"field": "change_id"}, suggestion="memory_search"
    )
    renamed = v1.in_seed_terms(change, v1.UPDATE_FIELDS)
    assert (renamed.details["field"], renamed.suggestion) == ("memory_id", "memory.read")
