"""Domain checks shared by the services: ids, metadata limits, relationship type names."""

from __future__ import annotations

import json
import math
import re
import uuid
from typing import Any

import pydantic

from memory_service.core.errors import SecurityError, ValidationError
from memory_service.core.metadata import metadata_model
from memory_service.core.redaction.sanitize import clean_text
from memory_service.core.validation import translate

# Seed 003's limits for metadata, widened for design documents: deep enough for structure,
# small enough that one record cannot swamp a response.
MAX_METADATA_BYTES = 32_768
MAX_METADATA_DEPTH = 6
MAX_METADATA_KEYS = 100
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_TAGS = 32  # seed 003
MAX_TAG_CHARS = 64
UNSAFE_KEYS = ("constructor", "prototype")
_REL_TYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")


_ID_SOURCES = {"job_id": "the job_id returned by index_directory or reindex"}


def parse_uuid(value: str, *, field: str = "memory_id") -> str:
    """The canonical (lowercase, hyphenated) form of a UUID, or VAL_INVALID_UUID."""
    source = _ID_SOURCES.get(
        field.rsplit(".", 1)[-1], "the memory_id returned by memory_add or memory_search"
    )
    try:
        return str(uuid.UUID(str(value).strip()))
    except (ValueError, AttributeError, TypeError):
        raise ValidationError(
            f"'{value}' is not a valid UUID",
            code="VAL_INVALID_UUID",
            details={"field": field, "provided": str(value)[:100], "expected": "uuid"},
            suggestion=f"Use {source} (36 characters like 'a1b2c3d4-e5f6-7890-abcd-ef1234567890').",
        ) from None


def check_metadata(memory_type: str, metadata: dict[str, Any], *, field: str) -> dict[str, Any]:
    """Validate type-specific metadata and size limits; returns it with canonical enum spellings."""
    _check_shape(metadata, field)
    if "tags" in metadata:
        metadata = {**metadata, "tags": clean_tags(metadata["tags"], field=f"{field}.tags")}
    model = metadata_model(memory_type)
    try:
        parsed = model.model_validate(metadata)
    except pydantic.ValidationError as exc:
        raise translate(exc, model, field_prefix=f"{field}.") from None
    # Keep what the caller gave (minus nothing), with known fields in canonical form.
    cleaned = parsed.model_dump(mode="json", exclude_unset=True)
    return {**metadata, **cleaned}


def _check_shape(metadata: dict[str, Any], field: str) -> None:
    try:
        encoded = json.dumps(metadata, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"Field '{field}' is not JSON-serialisable: {exc}",
            code="VAL_METADATA_INVALID",
            details={"field": field},
            suggestion="Use only strings, numbers, booleans, null, lists and objects in metadata.",
        ) from None
    bad_number = _bad_number(metadata)
    if bad_number is not None:
        shown = f"an integer of {bad_number.bit_length()} bits" if isinstance(bad_number, int) else bad_number
        raise ValidationError(
            f"Field '{field}' holds a number that cannot be stored: {shown}",
            code="VAL_METADATA_INVALID",
            details={"field": field, "limits": "integers within 64 bits; no NaN or infinity"},
            suggestion="Store very large numbers as strings, and leave out NaN and infinite values.",
        )
    size = len(encoded.encode("utf-8", "surrogatepass"))  # a lone surrogate from a direct caller
    if size > MAX_METADATA_BYTES:
        raise ValidationError(
            f"Field '{field}' is {size} bytes; the limit is {MAX_METADATA_BYTES}",
            code="VAL_METADATA_TOO_LARGE",
            details={"field": field, "max_bytes": MAX_METADATA_BYTES},
            suggestion="Keep metadata small and structured; put long text in 'content'.",
        )
    if len(metadata) > MAX_METADATA_KEYS:
        raise ValidationError(
            f"Field '{field}' has {len(metadata)} keys; the limit is {MAX_METADATA_KEYS}",
            code="VAL_METADATA_TOO_LARGE",
            details={"field": field, "max_keys": MAX_METADATA_KEYS},
            suggestion="Group related keys into nested objects or move detail into 'content'.",
        )
    depth = nesting_depth(metadata)
    if depth > MAX_METADATA_DEPTH:
        raise ValidationError(
            f"Field '{field}' is nested {depth} levels deep; the limit is {MAX_METADATA_DEPTH}",
            code="VAL_METADATA_TOO_DEEP",
            details={"field": field, "max_depth": MAX_METADATA_DEPTH},
            suggestion="Flatten the metadata object.",
        )
    bad = [k for k in all_keys(metadata) if k.startswith("__") or k in UNSAFE_KEYS]
    if bad:
        raise SecurityError(
            f"Field '{field}' contains unsafe keys: {', '.join(sorted(set(bad)))}",
            code="SEC_UNSAFE_KEY",
            details={"field": field, "keys": sorted(set(bad))},
            suggestion="Remove or rename keys that start with '__' or are named "
            "'constructor'/'prototype' (prototype-pollution keys are refused at any depth).",
        )


