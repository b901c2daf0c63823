"""The response cap: long strings are cut to a common length, marked, and the response says so;
the budget is in estimated tokens (core/tokens.py), so text in any script fits it."""

from __future__ import annotations

from memory_service.core.audit_event import audit_event
from memory_service.core.limits import clip_text, clip_value, fit_to_budget
from memory_service.core.tokens import json_text, json_tokens


def test_small_payload_is_untouched() -> None:
    payload = {"results": [{"content": "short"}], "total": 1}
    out, truncated = fit_to_budget(dict(payload), 10_000)
    assert not truncated and out == payload


def test_long_contents_are_cut_evenly_with_marker() -> None:
    payload = {"results": [{"content": "a" * 50_000}, {"content": "b" * 5_000}, {"content": "c" * 100}]}
    out, truncated = fit_to_budget(payload, 20_000)
    assert truncated and out["truncated"] is True and "truncation_note" in out
    assert 19_000 <= json_tokens(out) <= 20_000
    first, second, third = (r["content"] for r in out["results"])
    assert second.startswith("bbb")
    assert "[truncated:" in first and first.startswith("aaa")
    assert "of 50000 characters shown" in first
    assert third == "c" * 100  # short fields are left alone


def test_many_fields_all_shrink_to_fit() -> None:
    payload = {"results": [{"content": str(i) * 9_000} for i in range(10)]}
    out, truncated = fit_to_budget(payload, 30_000)
    assert truncated and json_tokens(out) <= 30_000


CJK = "记忆服务为编码代理提供长期记忆、向量和图谱一起检索。"
MIXED = "Search 検索 🚀 메모리 — 缓存 ✨ cache 👨‍👩‍👧‍👦 "


def test_cjk_text_is_budgeted_in_tokens_not_characters() -> None:
    """99,000 Chinese characters are well under 150,000 characters but ~300K estimated tokens:
    the old character budget let them through whole."""
    text = (CJK * 4000)[:99_000]
    out, truncated = fit_to_budget({"memory": {"id": "m1", "content": text}}, 50_000)
    assert truncated and out["truncated"] is True
    assert 48_000 <= json_tokens(out) <= 50_000
    content = out["memory"]["content"]
    assert content.startswith(CJK) and "of 99000 characters shown" in content


def test_mixed_and_emoji_results_fit_and_keep_their_order() -> None:
    results = [{"id": f"r{i}", "content": MIXED * (300 + i)} for i in range(40)]
    out, truncated = fit_to_budget({"results": results, "total": 40}, 50_000)
    assert truncated and json_tokens(out) <= 50_000
    assert [r["id"] for r in out["results"]] == [f"r{i}" for i in range(40)]  # no result dropped


def test_payload_at_the_budget_is_untouched() -> None:
    payload = {"content": CJK * 100}
    budget = json_tokens(payload)
    out, truncated = fit_to_budget(dict(payload), budget)
    assert not truncated and out == payload
    _, truncated = fit_to_budget(dict(payload), budget - 1)
    assert truncated


def test_many_short_strings_lose_list_items_from_the_end() -> None:
    """Strings too short to cut (an error's clipped echoes, many small results): the longest list
    keeps as many leading items as fit."""
    payload = {"status": "error", "error": {"details": {"provided": [CJK * 3 for _ in range(3000)]}}}
    out, truncated = fit_to_budget(payload, 20_000)
    provided = out["error"]["details"]["provided"]
    assert truncated and 19_000 <= json_tokens(out) <= 20_000
    assert 0 < len(provided) < 3000 and all(p == CJK * 3 for p in provided)


def test_clip_text_keeps_a_prefix_and_the_length_within_the_limit() -> None:
    clipped = clip_text("x" * 1_000_000, 200)
    assert len(clipped) == 200 and clipped.startswith("xxx") and "(1000000 characters)" in clipped
    assert clip_text(clipped, 200) == clipped  # clipping twice changes nothing
    assert clip_text("short", 200) == "short"


def test_clip_value_bounds_strings_lists_dicts_and_depth() -> None:
    value = {
        "provided": "v" * 5_000_000,
        "errors": [{"field": f"f{i}", "problem": "p" * 1000} for i in range(500)],
        "deep": {"a": {"b": {"c": {"d": {"e": "too deep"}}}}},
        "k" * 10_000: 1,
    }
    clipped = clip_value(value)
    assert len(json_text(clipped)) < 20_000
    assert len(clipped["errors"]) == 51 and clipped["errors"][-1] == "… 450 more items"
    assert clipped["deep"]["a"]["b"]["c"] == "<dict>"
    assert all(len(k) <= 200 for k in clipped)


def test_audit_events_never_store_input_whole() -> None:
    event = audit_event("create", "memory", "id", "actor", {"rationale": "r" * 2000, "blob": "b" * 1_000_000})
    assert event.details["rationale"] == "r" * 2000
    assert len(event.details["blob"]) == 4000


def test_stamping_an_event_keeps_its_checked_details_and_leaves_it_as_it_was() -> None:
    from memory_service.core.write.journal import _event_json, stamp

    secret = "ghp_" + "a1B2" * 9  # a GitHub token shape: masked once, when the event is made
    event = audit_event("create", "memory", "id", "actor", {"note": secret, "blob": "b" * 1_000_000})
    [stamped] = stamp([event])
    assert stamped.timestamp and event.timestamp is None
    assert stamped.details == event.details and secret not in str(stamped.details)
    assert stamped.details["redacted"] == event.details["redacted"]  # not noted twice
    assert _event_json(stamped) == {
        "operation": "create", "entity_type": "memory", "entity_id": "id", "actor": "actor",
        "details": event.details, "timestamp": stamped.timestamp,
    }  # fmt: skip
    assert stamp([stamped]) == [stamped]  # a stamped event keeps its time
