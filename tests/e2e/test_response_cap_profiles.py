"""The 50K-token cap in the compatibility profiles (seed 002, 003, 004), through the MCP client:
answers full of Chinese, Japanese, Korean or emoji text are cut to at most 50,000 estimated
tokens (core/tokens.py), framing included, and say so."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from memory_service.core.tokens import estimate_tokens
from memory_service.server import build_server
from tests.conftest import require_model
from tests.e2e.conftest import make_settings
from tests.e2e.test_response_cap import CAP, CHINESE, EMOJI, JAPANESE, KOREAN, MARK, MIXED, repeat

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@asynccontextmanager
async def serving(root: Path, profile: str) -> AsyncIterator[Client]:
    settings = make_settings(root, require_model())
    async with Client(build_server(settings, profile=profile)) as client:
        yield client


def answer(result: CallToolResult) -> tuple[dict[str, Any], int]:
    """The answer's JSON and its estimated tokens; a success carries the same as structured content."""
    text = result.content[0].text  # type: ignore[union-attr]
    body = json.loads(text)
    assert not result.is_error, body
    assert result.structured_content == body
    return body, estimate_tokens(text)


async def call(client: Client, tool: str, args: dict[str, Any]) -> CallToolResult:
    return await client.call_tool(tool, args)


async def test_cortex_os_retrieve_of_cjk_memories_is_cut_to_the_cap(tmp_path: Path) -> None:
    """Fifteen 8,000-character texts (seed 003's most): 120,000 characters, ~360K tokens."""
    units = [CHINESE, JAPANESE, KOREAN, EMOJI, MIXED]
    async with serving(tmp_path, "cortex-os") as client:
        for i in range(15):
            text = f"quota-probe {i} " + repeat(units[i % 5], 7_980)
            stored = await call(client, "memory_store", {"kind": "note", "text": text})
            assert not stored.is_error, stored.content
        result = await call(client, "memory_retrieve", {"query": "quota-probe 缓存 キャッシュ", "limit": 15})
        body, tokens = answer(result)
        assert tokens <= CAP
        data = body["data"]
        assert body["success"] is True and data["truncated"] is True
        assert any(MARK in r["text"] for r in data["results"])


async def test_find_store_find_of_cjk_snippets_is_cut_to_the_cap(tmp_path: Path) -> None:
    """A hundred hits with 300-character snippets: ~40,000 characters, over 100K tokens."""
    async with serving(tmp_path, "cortex-find-store") as client:
        items = [
            {
                "kind": "decision",
                "scope": {},
                "data": {
                    "component": "cache",
                    "status": "accepted",
                    "title": f"quota-probe decision {i}",
                    "rationale": repeat([CHINESE, KOREAN, EMOJI][i % 3], 2_000) + f" #{i}",
                    "alternatives": ["LRU", "LFU"],
                },
            }
            for i in range(100)
        ]
        stored = await call(client, "memory-store", {"items": items})
        assert not stored.is_error, stored.content
        result = await call(client, "memory-find", {"query": "quota-probe decision 缓存", "top_k": 100})
        body, tokens = answer(result)
        assert tokens <= CAP
        assert body["truncated"] is True and body["hits"]


async def test_interface_v1_read_of_a_99000_character_chinese_memory_is_cut_to_the_cap(
    tmp_path: Path,
) -> None:
    text = "容量探针丁 " + repeat(CHINESE, 98_994)
    async with serving(tmp_path, "memory-interface-v1") as client:
        memory = {"text": text, "scope": "repo", "kind": "fact", "confidence": 0.8}
        written = await call(client, "memory-write", {"op": "write", "repo_id": "repo-cap", "memory": memory})
        assert not written.is_error, written.content
        args = {"op": "read", "repo_id": "repo-cap", "mode": "targeted", "query": "容量探针丁 长期记忆服务"}
        body, tokens = answer(await call(client, "memory-read", args))
        assert tokens <= CAP
        assert body["truncated"] is True
        (hit,) = [r for r in body["results"] if r["text"].startswith("容量探针丁")]
        assert MARK in hit["text"] and "of 99000 characters shown" in hit["text"]