def clean_tags(tags: Any, *, field: str) -> list[str]:
    """Seed 003's tags: strings, trimmed, unique (first spelling kept), at most 32 of at most 64
    characters; empty ones are dropped."""
    if tags is None:
        return []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValidationError(
            f"Field '{field}' must be a list of strings",
            code="VAL_INVALID_TAGS",
            details={"field": field, "provided_type": type(tags).__name__},
            suggestion='Give tags as a list of short strings, e.g. ["billing", "retry"].',
        )
    cleaned = list(dict.fromkeys(clean_text(t).strip() for t in tags if t.strip()))
    long = [t for t in cleaned if len(t) > MAX_TAG_CHARS]
    if long:
        raise ValidationError(
            f"Field '{field}' has a tag of {len(long[0])} characters; the limit is {MAX_TAG_CHARS}",
            code="VAL_TAG_TOO_LONG",
            details={"field": field, "max_length": MAX_TAG_CHARS, "provided": long[0]},
            suggestion=f"Keep each tag to at most {MAX_TAG_CHARS} characters; put longer text in content.",
        )
    if len(cleaned) > MAX_TAGS:
        raise ValidationError(
            f"Field '{field}' has {len(cleaned)} distinct tags; the limit is {MAX_TAGS}",
            code="VAL_TOO_MANY_TAGS",
            details={"field": field, "max_items": MAX_TAGS, "count": len(cleaned)},
            suggestion=f"Keep at most {MAX_TAGS} tags: the few that find this memory best.",
        )
    return cleaned


def nesting_depth(value: Any) -> int:
    """Levels of nesting: each object and each list is one."""
    if isinstance(value, dict):
        return 1 + max((nesting_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting_depth(v) for v in value), default=0)
    return 0


def _bad_number(value: Any) -> Any:
    """The first number the stores cannot hold: an integer beyond 64 bits, NaN or an infinity."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if not INT64_MIN <= value <= INT64_MAX else None
    if isinstance(value, float):
        return value if math.isnan(value) or math.isinf(value) else None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        if (found := _bad_number(item)) is not None:
            return found
    return None


def all_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value] + [k for v in value.values() for k in all_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in all_keys(v)]
    return []


def normalise_relationship_type(value: str, *, field: str) -> str:
    """'implements' / 'depends-on' → IMPLEMENTS / DEPENDS_ON; anything else is refused."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", value.strip()).strip("_").upper()
    if not _REL_TYPE.match(name):
        raise ValidationError(
            f"Invalid relationship type '{value}'",
            code="VAL_INVALID_RELATIONSHIP_TYPE",
            details={"field": field, "provided": value, "pattern": _REL_TYPE.pattern},
            suggestion="Use a word such as IMPLEMENTS, DEPENDS_ON, TESTS, SUPERSEDES or RELATES_TO "
            "(letters, digits and underscores, starting with a letter).",
        )
    return name
