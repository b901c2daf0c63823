"""The ``cortex-os`` profile (seed 003): memory_store, memory_retrieve, memory_update, memory_delete
and memory_stats, as thin tools over profiles/cortex_os/mapping.py, framed in seed 003's envelope.

Seed 003 answers with ``content[0].text`` holding ``{"success": true, "data": ..., "correlationId",
"timestamp"}`` (the same object is the structured content, described by the output schema), or,
with ``isError``, ``{"success": false, "error": {"code", "message", "details": [...]}, ...}`` (no
structured content: it would have to match the success schema). Seed 003's ``metadata``
``{correlationId, timestamp, tool}`` is set on the result and, the same, as its ``_meta``: the SDK
sends a tools/call result with MCP's fields only (it drops ``metadata`` on the way out), so
``_meta`` is where clients find it; in-process callers of the server see both.
The correlation id is logged (debug on success, error on failure) to line traces up with the log.
"""

from __future__ import annotations

import functools
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any, Literal

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field, create_model

from memory_service.core.errors import (
    ConflictError,
    MemoryServiceError,
    NotFoundError,
    SecurityError,
    ValidationError,
)
from memory_service.core.limits import fit_to_budget
from memory_service.core.models import utcnow
from memory_service.core.schema_base import DATETIME_FORMAT, UUID_FORMAT, ToolOutput
from memory_service.profiles.cortex_os.mapping import CortexOs, iso_ms, parse
from memory_service.profiles.cortex_os.schemas import (
    DeleteData,
    DeleteInput,
    RawArguments,
    RetrieveData,
    RetrieveInput,
    StatsData,
    StatsInput,
    StoreData,
    StoreInput,
    UpdateData,
    UpdateInput,
)
from memory_service.tools.registry import ADDITIVE, DESTRUCTIVE, READ_ONLY, UPDATE, ToolSpec
from memory_service.tools.schema import model_schema

logger = logging.getLogger(__name__)

SeedCode = Literal["validation_error", "security_error", "not_found", "internal_error"]
# Our code prefixes, by seed 003's codes. A conflict (a version mismatch, an accepted decision) is
# the caller's to resolve like a validation problem, never a server fault to retry.
_BY_PREFIX: dict[str, SeedCode] = {
    "SEC_": "security_error",
    "VAL_": "validation_error",
    "CON_": "validation_error",
    "NF_": "not_found",
}
_BY_CLASS: tuple[tuple[type[MemoryServiceError], SeedCode], ...] = (
    (SecurityError, "security_error"),
    (ValidationError, "validation_error"),
    (ConflictError, "validation_error"),
    (NotFoundError, "not_found"),
)


class CortexToolResult(CallToolResult):
    """A tool result with seed 003's ``metadata`` field, which the MCP type does not have (and the
    SDK leaves out of what it sends: clients read the same from ``_meta``)."""

    model_config = ConfigDict(extra="allow")

    metadata: dict[str, Any] | None = None


def seed_code(error: MemoryServiceError) -> SeedCode:
    """Seed 003's code for one of ours: by its prefix, else by its class; anything else is ours."""
    for prefix, code in _BY_PREFIX.items():
        if error.code.startswith(prefix):
            return code
    return next((code for cls, code in _BY_CLASS if isinstance(error, cls)), "internal_error")


def detail_strings(error: dict[str, Any]) -> list[str]:
    """``details`` as seed 003 lists them: ``field: problem`` strings, never empty."""
    details = error.get("details") or {}
    problems = details.get("problems") if isinstance(details, dict) else None
    if isinstance(problems, list) and problems:
        return [str(p) for p in problems]
    listed = details.get("errors") if isinstance(details, dict) else None
    if isinstance(listed, list) and listed:
        return [f"{e.get('field')}: {e.get('problem')}" for e in listed if isinstance(e, dict)]
    field = details.get("field") if isinstance(details, dict) else None
    return [f"{field}: {error['message']}" if field else str(error["message"])]


def _with_suggestion(message: str, suggestion: str) -> str:
    if not suggestion:
        return message
    return f"{message.rstrip('.')}. {suggestion}"


@functools.cache
def success_model(output_model: type[BaseModel]) -> type[BaseModel]:
    """The success envelope around one tool's data, for its output schema."""
    return create_model(
        f"Cortex{output_model.__name__}Envelope",
        __base__=ToolOutput,
        success=(Literal[True], ...),
        data=(output_model, ...),
        correlationId=(str, Field(json_schema_extra=UUID_FORMAT)),
        timestamp=(str, Field(json_schema_extra=DATETIME_FORMAT)),
    )


