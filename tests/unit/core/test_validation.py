"""pydantic failures become seed-001 errors with a specific code, the field, and a suggestion."""

from __future__ import annotations

import pytest

from memory_service.core.errors import ValidationError
from memory_service.core.guards import check_metadata, normalise_relationship_type, parse_uuid
from memory_service.core.memory.schemas import MemoryAddInput
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.core.validation import validate_input


def _error(model: type, args: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        validate_input(model, args)
    return info.value


def test_all_problems_are_listed_when_several() -> None:
    err = _error(MemoryAddInput, {"type": "bogus", "content": ""})
    assert err.code == "VAL_INVALID_TYPE"
    assert {e["field"] for e in err.details["errors"]} == {"type", "content"}


def test_non_object_arguments() -> None:
    assert _error(MemoryAddInput, ["a"]).code == "VAL_INVALID_ARGUMENTS"


def test_unknown_field_suggests_the_accepted_ones() -> None:
    err = _error(MemorySearchInput, {"query": "x", "limt": 3})
    assert err.code == "VAL_UNKNOWN_FIELD"
    assert "limit" in err.details["allowed"] and "limit" in err.suggestion


def test_out_of_range_names_the_bound() -> None:
    err = _error(MemorySearchInput, {"query": "x", "limit": 500})
    assert err.code == "VAL_OUT_OF_RANGE" and err.details["bounds"] == {"le": 100}


def test_uuid_is_canonicalised_or_refused() -> None:
    assert parse_uuid("A1B2C3D4-E5F6-4890-ABCD-EF1234567890") == "a1b2c3d4-e5f6-4890-abcd-ef1234567890"
    with pytest.raises(ValidationError) as info:
        parse_uuid("1234")
    assert info.value.code == "VAL_INVALID_UUID"


def test_relationship_types_normalise() -> None:
    assert normalise_relationship_type("depends-on", field="f") == "DEPENDS_ON"
    assert normalise_relationship_type(" Implements ", field="f") == "IMPLEMENTS"
    with pytest.raises(ValidationError):
        normalise_relationship_type("9lives", field="f")


def test_metadata_enums_are_canonical_and_extra_keys_kept() -> None:
    meta = check_metadata("test_history", {"status": "PASSED", "ci_run": 17}, field="metadata")
    assert meta == {"status": "passed", "ci_run": 17}


@pytest.mark.parametrize(
    ("meta", "code"),
    [
        ({"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}, "VAL_METADATA_TOO_DEEP"),
        ({"blob": "x" * 40_000}, "VAL_METADATA_TOO_LARGE"),
        ({"nested": [{"__proto__": 1}]}, "SEC_UNSAFE_KEY"),
        ({"priority": 3}, "VAL_INVALID_ENUM"),
    ],
)
def test_metadata_limits(meta: dict, code: str) -> None:
    with pytest.raises(ValidationError) as info:
        check_metadata("requirements", meta, field="metadata")
    assert info.value.code == code
