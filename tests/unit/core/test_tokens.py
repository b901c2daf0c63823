"""The token estimate behind the response cap is never below a real tokenizer's count.

Checked against the embedding model's own WordPiece tokenizer (all-MiniLM-L6-v2, which splits
punctuation, ids and Hangul finely) and against the bound of every byte-level BPE (GPT, Claude,
Llama 3: never more tokens than UTF-8 bytes), on Chinese, Japanese, Korean, emoji, Cyrillic,
mixed text, English prose, code, documentation and an answer's JSON.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer

from memory_service.core.tokens import estimate_tokens, half_tokens, json_text
from tests.conftest import require_model

REPO = Path(__file__).resolve().parents[3]

SAMPLES = {
    "chinese": "记忆服务为编码代理提供长期记忆。它使用向量存储和图数据库来保存和检索知识\uff0c"
    "包括设计决定、需求、代码模式和故障排查记录。罕见字\uff1a龘靐齉爩鱻麤。",
    "japanese": "メモリサービスはコーディングエージェントに長期記憶を提供します。"
    "ひらがな、カタカナ、漢字が混ざった文章です。がぎぐげご、パピプペポ、ｶﾀｶﾅ\uff08半角\uff09。",
    "korean": "메모리 서비스는 코딩 에이전트에게 장기 기억을 제공합니다. 벡터 저장소와 그래프 "
    "데이터베이스를 사용하여 지식을 저장하고 검색합니다. 똠방각하 쀍 뷁 햏.",
    "emoji": "🚀🔥👍🏽👨‍👩‍👧‍👦🇯🇵🏳️‍🌈✨❤️😀😃😄😁🧑🏿‍💻 ok 👌 done ✅",
    "cyrillic": "Служба памяти предоставляет долговременную память для агентов; Ελληνικά; "
    "français, déjà vu, naïve café; עברית; العربية",
    "mixed": "Search 検索 🚀 메모리 — 缓存 ✨ cache 👨‍👩‍👧‍👦 fitToBudget() → 50K tokens; "
    'エラー: VAL_INVALID {"field": "内容"} 2025-01-02T03:04:05Z',
    "english": "The memory service gives coding agents long-term memory across sessions. "
    "Searches blend vector similarity, keyword matches and graph neighbours; results are "
    "ranked, deduplicated and cut to the caller's budget. Idempotency keys make retries safe.",
    "numbers_and_ids": " ".join(
        [str(uuid.UUID(int=i * 7919 + 12345)) for i in range(20)]
        + ["0.8731", "1234567890", "3.14159265", "0x7fffffff", "sha256:9f86d081884c7d659a2feaa0"]
        + ["aGVsbG8gd29ybGQhIHRoaXMgaXMgYmFzZTY0IGVuY29kZWQ/Kz0=", "HTTP_503 SERVICE_UNAVAILABLE"]
    ),
    "punctuation": "{}[]()<>!@#$%^&*-_=+|;:'\",./?`~\\ \n\t\n    \n",
}


def _answer(content: str) -> str:
    """A search answer's JSON text around ``content``."""
    result = {
        "id": str(uuid.UUID(int=42)),
        "type": "design",
        "content": content,
        "similarity": 0.8731,
        "metadata": {"title": "Search design", "tags": ["search", "ranking"], "priority": "High"},
        "created_at": "2025-01-02T03:04:05.123Z",
    }
    return json_text({"results": [result] * 5, "total": 5, "truncated": False})


@pytest.fixture(scope="module")
def minilm() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(require_model() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _texts() -> dict[str, str]:
    texts = dict(SAMPLES)
    texts.update({f"answer_{name}": _answer(text) for name, text in SAMPLES.items()})
    texts["code"] = (REPO / "memory_service" / "core" / "limits.py").read_text(encoding="utf-8")
    texts["docs"] = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    return texts


@pytest.mark.parametrize("name", sorted(_texts()))
def test_estimate_is_never_below_minilm_or_the_byte_bound(name: str, minilm: Tokenizer) -> None:
    text = _texts()[name]
    estimate = estimate_tokens(text)
    assert estimate >= len(minilm.encode(text, add_special_tokens=False).ids), name
    outside_ascii = sum(len(ch.encode("utf-8")) for ch in text if not ch.isascii())
    assert estimate >= outside_ascii, name


@pytest.mark.parametrize("name", ["chinese", "japanese", "korean", "emoji"])
def test_cjk_and_emoji_cost_their_utf8_bytes(name: str) -> None:
    """At least every byte outside ASCII: 3 for a CJK character, 4 for each emoji code point."""
    text = SAMPLES[name]
    assert estimate_tokens(text) >= len(text.encode("utf-8")) - len(text.encode("ascii", "ignore"))
    assert estimate_tokens("记" * 1000) == 3000
    assert estimate_tokens("🚀" * 1000) == 4000


def test_english_costs_about_one_token_per_two_characters() -> None:
    text = SAMPLES["english"]
    assert len(text) / 3 <= estimate_tokens(text) <= len(text) * 0.6


@given(st.text(max_size=60), st.text(max_size=60))
def test_half_tokens_add_up_over_json_strings(first: str, second: str) -> None:
    """The cap prices each cut string alone: the pieces of a JSON text add up to the whole."""
    whole = json.dumps([first, second], ensure_ascii=False)
    pieces = ["[", json_text(first), ", ", json_text(second), "]"]
    assert half_tokens(whole) == sum(half_tokens(piece) for piece in pieces)


@given(st.text(max_size=200))
def test_estimate_covers_every_byte_outside_ascii(text: str) -> None:
    encoded = text.encode("utf-8", "surrogatepass")
    assert estimate_tokens(text) >= sum(1 for byte in encoded if byte >= 128)