class CortexOsEnvelope:
    """Seed 003's envelope (registry.Envelope)."""

    def output_schema(self, spec: ToolSpec) -> dict[str, Any] | None:
        return model_schema(success_model(spec.output_model), mode="serialization")

    def success(self, spec: ToolSpec, payload: dict[str, Any]) -> CallToolResult:
        correlation_id, stamp = _trace()
        body = {"success": True, "data": payload, "correlationId": correlation_id, "timestamp": stamp}
        logger.debug("tool %s succeeded correlationId=%s", spec.name, correlation_id)
        return _framed(spec, body, structured=True)

    def failure(self, spec: ToolSpec, error: MemoryServiceError, max_tokens: int) -> CallToolResult:
        correlation_id, stamp = _trace()
        code = seed_code(error)
        ours = error.to_envelope()["error"]  # clipped, secrets masked
        reported = {
            "code": code,
            "message": _with_suggestion(ours["message"], ours["suggestion"]),
            "details": detail_strings(ours),
        }
        body, _ = fit_to_budget(
            {"success": False, "error": reported, "correlationId": correlation_id, "timestamp": stamp},
            max_tokens,
        )
        logger.error("tool %s failed: %s (%s) correlationId=%s", spec.name, code, error.code, correlation_id)
        return _framed(spec, body, structured=False)


def _trace() -> tuple[str, str]:
    return str(uuid.uuid4()), iso_ms(utcnow())


def _framed(spec: ToolSpec, body: dict[str, Any], *, structured: bool) -> CallToolResult:
    """The body as text (and structured content on success), with seed 003's ``metadata``."""
    meta = {"correlationId": body["correlationId"], "timestamp": body["timestamp"], "tool": spec.name}
    return CortexToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body if structured else None,
        is_error=not structured,
        metadata=meta,
        _meta=meta,
    )


CORTEX_OS = CortexOsEnvelope()


def _handler(operation: str, model: type[BaseModel]) -> Callable[[Any, RawArguments], BaseModel]:
    """A handler that validates by seed 003's rules and runs one CortexOs operation."""

    def handle(services: Any, request: RawArguments) -> BaseModel:
        return getattr(CortexOs(services), operation)(parse(model, request.arguments()))

    return handle


def _spec(
    name: str, title: str, description: str, schema: type[BaseModel], output: type[BaseModel], **extra: Any
) -> ToolSpec:
    return ToolSpec(
        name=name,
        title=title,
        description=description,
        schema_model=schema,
        request_model=RawArguments,
        output_model=output,
        handler=_handler(name.removeprefix("memory_"), schema),
        envelope=CORTEX_OS,
        **extra,
    )


CORTEX_OS_TOOLS: list[ToolSpec] = [
    _spec(
        "memory_store",
        "Store a memory",
        "Store sanitized memory text under a kind (e.g. note, meeting-notes) with optional tags and "
        "metadata. Secrets are masked before storing; the answer has the id and a redacted preview.",
        StoreInput,
        StoreData,
        annotations=ADDITIVE,
        keyed=True,
    ),
    _spec(
        "memory_retrieve",
        "Retrieve memories",
        "Semantic search over stored memories, best first, optionally only of one kind and/or "
        "carrying one of the given tags.",
        RetrieveInput,
        RetrieveData,
        annotations=READ_ONLY,
    ),
    _spec(
        "memory_update",
        "Update a memory",
        "Replace a memory's text, tags and/or metadata (each one given replaces the old one; at "
        "least one is required). Answers which parts changed.",
        UpdateInput,
        UpdateData,
        annotations=UPDATE,
        keyed=True,
    ),
    _spec(
        "memory_delete",
        "Delete a memory",
        "Delete a memory by id; an unknown or already deleted id is not_found.",
        DeleteInput,
        DeleteData,
        annotations=DESTRUCTIVE,
        keyed=True,
    ),
    _spec(
        "memory_stats",
        "Memory statistics",
        "Totals: memories, their text size, counts by kind and the latest activity; "
        "includeDetails adds the storage backend, the indexed fields and the average item size.",
        StatsInput,
        StatsData,
        annotations=READ_ONLY,
    ),
]
