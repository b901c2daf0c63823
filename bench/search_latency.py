"""Search latency at N memories: ingest, index, then 500 searches end to end and store-only.

    .venv/bin/python bench/search_latency.py --n 10000
    .venv/bin/python bench/search_latency.py --n 100000
    .venv/bin/python bench/search_latency.py --n 10000 --profile server

``--profile server`` runs the same benchmark on the server adapters: it starts the Neo4j test
harness and a redis-server (tests/servers, built and installed by ``make install`` / ``.ci/run``)
on loopback ports, and uses the Qdrant server adapter on qdrant-client's local mode
(``--vectors local``), a real Qdrant (``--vectors http://host:6333``), or keeps qdrant-edge
(``--vectors edge``: Neo4j and Redis alone). Local mode searches exactly in Python, so its vector
figures are no measure of a Qdrant server.

Ingest goes through the MCP server (memory_bulk_add, 100 per call, plus a sample of single
memory_add calls), timed once the server's model is loaded (searches say when), as the raw
embedder's timing starts with its model loaded; searches are memory_search calls timed at the
MCP client (query embedding included). The server runs as a real subprocess over stdio by
default (as Claude Code runs it); ``--transport memory`` uses the in-process client. Store-only
time is the vector store's own search call with precomputed query vectors, after the HNSW index
is built. Prints a table.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import call, model_loaded
from bench.corpus import distinct_queries, memories
from memory_service.app import open_services
from memory_service.core.models import derive_title, embedding_text
from memory_service.core.ports import Maintainable, PayloadFilter
from memory_service.core.records import MEMORIES
from memory_service.embeddings.fastembed_embedder import FastEmbedder
from memory_service.embeddings.model_loading import TOKENIZER_THREADS_VARIABLE
from memory_service.server import build_server
from memory_service.settings import Settings
from tests.conftest import daemon_gone

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(values: list[float]) -> str:
    p50, p95, p99 = (pct(values, q) for q in (50, 95, 99))
    return f"p50 {p50:7.2f}  p95 {p95:7.2f}  p99 {p99:7.2f}  (ms, n={len(values)})"


def settings_for(data_dir: Path, model: Path) -> Settings:
    return Settings(
        data_dir=data_dir,
        project_root=data_dir,
        project="bench",
        embedding={"model_path": model},
    )


def client_for(args: argparse.Namespace, data_dir: Path, model: Path) -> Client:
    if args.transport == "memory":
        return Client(build_server(settings_for(data_dir, model)))
    return Client(
        StdioServerParameters(
            command=sys.executable, args=["-m", "memory_service"], env=stdio_env(data_dir, model)
        ),
        read_timeout_seconds=600,
    )


def stdio_env(data_dir: Path, model: Path, **extra: str) -> dict[str, str]:
    """The environment of a stdio server session on ``data_dir`` (offline, the local model)."""
    return {
        **os.environ,
        "MEMORY_DATA_DIR": str(data_dir),
        "MEMORY_PROJECT_ROOT": str(data_dir),
        "MEMORY_PROJECT": "bench",
        "MEMORY_EMBEDDING__MODEL_PATH": str(model),
        "HF_HUB_OFFLINE": "1",
        "MEMORY_DAEMON__IDLE_TIMEOUT_S": "1",  # the stores can be opened in process once it left
        **extra,
    }


def start_servers(stack: contextlib.ExitStack, tmp: Path, vectors: str) -> dict[str, str]:
    """Start Neo4j and Redis for the server profile; the MEMORY_* variables that select them."""
    from tests.servers.neo4j_harness import Neo4jHarness, launcher_command
    from tests.servers.redis_server import RedisServer

    command = launcher_command()
    if command is None:
        sys.exit("the Neo4j harness is not built: run `make install` (needs Java 17 and Maven)")
    neo4j = Neo4jHarness(command)
    uri = neo4j.start()
    stack.callback(neo4j.stop)
    redis = RedisServer(tmp / "redis")
    redis.start()
    stack.callback(redis.stop)
    env = {"MEMORY_GRAPH__URI": uri, "MEMORY_REDIS__URL": redis.url}
    if vectors == "local":
        env["MEMORY_QDRANT__PATH"] = str(tmp / "qdrant")
    elif vectors != "edge":
        env["MEMORY_QDRANT__URL"] = vectors
    return env


def server_rss_mb(transport: str) -> float:
    me = psutil.Process()
    if transport == "memory":
        return me.memory_info().rss / 1e6
    kids = [p for p in me.children(recursive=True) if "memory_service" in " ".join(p.cmdline())]
    return sum(p.memory_info().rss for p in kids) / 1e6


def raw_embedder(texts: list[str], model: Path, out: dict[str, Any]) -> None:
    """The embedding model alone on the texts the server embeds (title and content), with the same
    weights, in this process, before the server starts: the ceiling the ingest rate is compared
    with. Timed three ways, the fastest counts: fastembed as a
    user would call it (one session on every core) with batches of 64 and of the configured size,
    and the server's own embedder (runs in parallel, texts sorted by length) without its cache."""
    from fastembed import TextEmbedding

    settings = Settings(embedding={"model_path": model}).embedding  # MEMORY_EMBEDDING__* apply
    rates: dict[str, float] = {}
    user_choice = os.environ.get(TOKENIZER_THREADS_VARIABLE)
    ours = FastEmbedder(settings)
    ours.wait_ready(120)  # it turns the tokenizer's own threads off, unless the user chose
    weights = ours.model_folder or model  # the server's weights (its int8 copy with precision int8)
    plain = TextEmbedding(
        model_name=settings.model_name, specific_model_path=str(weights), threads=settings.threads
    )
    ours_choice = os.environ.pop(TOKENIZER_THREADS_VARIABLE, None)
    if user_choice is not None:  # fastembed as the user's environment runs it
        os.environ[TOKENIZER_THREADS_VARIABLE] = user_choice
    list(plain.embed(texts[:64], batch_size=64))  # warm up
    for batch in sorted({64, settings.batch_size}):
        started = time.perf_counter()
        for _ in plain.embed(texts, batch_size=batch):
            pass
        rates[f"fastembed, batch {batch}"] = len(texts) / (time.perf_counter() - started)
    del plain
    if ours_choice is not None:
        os.environ[TOKENIZER_THREADS_VARIABLE] = ours_choice
    ours.embed_documents(texts[:64])  # warm up (no cache: every text is embedded)
    started = time.perf_counter()
    for i in range(0, len(texts), 100):  # as the bulk adds come: 100 per call
        ours.embed_documents(texts[i : i + 100])
    runs = "1 text" if ours.one_text_per_run else f"{settings.batch_size} texts"
    rates[f"server embedder, {runs} per run"] = len(texts) / (time.perf_counter() - started)
    out["raw_rates"] = rates
    out["raw_embed_per_s"] = max(rates.values())


