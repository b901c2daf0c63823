"""Errors stay within the 50K-token cap in every profile's envelope, however much input they
quote: strings too short to cut (each echo is clipped to 200 characters) but many, in emoji."""

from __future__ import annotations

import json

import pytest
from mcp.types import CallToolResult

from memory_service.core.errors import MemoryServiceError, ValidationError
from memory_service.core.tokens import estimate_tokens
from memory_service.profiles.cortex_os.tools import CORTEX_OS_TOOLS
from memory_service.profiles.find_store.tools import FIND_STORE_TOOLS
from memory_service.tools.registry import ToolSpec, error_result
from memory_service.tools.search import SEARCH_TOOLS

CAP = 50_000
ECHO = "🚀" * 200  # as long as an error repeats of one input string


def huge_error() -> MemoryServiceError:
    """About 2,500 echoed strings: ~500,000 characters, ~2M estimated tokens."""
    return ValidationError(
        "Unknown fields " + ECHO,
        code="VAL_UNKNOWN_FIELD",
        details={"field": ECHO, "provided": [[ECHO] * 50 for _ in range(50)]},
        suggestion="Remove " + ECHO,
    )


def text_of(result: CallToolResult) -> str:
    assert result.is_error and result.structured_content is None
    return result.content[0].text  # type: ignore[union-attr]


def test_seed001_error_envelope_is_capped() -> None:
    text = text_of(error_result(huge_error(), CAP))
    assert estimate_tokens(text) <= CAP
    error = json.loads(text)["error"]
    assert error["code"] == "VAL_UNKNOWN_FIELD" and error["suggestion"]
    assert 0 < len(error["details"]["provided"]) < 50


@pytest.mark.parametrize(
    "spec",
    [SEARCH_TOOLS[0], CORTEX_OS_TOOLS[0], FIND_STORE_TOOLS[0]],
    ids=lambda spec: spec.name,
)
def test_every_profile_envelope_caps_its_errors(spec: ToolSpec) -> None:
    text = text_of(spec.envelope.failure(spec, huge_error(), CAP))
    assert estimate_tokens(text) <= CAP
    assert json.loads(text)
