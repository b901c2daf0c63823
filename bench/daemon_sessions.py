"""Several sessions, one daemon (issue 13): the cost of forwarding, session start, 4-client throughput.

    .venv/bin/python bench/daemon_sessions.py --n 2000 --queries 300 --seconds 20

1. Ingests N memories (bench/corpus.py) through a first session, which starts the daemon.
2. ``memory_search`` latency, alternating the two paths (so drift falls on both), each with
   its own queries (a query seen before is answered from the search cache):
   * through a forwarder: ``memory-service`` over stdio, as Claude Code runs it;
   * directly on the daemon's socket (memory-cli's client, no forwarder in between);
   times are taken at the client, query embedding included.
3. Session start: a new ``memory-service`` process until its ``initialize`` is answered, with
   the daemon running (the second session) and with none (the first: the daemon starts too).
4. Throughput: 1 and then 4 concurrent sessions (each its own forwarder process) doing a mix of
   memory_search (60%), memory_add (30%) and memory_get (10%) for ``--seconds``; calls/s.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import memories, queries
from bench.search_latency import DEFAULT_MODEL, pct
from memory_service.daemon.client import DaemonSession
from memory_service.settings import Settings
from tests.conftest import daemon_gone, server_env
from tests.e2e.crash_client import StdioServer


def _ms(values: list[float]) -> str:
    mean = statistics.fmean(values)
    return f"p50 {pct(values, 50):7.2f} ms   p95 {pct(values, 95):7.2f} ms   mean {mean:7.2f} ms"


def _session_start(env: dict[str, str], log: Path) -> float:
    t0 = time.perf_counter()
    server = StdioServer(env, log)
    took = time.perf_counter() - t0
    server.close()
    return took


def _mixed(
    env: dict[str, str], log: Path, seconds: float, seed: int, counts: list[int], ids: list[str]
) -> None:
    rng = random.Random(seed)
    qs = queries(200)
    server = StdioServer(env, log)
    try:
        until = time.perf_counter() + seconds
        n = 0
        while time.perf_counter() < until:
            roll = rng.random()
            if roll < 0.6:
                server.call("memory_search", {"query": rng.choice(qs), "limit": 10})
            elif roll < 0.9:
                body = {"type": "session", "content": f"Throughput note {seed}-{n}: {rng.getrandbits(48):x}."}
                ids.append(server.call("memory_add", body)["memory_id"])
            else:
                server.call("memory_get", {"memory_id": rng.choice(ids)})
            n += 1
        counts.append(n)
    finally:
        server.close()


def _throughput(env: dict[str, str], tmp: Path, clients: int, seconds: float, ids: list[str]) -> float:
    counts: list[int] = []
    threads = [
        threading.Thread(
            target=_mixed,
            args=(env, tmp / f"mixed-{clients}-{i}.log", seconds, 1000 * clients + i, counts, ids),
        )
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(counts) == clients, "a session failed: see the logs"
    return sum(counts) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--model-path", type=Path, default=DEFAULT_MODEL)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = server_env(tmp / "data", model=args.model_path)
        env["MEMORY_DAEMON__IDLE_TIMEOUT_S"] = "5"
        settings = Settings(data_dir=tmp / "data")

        cold = []
        for _ in range(2):  # no daemon running: the session starts one (model load included)
            cold.append(_session_start(env, tmp / "first.log"))
            daemon_gone(tmp / "data")

        session = StdioServer(env, tmp / "session.log")  # keeps the daemon up from here on
        items = list(memories(args.n))
        t0 = time.perf_counter()
        ids: list[str] = []
        for i in range(0, len(items), 100):
            ids += session.call("memory_bulk_add", {"memories": items[i : i + 100]})["memory_ids"]
        print(f"ingested {args.n} memories in {time.perf_counter() - t0:.1f} s")

        starts = [_session_start(env, tmp / "starts.log") for _ in range(args.starts)]

        # Every query is new (a numbered variant): one seen before is answered from the search cache.
        qs = [f"{q} #{i}" for i, q in enumerate(queries(2 * args.queries))]
        forwarded: list[float] = []
        direct: list[float] = []
        with DaemonSession(settings) as on_socket:
            session.call("memory_search", {"query": "warm up", "limit": 10})
            on_socket.call("memory_search", {"query": "warm up", "limit": 10})
            for i in range(args.queries):
                t0 = time.perf_counter()
                session.call("memory_search", {"query": qs[2 * i], "limit": 10})
                forwarded.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                on_socket.call("memory_search", {"query": qs[2 * i + 1], "limit": 10})
                direct.append((time.perf_counter() - t0) * 1000)

        one = _throughput(env, tmp, 1, args.seconds, ids)
        four = _throughput(env, tmp, 4, args.seconds, ids)
        session.close()

    print(f"\nmemory_search, {args.queries} queries over {args.n} memories (client-side times):")
    print(f"  through a forwarder (stdio) : {_ms(forwarded)}")
    print(f"  on the daemon's socket      : {_ms(direct)}")
    print(
        f"  forwarding adds             : p50 {pct(forwarded, 50) - pct(direct, 50):+.2f} ms, "
        f"p95 {pct(forwarded, 95) - pct(direct, 95):+.2f} ms"
    )
    print("\nsession ready (process start to initialize answered):")
    print(f"  first session, daemon started too : {' / '.join(f'{c:.2f} s' for c in cold)}")
    print(
        f"  second session, daemon running    : median {statistics.median(starts):.3f} s, "
        f"max {max(starts):.3f} s over {len(starts)}"
    )
    print(f"\nthroughput, mixed search/add/get for {args.seconds:.0f} s:")
    print(f"  1 session : {one:7.1f} calls/s")
    print(f"  4 sessions: {four:7.1f} calls/s (all through one daemon)")
    print(json.dumps({"forwarded_p50": pct(forwarded, 50), "direct_p50": pct(direct, 50)}))


if __name__ == "__main__":
    main()