async def ingest_and_search(
    args: argparse.Namespace, data_dir: Path, model: Path, out: dict[str, Any]
) -> None:
    items = list(memories(args.n))
    async with client_for(args, data_dir, model) as client:
        await model_loaded(client)  # as the raw embedder's timing starts with its model loaded
        started = time.perf_counter()
        for i in range(0, len(items), 100):
            await call(client, "memory_bulk_add", {"memories": items[i : i + 100]})
            if (i // 100) % 100 == 0:
                print(
                    f"  ingested {i + 100:>7} / {args.n}  ({time.perf_counter() - started:6.1f} s)",
                    flush=True,
                )
        seconds = time.perf_counter() - started
        out["ingest_seconds"] = seconds
        out["ingest_per_s"] = args.n / seconds
        singles = []
        for item in memories(args.singles, seed=99):
            t0 = time.perf_counter()
            await call(client, "memory_add", item)
            singles.append((time.perf_counter() - t0) * 1000)
        out["memory_add_ms"] = singles
        out["rss_after_ingest_mb"] = server_rss_mb(args.transport)


async def searches(args: argparse.Namespace, data_dir: Path, model: Path, out: dict[str, Any]) -> None:
    qs = distinct_queries(args.queries)  # each query embedded once: the model's cost is in every call
    async with client_for(args, data_dir, model) as client:
        await call(client, "memory_search", {"query": "warm up the model", "limit": 10})
        client_ms, server_ms = [], []
        for q in qs:
            t0 = time.perf_counter()
            data = await call(client, "memory_search", {"query": q, "limit": 10})
            client_ms.append((time.perf_counter() - t0) * 1000)
            server_ms.append(float(data["query_time_ms"]))
        out["search_ms"] = client_ms
        out["search_server_ms"] = server_ms
        out["rss_after_search_mb"] = server_rss_mb(args.transport)


def store_only(data_dir: Path, model: Path, n_queries: int, out: dict[str, Any]) -> None:
    services = open_services(settings_for(data_dir, model), housekeeping=False)
    try:
        t0 = time.perf_counter()
        if isinstance(services.stores.vectors, Maintainable):  # a server builds its index itself
            services.stores.vectors.optimize(MEMORIES)
        out["index_build_seconds"] = time.perf_counter() - t0
        services.stores.embedder.wait_ready(120)
        if isinstance(services.stores.embedder, FastEmbedder):  # the searches must embed their queries
            services.stores.embedder.use_cache(None)
        vectors = [services.stores.embedder.embed_query(q) for q in distinct_queries(n_queries)]
        flt = PayloadFilter(equals={"status": "active"})
        timings = []
        for v in vectors:
            t0 = time.perf_counter()
            services.stores.vectors.search_dense(MEMORIES, v, 30, flt)
            timings.append((time.perf_counter() - t0) * 1000)
        out["store_search_ms"] = timings
        out["disk_mb"] = services.stores.vectors.size_bytes() / 1e6
        out["points"] = services.stores.vectors.count(MEMORIES)
    finally:
        services.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000, help="memories to ingest")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--singles", type=int, default=200, help="single memory_add calls to time")
    parser.add_argument("--transport", choices=["stdio", "memory"], default="stdio")
    parser.add_argument(
        "--model-path", type=Path, default=Path(os.environ.get("MEMORY_TEST_MODEL_PATH", DEFAULT_MODEL))
    )
    parser.add_argument("--data-dir", type=Path, help="keep the data here (default: a temp dir)")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --data-dir: search the memories already there (skips ingest and its figures)",
    )
    parser.add_argument(
        "--raw-sample", type=int, default=10_000, help="texts of the raw embedder run (same corpus)"
    )
    parser.add_argument("--profile", choices=["embedded", "server"], default="embedded")
    parser.add_argument(
        "--vectors",
        default="local",
        help="server profile: 'local' (Qdrant adapter on qdrant-client's local mode), 'edge' (keep "
        "qdrant-edge: measures Neo4j and Redis alone) or a Qdrant server's URL",
    )
    args = parser.parse_args()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="membench-") as tmp, contextlib.ExitStack() as servers:
        data_dir = args.data_dir or Path(tmp) / "data"
        if args.profile == "server":
            os.environ.update(start_servers(servers, Path(tmp), args.vectors))
        print(
            f"memory-service search latency: N={args.n}, transport={args.transport}, "
            f"profile={args.profile}, model={args.model_path}"
        )
        if args.reuse and (data_dir / "local.sqlite3").exists():
            print(f"  reusing the memories in {data_dir} (no ingest)")
        else:
            # What the server embeds for each memory: its title (derived as the server derives it)
            # and its content.
            sample = list(memories(min(args.n, args.raw_sample)))
            texts = [embedding_text(derive_title(m["content"], m["metadata"]), m["content"]) for m in sample]
            raw_embedder(texts, args.model_path, out)
            anyio.run(ingest_and_search, args, data_dir, args.model_path, out)
        if args.transport == "stdio":
            daemon_gone(data_dir)  # the sessions' daemon owns the stores until it leaves (1 s idle)
        store_only(data_dir, args.model_path, args.queries, out)
        anyio.run(searches, args, data_dir, args.model_path, out)
    print()
    print(f"memories stored              {out['points']}")
    if "ingest_per_s" in out:
        raw, rate = out["raw_embed_per_s"], out["ingest_per_s"]
        print(f"ingest (bulk_add x100)       {rate:.0f} memories/s  ({out['ingest_seconds']:.1f} s)")
        for how, value in out["raw_rates"].items():
            print(f"  raw embedder ({how}) {value:.0f} texts/s")
        print(f"raw embedder, same texts     {raw:.0f} texts/s (fastest): ingest is {rate / raw:.0%} of it")
        print(f"memory_add (single)          {summary(out['memory_add_ms'])}")
    print(f"HNSW index build             {out['index_build_seconds']:.1f} s (background in the server)")
    print(f"memory_search end to end     {summary(out['search_ms'])}")
    print(f"  server query_time_ms       {summary(out['search_server_ms'])}")
    slowest = sorted(enumerate(out["search_ms"], start=1), key=lambda t: -t[1])[:5]
    print("  slowest (search #: ms)     " + ", ".join(f"#{i}: {ms:.0f}" for i, ms in slowest))
    print(f"store-only dense search      {summary(out['store_search_ms'])}")
    ingested = out.get("rss_after_ingest_mb")
    after_ingest = f"{ingested:.0f} MB after ingest, " if ingested is not None else ""
    print(f"server RSS                   {after_ingest}{out['rss_after_search_mb']:.0f} MB after searches")
    print(f"vectors on disk              {out['disk_mb']:.0f} MB")
    print(f"mean search                  {statistics.mean(out['search_ms']):.2f} ms")


if __name__ == "__main__":
    main()
