"""Seed 003 ("cortex-os"), pure rules: each field's limits as the seed states them, how a kind is
stored, how a replacing update becomes a merge, and how our errors read in seed 003's envelope."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from memory_service.core.errors import (
    ConflictError,
    InternalError,
    MemoryServiceError,
    NotFoundError,
    SecurityError,
    ServiceUnavailableError,
    ValidationError,
)
from memory_service.profiles.cortex_os import mapping as cx
from memory_service.profiles.cortex_os.schemas import (
    DeleteInput,
    RetrieveInput,
    StatsData,
    StatsDetails,
    StatsInput,
    StoreInput,
    UpdateInput,
)
from memory_service.profiles.cortex_os.tools import CORTEX_OS_TOOLS, detail_strings, seed_code

STORE = {"kind": "note", "text": "Launch checklist"}


def refused(model: type[Any], arguments: dict[str, Any]) -> MemoryServiceError:
    with pytest.raises(MemoryServiceError) as caught:
        cx.parse(model, arguments)
    return caught.value


def problems(error: MemoryServiceError) -> list[str]:
    listed = error.details["problems"]
    assert listed and all(isinstance(p, str) and p for p in listed), listed
    return listed


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"level": value}
    return value


# --------------------------------------------------------------------------- memory_store


def test_store_trims_text_and_cleans_tags() -> None:
    req = cx.parse(StoreInput, {**STORE, "text": "  hello  ", "tags": [" a ", "a", "b", "  "]})
    assert req.text == "hello"
    assert req.tags == ["a", "b"]
    assert req.metadata is None


def test_store_accepts_the_limits_themselves() -> None:
    req = cx.parse(
        StoreInput,
        {
            "kind": "k" * 32,
            "text": "x" * 8192,
            "tags": [f"{i:0>64}" for i in range(32)],
            "metadata": {**{f"k{i}": i for i in range(49)}, "deep": nested(3)},
        },
    )
    assert len(req.text) == 8192 and len(req.tags) == 32


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_text_is_refused_with_the_seed_message(text: str) -> None:
    error = refused(StoreInput, {**STORE, "text": text})
    assert isinstance(error, ValidationError) and not isinstance(error, SecurityError)
    assert problems(error) == ["text: Text content cannot be empty"]


def test_text_over_8192_characters_is_refused_after_trimming() -> None:
    assert cx.parse(StoreInput, {**STORE, "text": " " + "x" * 8192 + " "}).text == "x" * 8192
    error = refused(StoreInput, {**STORE, "text": "x" * 8193})
    assert problems(error)[0].startswith("text: ") and "8192" in problems(error)[0]


@pytest.mark.parametrize("kind", ["", "k" * 33, "no spaces", "sl/ash", "ümlaut", "semi;colon"])
def test_bad_kinds_are_refused(kind: str) -> None:
    error = refused(StoreInput, {**STORE, "kind": kind})
    assert problems(error)[0].startswith("kind: ")


@pytest.mark.parametrize("kind", ["note", "meeting-notes", "a.b_c-D9", "k" * 32])
def test_good_kinds_pass(kind: str) -> None:
    assert cx.parse(StoreInput, {**STORE, "kind": kind}).kind == kind


def test_33_distinct_tags_are_refused() -> None:
    error = refused(StoreInput, {**STORE, "tags": [f"t{i}" for i in range(33)]})
    assert problems(error)[0].startswith("tags: ")


def test_a_65_character_tag_is_refused() -> None:
    error = refused(StoreInput, {**STORE, "tags": ["x" * 65]})
    assert problems(error)[0].startswith("tags: ") and "64" in problems(error)[0]


@pytest.mark.parametrize(
    ("metadata", "says"),
    [
        ({f"k{i}": i for i in range(51)}, "51 keys"),
        (nested(5), "5 levels"),
        ({"blob": "x" * 8200}, "bytes"),
        ({"tags": ["a"]}, "'tags'"),
    ],
)
def test_metadata_limits(metadata: dict[str, Any], says: str) -> None:
    error = refused(StoreInput, {**STORE, "metadata": metadata})
    assert not isinstance(error, SecurityError)
    assert problems(error)[0].startswith("metadata: ") and says in problems(error)[0]


def test_metadata_must_be_a_plain_object() -> None:
    for value in (["a"], "text", 3):
        assert problems(refused(StoreInput, {**STORE, "metadata": value}))[0].startswith("metadata")


@pytest.mark.parametrize(
    "metadata",
    [
        {"__proto__": {"admin": True}},
        {"constructor": {"prototype": {"x": 1}}},
        {"ok": {"deeper": [{"__secret": 1}]}},
        {"prototype": 1},
    ],
)
def test_prototype_pollution_keys_are_a_security_error(metadata: dict[str, Any]) -> None:
    error = refused(StoreInput, {**STORE, "metadata": metadata})
    assert isinstance(error, SecurityError) and error.code == "SEC_UNSAFE_KEY"
    assert all(p.startswith("metadata.") for p in problems(error))


def test_security_is_reported_before_other_problems() -> None:
    error = refused(StoreInput, {"kind": "bad kind", "text": "", "metadata": {"__proto__": {}}})
    assert isinstance(error, SecurityError)


def test_every_problem_of_a_call_is_listed() -> None:
    error = refused(StoreInput, {"kind": "bad kind", "text": " ", "tags": ["x" * 65]})
    fields = [p.split(":", 1)[0] for p in problems(error)]
    assert fields == ["kind", "text", "tags"]
    assert error.message.startswith("Invalid input provided: kind: ")


def test_unknown_and_missing_fields_are_refused() -> None:
    assert problems(refused(StoreInput, {"kind": "note"})) == ["text: Field required"]
    assert problems(refused(StoreInput, {**STORE, "colour": "red"}))[0].startswith("colour: ")


# --------------------------------------------------------------------------- memory_retrieve


def test_retrieve_limit_defaults_to_10_and_is_capped_at_100() -> None:
    assert cx.parse(RetrieveInput, {"query": "launch"}).limit == 10
    assert cx.parse(RetrieveInput, {"query": "launch", "limit": 250}).limit == 100


@pytest.mark.parametrize("limit", [0, -1, 2.5, "many"])
def test_retrieve_limit_must_be_a_positive_integer(limit: Any) -> None:
    assert problems(refused(RetrieveInput, {"query": "launch", "limit": limit}))[0].startswith("limit: ")


@pytest.mark.parametrize("query", ["", "   "])
def test_retrieve_needs_a_query(query: str) -> None:
    assert problems(refused(RetrieveInput, {"query": query}))


def test_retrieve_tags_are_sanitised_like_store_tags() -> None:
    req = cx.parse(RetrieveInput, {"query": "q", "tags": [" launch", "launch ", "ops"], "kind": "note"})
    assert req.tags == ["launch", "ops"]
    assert problems(refused(RetrieveInput, {"query": "q", "kind": "no spaces"}))[0].startswith("kind: ")


# --------------------------------------------------------------------------- memory_update / delete


def test_update_needs_something_to_change() -> None:
    error = refused(UpdateInput, {"id": "mem-safe"})
    assert problems(error) == ["At least one of text, tags or metadata must be provided"]
    assert cx.parse(UpdateInput, {"id": "mem-safe", "tags": []}).tags == []


@pytest.mark.parametrize("memory_id", ["ab", "x" * 129, "has space", "slash/id", ""])
def test_bad_ids_are_refused(memory_id: str) -> None:
    assert problems(refused(DeleteInput, {"id": memory_id}))[0].startswith("id: ")
    assert problems(refused(UpdateInput, {"id": memory_id, "text": "t"}))[0].startswith("id: ")


@pytest.mark.parametrize("memory_id", ["mem-safe", "mem-1736951112345", "a:b.c_d-e", "x" * 128])
def test_good_ids_pass(memory_id: str) -> None:
    assert cx.parse(DeleteInput, {"id": memory_id}).id == memory_id


def test_update_metadata_has_the_store_rules() -> None:
    assert isinstance(refused(UpdateInput, {"id": "abc", "metadata": {"__x": 1}}), SecurityError)
    assert problems(refused(UpdateInput, {"id": "abc", "metadata": nested(5)}))[0].startswith("metadata")
    assert problems(refused(UpdateInput, {"id": "abc", "text": "  "})) == [
        "text: Text content cannot be empty"
    ]


# --------------------------------------------------------------------------- stats


def test_stats_details_default_off_and_absent_from_the_answer() -> None:
    assert cx.parse(StatsInput, {}).includeDetails is False
    bare = StatsData(totalItems=0, totalSize=0, itemsByKind={}, lastActivity=None)
    assert "details" not in bare.model_dump(mode="json")
    details = StatsDetails(storageBackend="qdrant-edge", indexedFields=["kind"], averageItemSize=0)
    shown = StatsData(totalItems=0, totalSize=0, itemsByKind={}, lastActivity=None, details=details)
    assert shown.model_dump(mode="json")["details"]["storageBackend"] == "qdrant-edge"


def test_indexed_fields_name_the_engine_indexes_in_seed_terms() -> None:
    assert set(cx.indexed_fields()) >= {"kind", "tags", "createdAt", "text"}


# --------------------------------------------------------------------------- mapping


def test_a_type_is_stored_as_itself_any_other_kind_as_a_labelled_note() -> None:
    assert cx.split_kind("note") == ("note", None)
    assert cx.split_kind("design") == ("design", None)
    assert cx.split_kind("meeting-notes") == ("note", "meeting-notes")
    assert cx.split_kind("Note") == ("note", "Note")


def test_a_replacement_becomes_a_merge_that_removes_what_it_lacks() -> None:
    current = {"a": 1, "b": 2, "tags": ["x"]}
    assert cx.replacement(current, {"b": 3, "c": 4}, None) == {"a": None, "b": 3, "c": 4}
    assert cx.replacement(current, None, ["y"]) == {"tags": ["y"]}
    assert cx.replacement(current, None, []) == {"tags": None}
    assert cx.replacement(current, {}, None) == {"a": None, "b": None}
    assert cx.replacement(current, None, None) == {}


def test_timestamps_are_utc_with_milliseconds_and_z() -> None:
    moment = datetime(2025, 1, 15, 20, 5, 12, 382_999, tzinfo=timezone(timedelta(hours=2)))
    assert cx.iso_ms(moment) == "2025-01-15T18:05:12.382Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", cx.iso_ms(datetime.now(UTC)))


# --------------------------------------------------------------------------- envelope


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ValidationError("m", code="VAL_EMPTY"), "validation_error"),
        (SecurityError("m", code="SEC_UNSAFE_KEY"), "security_error"),
        (NotFoundError("m", code="NF_MEMORY"), "not_found"),
        (ConflictError("m", code="CON_VERSION_MISMATCH"), "validation_error"),
        (ServiceUnavailableError("m"), "internal_error"),
        (InternalError("m"), "internal_error"),
        (MemoryServiceError("m", code="SOMETHING_ELSE"), "internal_error"),
    ],
)
def test_our_codes_map_onto_the_seeds_four(error: MemoryServiceError, code: str) -> None:
    assert seed_code(error) == code


def test_details_are_field_problem_strings() -> None:
    assert detail_strings({"message": "m", "details": {"problems": ["text: bad"]}}) == ["text: bad"]
    listed = {"message": "m", "details": {"errors": [{"field": "a", "problem": "p"}]}}
    assert detail_strings(listed) == ["a: p"]
    assert detail_strings({"message": "gone", "details": {"field": "id"}}) == ["id: gone"]
    assert detail_strings({"message": "broke", "details": {}}) == ["broke"]


def test_the_profile_publishes_the_seeds_five_tools_and_fields() -> None:
    schemas = {spec.name: spec.input_schema() for spec in CORTEX_OS_TOOLS}
    assert list(schemas) == [
        "memory_store",
        "memory_retrieve",
        "memory_update",
        "memory_delete",
        "memory_stats",
    ]
    assert set(schemas["memory_store"]["properties"]) == {"kind", "text", "tags", "metadata"}
    assert schemas["memory_store"]["required"] == ["kind", "text"]
    assert set(schemas["memory_retrieve"]["properties"]) == {"query", "limit", "kind", "tags"}
    assert set(schemas["memory_update"]["properties"]) == {"id", "text", "tags", "metadata"}
    assert set(schemas["memory_delete"]["properties"]) == {"id"}
    assert set(schemas["memory_stats"]["properties"]) == {"includeDetails"}
    for spec in CORTEX_OS_TOOLS:
        out = spec.output_schema()
        assert out is not None
        assert out["required"] == ["success", "data", "correlationId", "timestamp"]
