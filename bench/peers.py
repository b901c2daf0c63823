"""Side by side with mcp-server-qdrant: ingest rate, search p50/p95/p99 and RSS in one run.

    .venv/bin/python bench/peers.py --n 10000 --queries 200 --rounds 2

Both servers run as MCP stdio subprocesses on the same workload: ``--n`` memories from
bench/corpus.py and ``--queries`` searches (the first distinct questions of the generator that
search_latency.py uses: a repeated question would hit our embedding cache, which the peer
lacks), limit 10, the same ONNX all-MiniLM-L6-v2 (docs/benchmarks.md). Ours gets memory_bulk_add
calls of 100; the peer has no bulk tool, so it gets one ``qdrant-store`` per memory. Ingest is
timed at the MCP client from the first call to the last answer; once the server's processes are
idle again (our HNSW build runs in the background), each search is timed at the client
(memory_search in auto mode vs ``qdrant-find``); then the RSS of the server's process tree is read.
Rounds alternate (ours, peer, ours, peer), each on a fresh store, so drift falls on both sides.

mcp-server-qdrant (pinned below) lives in its own virtualenv, ``.venv-peers/`` at the repository
root, created on first use: its dependencies clash with ours. It reads the model offline from a
fastembed hub-cache layout built in a temp dir (shared/design/PEERS.md). Needs matplotlib for
the percentile plot (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import psutil
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import call, model_loaded
from bench.corpus import distinct_queries, memories
from bench.search_latency import DEFAULT_MODEL, pct, stdio_env
from tests.conftest import daemon_gone

ROOT = Path(__file__).resolve().parents[1]
PEER = "mcp-server-qdrant"
PEER_VERSION = "0.8.1"
PEER_VENV = ROOT / ".venv-peers"
HUB_REPO = "models--Qdrant--all-MiniLM-L6-v2-onnx"  # where fastembed looks for all-MiniLM-L6-v2
LIMIT = 10
BATCH = 100
SIDES = ("memory-service", PEER)
CURVE = (1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5, 99, 99.5, 99.9)


# ------------------------------------------------------------------ pure helpers (tests/unit/bench)


def summary(values: Sequence[float]) -> dict[str, float]:
    """Nearest-rank p50/p95/p99 (bench/search_latency.py's ``pct``), mean and count."""
    return {
        "p50": pct(list(values), 50),
        "p95": pct(list(values), 95),
        "p99": pct(list(values), 99),
        "mean": sum(values) / len(values),
        "n": len(values),
    }


def ratios(ours: dict[str, float], peer: dict[str, float]) -> dict[str, float]:
    """Ours vs the peer, each oriented so that > 1 is in our favour except RSS (ours / peer)."""
    return {
        "ingest": ours["ingest_per_s"] / peer["ingest_per_s"],
        **{q: peer[q] / ours[q] for q in ("p50", "p95", "p99")},
        "rss": ours["rss_mb"] / peer["rss_mb"],
    }


def fmt_ratio(value: float, better: str, worse: str) -> str:
    """``3.97x (faster)``: the word says which way a ratio of ours over theirs goes."""
    if abs(value - 1) < 0.005:
        return f"{value:.2f}x (level)"
    return f"{value:.2f}x ({better if value > 1 else worse})"


def pooled(rounds: list[dict[str, Any]], side: str) -> dict[str, float]:
    """One side's figures over all its rounds: latencies pooled, ingest rate and RSS averaged."""
    mine = [r for r in rounds if r["side"] == side]
    latencies = [ms for r in mine for ms in r["search_ms"]]
    return {
        **summary(latencies),
        "ingest_per_s": sum(r["ingest_per_s"] for r in mine) / len(mine),
        "rss_mb": sum(r["rss_mb"] for r in mine) / len(mine),
    }


# ------------------------------------------------------------------ the peer's install and model


def ensure_peer(venv: Path) -> Path:
    """The peer's console script, installing the pinned release into ``venv`` when missing."""
    python, script = venv / "bin" / "python", venv / "bin" / PEER
    probe = f"import importlib.metadata as m; print(m.version('{PEER}'))"
    if script.exists():
        found = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        if found.stdout.strip() == PEER_VERSION:
            return script
    print(f"installing {PEER}=={PEER_VERSION} into {venv} (its own virtualenv)", flush=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", f"{PEER}=={PEER_VERSION}"], check=True)
    return script


def hub_cache(root: Path, model: Path) -> Path:
    """A fastembed hub cache holding ``model`` as the repo fastembed maps all-MiniLM-L6-v2 to."""
    repo = root / HUB_REPO
    snapshot = repo / "snapshots" / "local"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("local")
    for f in model.iterdir():
        if f.is_file():
            (snapshot / f.name).symlink_to(f.resolve())
    return root


# ------------------------------------------------------------------ processes


def server_tree(marker: str) -> list[psutil.Process]:
    """The server subprocess whose command line holds ``marker``, with all its descendants."""
    for child in psutil.Process().children():
        try:
            if marker in " ".join(child.cmdline()):
                return [child, *child.children(recursive=True)]
        except psutil.Error:
            continue
    raise RuntimeError(f"no server process matching {marker!r}")


def tree_rss(marker: str) -> dict[str, float]:
    """RSS in MB of each process of the server's tree, by pid and command (they add up)."""
    parts = {}
    for p in server_tree(marker):
        try:
            parts[f"{p.pid} {' '.join(p.cmdline()[1:])[:80]}"] = p.memory_info().rss / 1e6
        except psutil.Error:
            continue
    return parts


def tree_cpu_s(procs: list[psutil.Process]) -> float:
    """CPU seconds used so far by ``procs`` and their reaped children."""
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            continue
    return total


def wait_idle(marker: str, quiet_s: int = 3, timeout_s: float = 600) -> float:
    """Wait until the server's tree used under 5 % of a core for ``quiet_s`` seconds running."""
    started, quiet = time.perf_counter(), 0
    while quiet < quiet_s and time.perf_counter() - started < timeout_s:
        procs = server_tree(marker)
        before = tree_cpu_s(procs)
        time.sleep(1)
        quiet = quiet + 1 if tree_cpu_s(procs) - before < 0.05 else 0
    return time.perf_counter() - started


def logged(command: list[str], log: Path, env: dict[str, str]) -> StdioServerParameters:
    """Run ``command`` with its stderr in ``log`` (the peer logs every request)."""
    wrapped = ["/bin/sh", "-c", 'exec "$@" 2>>"$SERVER_LOG"', "sh", *command]
    return StdioServerParameters(command=wrapped[0], args=wrapped[1:], env={**env, "SERVER_LOG": str(log)})


# ------------------------------------------------------------------ one round per side


async def run_ours(model: Path, tmp: Path, items: list[dict[str, Any]], qs: list[str]) -> dict[str, Any]:
    data_dir = tmp / "ours"
    params = logged([sys.executable, "-m", "memory_service"], tmp / "ours.log", stdio_env(data_dir, model))
    out: dict[str, Any] = {}
    async with Client(params, read_timeout_seconds=600) as client:
        await model_loaded(client)
        t0 = time.perf_counter()
        for i in range(0, len(items), BATCH):
            await call(client, "memory_bulk_add", {"memories": items[i : i + BATCH]})
            progress(i + BATCH, len(items), t0)
        out["ingest_s"] = time.perf_counter() - t0
        out["settle_s"] = wait_idle("memory_service")
        latencies, hits = [], 0
        for q in qs:
            t0 = time.perf_counter()
            data = await call(client, "memory_search", {"query": q, "limit": LIMIT, "mode": "auto"})
            latencies.append((time.perf_counter() - t0) * 1000)
            hits += len(data["results"])
        out["search_ms"], out["hits_mean"] = latencies, hits / len(qs)
        out["rss_parts_mb"] = tree_rss("memory_service")
        out["rss_mb"] = sum(out["rss_parts_mb"].values())
    daemon_gone(data_dir)  # the daemon leaves 1 s after the session: not during the peer's round
    return out


async def find(client: Client, query: str) -> int:
    """One qdrant-find; the number of entries it returned."""
    result = await client.call_tool("qdrant-find", {"query": query})
    text = " ".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        raise RuntimeError(f"qdrant-find failed: {text[:500]}")
    return text.count("<entry>")


async def run_peer(
    script: Path, cache: Path, tmp: Path, items: list[dict[str, Any]], qs: list[str]
) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env |= {
        "FASTEMBED_CACHE_PATH": str(cache),
        "HF_HUB_OFFLINE": "1",
        "QDRANT_LOCAL_PATH": str(tmp / "peer"),
        "COLLECTION_NAME": "mem",
        "EMBEDDING_MODEL": "sentence-transformers/all-MiniLM-L6-v2",
        "QDRANT_SEARCH_LIMIT": str(LIMIT),
    }
    out: dict[str, Any] = {}
    async with Client(logged([str(script)], tmp / "peer.log", env), read_timeout_seconds=600) as client:
        await find(client, "warm up")
        t0 = time.perf_counter()
        for i, item in enumerate(items, start=1):
            meta = {"type": item["type"], **item["metadata"]}
            result = await client.call_tool(
                "qdrant-store", {"information": item["content"], "metadata": meta}
            )
            if result.is_error:
                raise RuntimeError(f"qdrant-store failed: {result.content}")
            if i % BATCH == 0:
                progress(i, len(items), t0)
        out["ingest_s"] = time.perf_counter() - t0
        out["settle_s"] = wait_idle(PEER)
        latencies, hits = [], 0
        for q in qs:
            t0 = time.perf_counter()
            hits += await find(client, q)
            latencies.append((time.perf_counter() - t0) * 1000)
        out["search_ms"], out["hits_mean"] = latencies, hits / len(qs)
        out["rss_parts_mb"] = tree_rss(PEER)
        out["rss_mb"] = sum(out["rss_parts_mb"].values())
    return out


def progress(done: int, total: int, t0: float) -> None:
    if done % 2000 == 0 or done >= total:
        print(f"    stored {min(done, total):>6} / {total}  ({time.perf_counter() - t0:6.1f} s)", flush=True)


# ------------------------------------------------------------------ report


def report(result: dict[str, Any]) -> None:
    cfg = result["config"]
    print()
    print(
        f"N={cfg['n']}, {cfg['queries']} searches (limit {LIMIT}) per round, "
        f"{cfg['rounds']} round(s) per side; "
        f"ours: memory_bulk_add x{BATCH}, auto mode; {PEER} {PEER_VERSION}: one qdrant-store per "
        "memory (it has no bulk tool). Times at the MCP client over stdio; RSS of the server's "
        "process tree after the searches."
    )
    head = (
        f"{'':<22}{'round':>6}{'ingest/s':>10}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'RSS MB':>8}{'hits':>6}"
    )
    print(head)
    for r in result["rounds"]:
        s = summary(r["search_ms"])
        print(
            f"{r['side']:<22}{r['round']:>6}{r['ingest_per_s']:>10.1f}{s['p50']:>9.2f}{s['p95']:>9.2f}"
            f"{s['p99']:>9.2f}{r['rss_mb']:>8.0f}{r['hits_mean']:>6.1f}"
        )
    for side in SIDES:
        p = result["pooled"][side]
        print(
            f"{side:<22}{'all':>6}{p['ingest_per_s']:>10.1f}{p['p50']:>9.2f}{p['p95']:>9.2f}"
            f"{p['p99']:>9.2f}{p['rss_mb']:>8.0f}"
        )
    r = result["ratios"]
    print()
    print(f"ingest rate, ours / peer   {fmt_ratio(r['ingest'], 'faster', 'slower')}")
    for q in ("p50", "p95", "p99"):
        print(f"search {q}, peer / ours    {fmt_ratio(r[q], 'we are faster', 'we are slower')}")
    print(f"RSS, ours / peer           {fmt_ratio(r['rss'], 'we use more', 'we use less')}")


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = list(range(len(CURVE)))  # one slot per percentile, so the tail is as wide as the body
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    for side, style in zip(SIDES, ("o-", "s--"), strict=True):
        ax.plot(xs, result["curves"][side], style, label=side, markersize=4)
    ax.set_xticks(xs, [f"p{c:g}" for c in CURVE], rotation=45, fontsize=8)
    ax.set_xlabel("percentile (one slot each, not to scale)")
    ax.set_yscale("log")
    ax.set_ylabel("search latency at the MCP client (ms, log)")
    cfg = result["config"]
    ax.set_title(
        f"memory_search (auto) vs qdrant-find: N={cfg['n']}, "
        f"{cfg['queries']} x {cfg['rounds']} searches per side ({cfg['date']})",
        fontsize=10,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000, help="memories to ingest per round")
    parser.add_argument("--queries", type=int, default=200, help="searches per round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per side, alternating ours/peer")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "peers_latency.png")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--from-json", type=Path, help="no run: print the table and plot from this file")
    parser.add_argument(
        "--model-path", type=Path, default=Path(os.environ.get("MEMORY_TEST_MODEL_PATH", DEFAULT_MODEL))
    )
    args = parser.parse_args()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit('bench/peers.py needs matplotlib for its plot: .venv/bin/pip install -e ".[bench]"')
    if args.from_json:
        result = json.loads(args.from_json.read_text())
        report(result)
        plot(result, args.plot)
        print(f"\nplot: {args.plot}")
        return
    script = ensure_peer(PEER_VENV)
    items, qs = list(memories(args.n)), distinct_queries(args.queries)
    started = time.perf_counter()
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="peersbench-") as tmp:
        cache = hub_cache(Path(tmp) / "fastembed", args.model_path)
        for r in range(1, args.rounds + 1):
            for side in SIDES:
                work = Path(tmp) / f"{side}-{r}"
                work.mkdir()
                print(f"round {r}: {side}", flush=True)
                try:
                    if side == PEER:
                        out = anyio.run(run_peer, script, cache, work, items, qs)
                    else:
                        out = anyio.run(run_ours, args.model_path, work, items, qs)
                except Exception:
                    for log in work.glob("*.log"):
                        print(
                            f"--- {log.name} (last lines)\n" + "\n".join(log.read_text().splitlines()[-30:])
                        )
                    raise
                out |= {"side": side, "round": r, "ingest_per_s": args.n / out["ingest_s"]}
                s = summary(out["search_ms"])
                print(
                    f"    ingest {out['ingest_per_s']:.1f}/s, settled in {out['settle_s']:.0f} s, "
                    f"search p50 {s['p50']:.2f} p95 {s['p95']:.2f} p99 {s['p99']:.2f} ms, "
                    f"RSS {out['rss_mb']:.0f} MB ({len(out['rss_parts_mb'])} processes)",
                    flush=True,
                )
                rounds.append(out)
                shutil.rmtree(work, ignore_errors=True)
    both = {side: pooled(rounds, side) for side in SIDES}
    result = {
        "config": {
            "n": args.n,
            "queries": args.queries,
            "rounds": args.rounds,
            "limit": LIMIT,
            "peer": f"{PEER}=={PEER_VERSION}",
            "model": args.model_path.name,
            "date": datetime.date.today().isoformat(),
            "cpus": os.cpu_count(),
            "seconds": time.perf_counter() - started,
        },
        "rounds": rounds,
        "pooled": both,
        "ratios": ratios(both[SIDES[0]], both[PEER]),
        "curves": {
            side: [pct([ms for r in rounds if r["side"] == side for ms in r["search_ms"]], c) for c in CURVE]
            for side in SIDES
        },
        "curve_percentiles": list(CURVE),
    }
    report(result)
    plot(result, args.plot)
    print(f"\nplot: {args.plot}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
        print(f"figures: {args.json}")
    print(f"run time: {result['config']['seconds']:.0f} s")


if __name__ == "__main__":
    main()
