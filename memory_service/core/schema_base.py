"""What every tool's input and output models share: strictness, openness, JSON-schema snippets.

Inputs refuse unknown fields (a misspelt argument is an error, not silently ignored); outputs
allow extra fields (seed 001 §9.3: consumers ignore what they do not know).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonDict, SkipJsonSchema
from pydantic_core import PydanticCustomError

# Input bounds (seed 001 §4.3, seed 003 sanitisation): no string reaches a service unbounded.
MAX_TEXT_CHARS = 100_000  # memory content, code snippets: every string without a tighter bound
MAX_QUERY_CHARS = 10_000  # search queries
MAX_PATH_CHARS = 4_096  # file and directory paths (PATH_MAX)
MAX_NAME_CHARS = 64  # languages and other short names

UUID_FORMAT: JsonDict = {"format": "uuid"}


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# A date-time input; one without a zone is read as UTC (the only clock the core keeps).
UtcDatetime = Annotated[datetime, AfterValidator(_utc)]


def _not_blank(value: str) -> str:
    if not value.strip():  # validation.py reports this like an empty string (VAL_EMPTY)
        raise PydanticCustomError("string_blank", "String should not be only whitespace")
    return value


# Text that must say something: empty or whitespace-only is refused.
NonBlank = Annotated[str, AfterValidator(_not_blank)]
DATETIME_FORMAT: JsonDict = {"format": "date-time"}


class ToolInput(BaseModel):
    """Unknown fields are refused; any string without its own ``max_length`` has the default one."""

    model_config = ConfigDict(extra="forbid", str_max_length=MAX_TEXT_CHARS)


class ToolOutput(BaseModel):
    model_config = ConfigDict(extra="allow")


# An output field seed 001 types as a string, number or object that may have no value: it is left
# out of the answer rather than sent as null, and its published type does not admit null.
# Declare it as ``T | Absent = absent_when_none(...)``.
Absent = SkipJsonSchema[None]


def _is_none(value: object) -> bool:
    return value is None


def absent_when_none(**kwargs: Any) -> Any:
    """A field that defaults to None and is left out of the serialised answer while None."""
    return Field(default=None, exclude_if=_is_none, **kwargs)


def enum_of(*values: str) -> JsonDict:
    """A published enum for a field typed as plain ``str`` (validated elsewhere)."""
    return {"enum": list(values)}
