"""Seed 004's two tools, memory.find and memory.store (profile ``cortex-find-store``).

Served as ``memory-find`` / ``memory-store`` by default (Claude Code refuses dots in tool names;
``MEMORY_SERVER__TOOL_NAMES=seed`` serves the dotted names, tools/profiles.py). The handlers are
:class:`~memory_service.profiles.find_store.mapping.FindStore` over the shared services; this module
only frames the answers the seed's way.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent

from memory_service.core.errors import MemoryServiceError
from memory_service.core.limits import fit_to_budget
from memory_service.profiles.find_store.mapping import FindStore
from memory_service.profiles.find_store.schemas import (
    FindInput,
    FindOutput,
    StoreInput,
    StoreOutput,
    StoreRequest,
)
from memory_service.profiles.find_store.seed_errors import seed_error
from memory_service.tools.registry import ADDITIVE, READ_ONLY, ToolSpec
from memory_service.tools.schema import model_schema


class FindStoreEnvelope:
    """Answers as the output model's JSON (structured content and the same text); errors as seed
    004's ``{error_code, human_hint, fix, details}`` (FR-053), text only with ``isError``: structured
    content would have to match the success schema, which strict clients check even on errors."""

    def output_schema(self, spec: ToolSpec) -> dict[str, Any] | None:
        return model_schema(spec.output_model, mode="serialization")

    def success(self, spec: ToolSpec, payload: dict[str, Any]) -> CallToolResult:
        text = json.dumps(payload, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)

    def failure(self, spec: ToolSpec, error: MemoryServiceError, max_tokens: int) -> CallToolResult:
        payload, _ = fit_to_budget(seed_error(error), max_tokens)
        text = json.dumps(payload, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


FIND_STORE = FindStoreEnvelope()

FIND_STORE_TOOLS = [
    ToolSpec(
        name="memory-find",
        seed_name="memory.find",
        title="Find knowledge",
        description=(
            "Search stored knowledge (sections, runbooks, changes, issues, decisions, todos, release "
            "notes, DDL, PR context). Reads the caller's branch by default; scope widens it "
            "({'branch': 'main'}, {'branch': '*'}). types filters kinds; top_k 1-100 (default 20); "
            "mode auto (routes by query: issue/PR ids to logs first, code to runbooks and sections, "
            "design questions to ADRs), fast (lexical only) or deep (fuzzy terms, linked items); "
            "time_range {since, until} on creation time. Hits carry kind, id, snippet, score, title, "
            "tags, last_verified, route_used, confidence and citations; fewer than 3 good hits come "
            "with suggestions; debug says how the query ran."
        ),
        schema_model=FindInput,
        output_model=FindOutput,
        handler=lambda s, r: FindStore.of(s).find(r),
        annotations=READ_ONLY,
        envelope=FIND_STORE,
    ),
    ToolSpec(
        name="memory-store",
        seed_name="memory.store",
        title="Store knowledge",
        description=(
            "Store 1-100 knowledge items, each {kind, scope, data} plus optional tags, source, "
            "idempotency_key and ttl_policy. Each item is validated on its own: stored ones are listed "
            "in stored (inserted, updated or skipped_dedupe), bad ones in errors with error_code, "
            "human_hint and fix. data holds the kind's required fields (see the data field). A repeat "
            "with the same idempotency_key updates the item, unless it is an accepted decision "
            "(read-only: CONFLICT). Section bodies over 3 KB are split at headings into 1-3 KB chunks."
        ),
        schema_model=StoreInput,
        request_model=StoreRequest,
        output_model=StoreOutput,
        handler=lambda s, r: FindStore.of(s).store(r),
        annotations=ADDITIVE,
        envelope=FIND_STORE,
        # Not keyed: one call makes several writes whose number depends on what is stored already
        # (an add may be skipped, then updated), so a re-send's n-th write need not be the first
        # attempt's. A re-send is still safe: its items dedupe by key or content.
    ),
]
