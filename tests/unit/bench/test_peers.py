"""The pure helpers of bench/peers.py: query set, percentiles, ratios and the model cache layout."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import try_to_load_from_cache

from bench.corpus import distinct_queries, queries
from bench.peers import fmt_ratio, hub_cache, pooled, ratios, summary


def test_distinct_queries_are_the_generators_first_distinct_questions() -> None:
    qs = distinct_queries(200)
    assert len(qs) == 200
    assert len(set(qs)) == 200
    generated = queries(5000)
    firsts = [generated.index(q) for q in qs]
    assert firsts == sorted(firsts)  # in the generator's order of first appearance
    missed = [q for q in generated[: max(firsts)] if q not in qs]
    assert not missed  # nothing distinct skipped before the last one taken


def test_distinct_queries_refuses_more_than_the_generator_has() -> None:
    def three(n: int) -> list[str]:
        return [f"q{i % 3}" for i in range(n)]

    assert distinct_queries(3, three) == ["q0", "q1", "q2"]
    with pytest.raises(ValueError, match="only 3 distinct"):
        distinct_queries(4, three)


def test_summary_uses_nearest_rank_percentiles() -> None:
    s = summary([float(v) for v in range(1, 101)])  # 1..100 ms
    assert (s["p50"], s["p95"], s["p99"]) == (51.0, 95.0, 99.0)
    assert s["mean"] == pytest.approx(50.5)
    assert s["n"] == 100


def test_ratios_are_oriented_so_above_one_favours_us_except_rss() -> None:
    ours = {"ingest_per_s": 240.0, "p50": 20.0, "p95": 50.0, "p99": 100.0, "rss_mb": 450.0}
    peer = {"ingest_per_s": 60.0, "p50": 40.0, "p95": 50.0, "p99": 80.0, "rss_mb": 300.0}
    r = ratios(ours, peer)
    assert r["ingest"] == pytest.approx(4.0)
    assert r["p50"] == pytest.approx(2.0)
    assert r["p95"] == pytest.approx(1.0)
    assert r["p99"] == pytest.approx(0.8)
    assert r["rss"] == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3.968, "3.97x (faster)"), (0.8, "0.80x (slower)"), (1.003, "1.00x (level)"), (0.996, "1.00x (level)")],
)
def test_fmt_ratio_names_the_direction(value: float, expected: str) -> None:
    assert fmt_ratio(value, "faster", "slower") == expected


def test_pooled_pools_latencies_and_averages_rates_per_side() -> None:
    rounds = [
        {"side": "a", "search_ms": [1.0, 2.0], "ingest_per_s": 100.0, "rss_mb": 400.0},
        {"side": "b", "search_ms": [50.0], "ingest_per_s": 10.0, "rss_mb": 100.0},
        {"side": "a", "search_ms": [3.0, 4.0], "ingest_per_s": 200.0, "rss_mb": 500.0},
    ]
    a = pooled(rounds, "a")
    assert a["n"] == 4
    assert a["p99"] == 4.0
    assert a["ingest_per_s"] == pytest.approx(150.0)
    assert a["rss_mb"] == pytest.approx(450.0)


def test_hub_cache_is_found_by_the_hub_client_offline(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        (model / name).write_text(name)
    cache = hub_cache(tmp_path / "cache", model)
    found = try_to_load_from_cache("Qdrant/all-MiniLM-L6-v2-onnx", "model.onnx", cache_dir=cache)
    assert isinstance(found, str)
    assert Path(found).read_text() == "model.onnx"
