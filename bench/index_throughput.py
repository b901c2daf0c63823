"""Code-index throughput on a large real code base, a 100k-line subset, and a one-file reindex.

    .venv/bin/pip install --target /tmp/src django     # any large package works; offline after that
    .venv/bin/python bench/index_throughput.py --path /tmp/src/django

Drives the real server object through the in-process MCP client: index_directory (wait=true)
on the whole tree, then on a copy of its first ~100k lines, then one changed file and
``reindex changed``. Prints files/s, lines/s, units, where the time went (parse, embed, store,
link), RSS, and the one-file reindex time. Embeddings are cached by text, so the subset run
after the full run would be unfairly fast: each run gets its own data directory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import call
from indexer import iter_source_files
from memory_service.server import build_server
from memory_service.settings import Settings

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


def default_path() -> Path | None:
    try:
        import django  # type: ignore[import-not-found]
    except ImportError:
        return None
    return Path(django.__file__).parent


def subset(src: Path, dest: Path, max_lines: int) -> int:
    """Copy source files of ``src`` (walk order) into ``dest`` until ``max_lines`` lines."""
    lines = 0
    for entry in iter_source_files(src):
        if entry.skipped is not None:
            continue
        text = entry.path.read_bytes()
        target = dest / entry.path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)
        lines += text.count(b"\n")
        if lines >= max_lines:
            break
    return lines


async def run(root: Path, data: Path, model: Path, change_one: bool) -> dict[str, Any]:
    settings = Settings(data_dir=data, project_root=root, project="bench", embedding={"model_path": model})
    out: dict[str, Any] = {}
    async with Client(build_server(settings)) as client:
        await call(client, "code_search", {"query": "warm up"})
        t0 = time.perf_counter()
        job = (await call(client, "index_directory", {"directory_path": str(root), "wait": True}))["job"]
        out["wall_seconds"] = time.perf_counter() - t0
        out["stats"] = job["stats"]
        out["status"] = job["status"]
        out["rss_mb"] = psutil.Process().memory_info().rss / 1e6
        if change_one:
            victim = next(p for p in sorted(root.rglob("*.py")) if p.stat().st_size > 2000)
            victim.write_text(victim.read_text() + "\n\ndef bench_added_helper(x):\n    return x * 2\n")
            t0 = time.perf_counter()
            re = (await call(client, "reindex", {"scope": "changed", "wait": True}))["job"]
            out["reindex_wall_seconds"] = time.perf_counter() - t0
            out["reindex_stats"] = re["stats"]
            found = await call(client, "code_search", {"query": "bench_added_helper doubles x", "limit": 3})
            out["reindex_found_new_unit"] = any(r["name"] == "bench_added_helper" for r in found["results"])
        timings = []
        for q in (
            "parse a date string",
            "send an email",
            "validate a form field",
            "open a database connection",
        ):
            t0 = time.perf_counter()
            await call(client, "code_search", {"query": q})
            timings.append((time.perf_counter() - t0) * 1000)
        out["code_search_ms"] = timings
    return out


def report(title: str, r: dict[str, Any]) -> None:
    s = r["stats"]
    wall = r["wall_seconds"]
    print(f"\n== {title} ({r['status']})")
    print(
        f"files {s['files_seen']}  lines {s['lines']}  units {s['units']}  failed {s['files_failed']}  "
        f"with parse errors {int(s.get('files_with_parse_errors', 0))}"
    )
    print(
        f"wall {wall:.1f} s  ->  {s['files_seen'] / wall:.0f} files/s, {s['lines'] / wall:.0f} lines/s, "
        f"{s['units'] / wall:.0f} units/s"
    )
    print(
        f"time: walk {s.get('walk_seconds', 0):.1f} s, parse {s.get('parse_seconds', 0):.1f} s, "
        f"embed {s.get('embed_seconds', 0):.1f} s, store {s.get('store_seconds', 0):.1f} s, "
        f"link {s.get('link_seconds', 0):.1f} s"
    )
    print(f"skipped: {s.get('skipped_by_reason')}")
    print(f"RSS {r['rss_mb']:.0f} MB; code_search {', '.join(f'{t:.0f}' for t in r['code_search_ms'])} ms")
    if "reindex_wall_seconds" in r:
        rs = r["reindex_stats"]
        print(
            f"one-file reindex changed: {r['reindex_wall_seconds']:.2f} s wall (files_indexed "
            f"{rs['files_indexed']}, unchanged {rs['files_unchanged']}, "
            f"link {rs.get('link_seconds', 0):.2f} s); "
            f"new unit found by code_search: {r['reindex_found_new_unit']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--path", type=Path, default=default_path(), help="code base to index")
    parser.add_argument("--subset-lines", type=int, default=100_000)
    parser.add_argument("--skip-full", action="store_true", help="only the subset and the one-file reindex")
    parser.add_argument(
        "--model-path", type=Path, default=Path(os.environ.get("MEMORY_TEST_MODEL_PATH", DEFAULT_MODEL))
    )
    args = parser.parse_args()
    if args.path is None or not args.path.is_dir():
        sys.exit("give --path to a large code base (e.g. pip install --target /tmp/src django)")
    with tempfile.TemporaryDirectory(prefix="idxbench-") as tmp:
        work = Path(tmp)
        print(f"index throughput: {args.path}, model {args.model_path}, {os.cpu_count()} cores")
        if not args.skip_full:
            full = anyio.run(run, args.path.resolve(), work / "full-data", args.model_path, False)
            report(f"full tree {args.path}", full)
        sub = work / "subset"
        lines = subset(args.path, sub, args.subset_lines)
        print(f"\nsubset: {lines} lines copied to {sub}")
        part = anyio.run(run, sub, work / "subset-data", args.model_path, True)
        report("100k-line subset", part)
        shutil.rmtree(sub, ignore_errors=True)


if __name__ == "__main__":
    main()
