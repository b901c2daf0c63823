"""The response cap: long strings are cut to a common length, marked, and the response says so."""

from __future__ import annotations

from memory_service.core.limits import fit_to_budget, json_size


def test_small_payload_is_untouched() -> None:
    payload = {"results": [{"content": "short"}], "total": 1}
    out, truncated = fit_to_budget(dict(payload), 10_000)
    assert not truncated and out == payload


def test_long_contents_are_cut_evenly_with_marker() -> None:
    payload = {"results": [{"content": "a" * 50_000}, {"content": "b" * 5_000}, {"content": "c" * 100}]}
    out, truncated = fit_to_budget(payload, 20_000)
    assert truncated and out["truncated"] is True and "truncation_note" in out
    assert json_size(out) <= 20_000
    first, second, third = (r["content"] for r in out["results"])
    assert second.startswith("bbb")
    assert "[truncated:" in first and first.startswith("aaa")
    assert "of 50000 characters shown" in first
    assert third == "c" * 100  # short fields are left alone


def test_many_fields_all_shrink_to_fit() -> None:
    payload = {"results": [{"content": str(i) * 9_000} for i in range(10)]}
    out, truncated = fit_to_budget(payload, 30_000)
    assert truncated and json_size(out) <= 30_000
