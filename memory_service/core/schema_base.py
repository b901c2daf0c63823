"""What every tool's input and output models share: strictness, openness, JSON-schema snippets.

Inputs refuse unknown fields (a misspelt argument is an error, not silently ignored); outputs
allow extra fields (seed 001 §9.3: consumers ignore what they do not know).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import JsonDict

UUID_FORMAT: JsonDict = {"format": "uuid"}
DATETIME_FORMAT: JsonDict = {"format": "date-time"}


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolOutput(BaseModel):
    model_config = ConfigDict(extra="allow")


def enum_of(*values: str) -> JsonDict:
    """A published enum for a field typed as plain ``str`` (validated elsewhere)."""
    return {"enum": list(values)}
