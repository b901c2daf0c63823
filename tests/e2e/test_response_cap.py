"""The 50K-token cap (seed 001 §4.3) through the MCP client, on text that costs more tokens than
characters: Chinese, Japanese, Korean, emoji and mixed. The answer's text is estimated at most
50,000 tokens (core/tokens.py), and ``truncated`` is true exactly when a field was cut."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from memory_service.core.tokens import estimate_tokens
from tests.conftest import REPO, daemon_gone, require_model, server_env
from tests.e2e.conftest import call_ok, payload

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CAP = 50_000
MARK = "[truncated:"
CHINESE = "长期记忆服务把设计决定、需求和代码模式保存下来\uff0c供编码代理在会话之间检索。"
JAPANESE = "メモリサービスは設計の決定と要件を保存し、エージェントが後で検索できるようにします。"
KOREAN = "메모리 서비스는 설계 결정과 요구 사항을 저장하여 에이전트가 나중에 검색할 수 있게 합니다. "
EMOJI = "🚀🔥👍🏽👨‍👩‍👧‍👦🇯🇵✨❤️😀🧑🏿‍💻✅"
MIXED = "Cache 缓存 🚀 キャッシュ 캐시 — eviction policy ✨ 淘汰策略 👨‍👩‍👧‍👦 LRU/LFU; "


def repeat(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


def answer_tokens(result: CallToolResult) -> int:
    return estimate_tokens(result.content[0].text)  # type: ignore[union-attr]


async def add(client: Client, content: str, **metadata: Any) -> str:
    added = await call_ok(client, "memory_add", {"type": "design", "content": content, "metadata": metadata})
    memory_id: str = added["memory_id"]
    return memory_id


async def test_get_of_a_99000_character_chinese_memory_is_cut_to_the_cap(client: Client) -> None:
    text = "容量探针甲\uff1a" + repeat(CHINESE, 98_994)
    assert len(text) == 99_000  # 150,000 characters would let it through; ~297,000 tokens do not
    memory_id = await add(client, text)
    result = await client.call_tool("memory_get", {"memory_id": memory_id})
    got = payload(result)
    assert not result.is_error
    assert answer_tokens(result) <= CAP
    assert got["truncated"] is True and "50000-token cap" in got["truncation_note"]
    content = got["memory"]["content"]
    assert content.startswith(text[:1000]) and MARK in content and "of 99000 characters shown" in content
    assert got["memory"]["id"] == memory_id  # ids and short fields are never cut


async def test_get_of_a_chinese_memory_under_the_cap_is_whole(client: Client) -> None:
    text = "容量探针乙\uff1a" + repeat(CHINESE, 9_994)
    memory_id = await add(client, text)
    result = await client.call_tool("memory_get", {"memory_id": memory_id})
    got = payload(result)
    assert got["truncated"] is False and "truncation_note" not in got
    assert got["memory"]["content"] == text
    assert answer_tokens(result) <= CAP


async def test_search_over_cjk_emoji_and_mixed_results_is_cut_to_the_cap(client: Client) -> None:
    """Ten results of 30,000 characters each: ~100K characters in all (under the old 150,000
    budget, so nothing was cut) but ~400K estimated tokens."""
    units = [CHINESE, JAPANESE, KOREAN, EMOJI, MIXED]
    texts = {f"gauge-probe-{i} {unit[:8]}": repeat(unit, 10_000) for i, unit in enumerate(units * 2)}
    contents = [f"{head} {body}" for head, body in texts.items()]
    await call_ok(
        client, "memory_bulk_add", {"memories": [{"type": "design", "content": c} for c in contents]}
    )
    result = await client.call_tool(
        "memory_search", {"query": "gauge-probe eviction 缓存 キャッシュ 캐시", "limit": 10, "mode": "fast"}
    )
    found = payload(result)
    assert not result.is_error
    mine = [r for r in found["results"] if r["content"].startswith("gauge-probe-")]
    assert mine, found
    assert answer_tokens(result) <= CAP
    cut = [r for r in found["results"] if MARK in r["content"]]
    assert found["truncated"] is (len(cut) > 0)
    assert found["truncated"] is True
    for r in mine:
        whole = next(c for c in contents if c.startswith(r["content"][:40]))
        assert r["content"] == whole or (MARK in r["content"] and r["content"].startswith(whole[:100]))


async def test_search_with_small_cjk_results_is_not_marked_truncated(client: Client) -> None:
    text = "小探针丙 " + CHINESE + EMOJI + KOREAN
    memory_id = await add(client, text, tags=["small-cjk-probe"])
    result = await client.call_tool(
        "memory_search", {"query": "小探针丙 长期记忆服务", "limit": 3, "tags": ["small-cjk-probe"]}
    )
    found = payload(result)
    assert found["truncated"] is False and "truncation_note" not in found
    assert any(r["memory_id"] == memory_id and r["content"] == text for r in found["results"])
    assert answer_tokens(result) <= CAP


async def test_bulk_add_answer_echoing_emoji_inputs_stays_within_the_cap(client: Client) -> None:
    """100 refused items, each error quoting its emoji input: ~100K characters, ~150K tokens."""
    blob = "🚀" * 200
    items: list[dict[str, Any]] = [{"type": blob, "content": blob, "metadata": {blob: blob}}] * 100
    result = await client.call_tool("memory_bulk_add", {"memories": items})
    out = payload(result)
    assert out["created"] == 0 and out["errors"]
    assert answer_tokens(result) <= CAP
    assert out["truncated"] is True


async def test_the_cap_holds_over_stdio_through_the_daemon(tmp_path: Path) -> None:
    """The real process (``python -m memory_service``, relaying to its data directory's daemon)."""
    data_dir = tmp_path / "data"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_service"],
        env=server_env(data_dir, model=require_model()),
        cwd=str(REPO),
    )
    text = repeat(EMOJI + KOREAN, 60_000)  # 60,000 characters, ~200K tokens
    async with Client(params) as client:
        memory_id = await add(client, text)
        result = await client.call_tool("memory_get", {"memory_id": memory_id})
        got = payload(result)
        assert answer_tokens(result) <= CAP
        assert got["truncated"] is True and MARK in got["memory"]["content"]
    daemon_gone(data_dir)
