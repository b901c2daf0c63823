"""The cost of /metrics on search latency: memory_search p50/p95 with instrumentation on and off.

    .venv/bin/python bench/metrics_overhead.py --n 10000

Ingests N memories once (bench/search_latency.py's corpus, through the MCP server over stdio),
then runs ``--rounds`` rounds of ``--queries`` memory_search calls, alternating a server with
metrics off (``MEMORY_SERVER__METRICS_ENABLED=false``: no store, model or tool instrumentation)
and one with them on, on the same data, so drift on a shared machine falls on both sides. Each
server has its HTTP side server on a free port; with metrics on, a scraper reads /metrics every
second during the searches (15x Prometheus's usual rate), so scrape-time reads count too.
Times are taken at the MCP client (query embedding included), as in search_latency.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.search_latency import DEFAULT_MODEL, ingest_and_search, pct, searches
from memory_service.observability.discovery import HTTP_FILENAME


def scraper(data_dir: Path, stop: threading.Event, counts: dict[str, int]) -> None:
    """Scrape /metrics once a second while the searches run (the server writes http.json)."""
    while not stop.wait(1.0):
        try:
            url = json.loads((data_dir / HTTP_FILENAME).read_text())["url"]
            with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:
                response.read()
            counts["scrapes"] = counts.get("scrapes", 0) + 1
        except (OSError, ValueError, KeyError):
            continue


def one_round(args: argparse.Namespace, data_dir: Path, metrics: bool) -> list[float]:
    os.environ["MEMORY_SERVER__METRICS_ENABLED"] = "true" if metrics else "false"
    out: dict[str, Any] = {}
    stop, counts = threading.Event(), {}
    thread = threading.Thread(target=scraper, args=(data_dir, stop, counts), daemon=True)
    if metrics:
        thread.start()
    try:
        anyio.run(searches, args, data_dir, args.model_path, out)
    finally:
        stop.set()
    if metrics:
        thread.join()
        print(f"    ({counts.get('scrapes', 0)} scrapes during the round)")
    return list(out["search_ms"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=4, help="rounds per side, alternating off/on")
    parser.add_argument(
        "--model-path", type=Path, default=Path(os.environ.get("MEMORY_TEST_MODEL_PATH", DEFAULT_MODEL))
    )
    args = parser.parse_args()
    args.transport, args.singles = "stdio", 0
    os.environ["MEMORY_SERVER__HTTP_PORT"] = "0"
    timings: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="metricsbench-") as tmp:
        data_dir = Path(tmp) / "data"
        print(f"metrics overhead: N={args.n}, {args.rounds} x {args.queries} searches per side")
        started = time.perf_counter()
        anyio.run(ingest_and_search, args, data_dir, args.model_path, {})
        print(f"  ingested in {time.perf_counter() - started:.0f} s")
        warm = one_round(args, data_dir, False)  # page cache, HNSW on disk: not counted
        print(f"  warm-up round (not counted): p50 {pct(warm, 50):6.2f}  p95 {pct(warm, 95):6.2f} ms")
        for r in range(args.rounds):
            for metrics in (False, True):
                values = one_round(args, data_dir, metrics)
                timings[metrics] += values
                print(
                    f"  round {r + 1} metrics {'on ' if metrics else 'off'}: "
                    f"p50 {pct(values, 50):6.2f}  p95 {pct(values, 95):6.2f} ms"
                )
    print()
    for metrics in (False, True):
        values = timings[metrics]
        print(
            f"memory_search, metrics {'on ' if metrics else 'off'}  p50 {pct(values, 50):6.2f}  "
            f"p95 {pct(values, 95):6.2f}  p99 {pct(values, 99):6.2f}  (ms, n={len(values)})"
        )
    for q in (50, 95):
        off, on = pct(timings[False], q), pct(timings[True], q)
        print(f"p{q} overhead  {on - off:+.2f} ms ({(on - off) / off * 100:+.1f} %)")


if __name__ == "__main__":
    main()
