"""code_search ranking quality on developer questions over two real libraries (issue #16 item 3).

    .venv/bin/python bench/code_search_quality.py                # both libraries, all questions
    .venv/bin/python bench/code_search_quality.py -v             # plus every miss below top 3
    .venv/bin/python bench/code_search_quality.py --library commander --split dev

Question set: ``bench/data/code_questions.json``, written from reading the library sources before
any search was run: for each question, the units that answer it (qualified name + file relative to
the library root; a hit on any of them counts). Each question is in the ``dev`` half (used to tune
code_search) or the ``held_out`` half (reported only), alternating by position within a library.

Libraries, pinned in the question file and fetched with the registries' own clients:

* ``click`` (Python): the installed package when its version is the pinned one, otherwise the pinned
  wheel from ``pip download --no-deps`` (unpacked into ``--cache``);
* ``commander`` (JavaScript): ``npm pack commander@<version>`` into ``--cache``, unpacked; its
  ``lib/`` and ``index.js`` are indexed (``typings/`` only re-declares them).

When a source cannot be obtained the bench stops with the reason. Before indexing, every expected
unit is checked to exist in the sources (parsed with the indexer), so a question cannot silently
point at nothing.

Protocol: each library is copied into its own temporary project and indexed through the real server
(in-process MCP client, ``index_directory`` with ``wait: true``, embedding model all-MiniLM-L6-v2
ONNX from ``--model-path``), each in its own data directory, so no library is a distractor for the
other. Every question is sent as is to ``code_search`` (``limit`` 10, no language filter). The rank
of a question is the 1-based position of the first expected unit among the results (none: a miss).

Prints per library and overall, for the dev half, the held-out half and both: n, MRR@10 (mean of
1/rank, 0 for a miss), top-1, top-3, top-10 (share of questions answered at or above that rank),
plus the indexing time and the code_search latency (p50/p95). ``-v`` lists every question not
answered in the top 3 (``--below``) with what ranked above the expected unit.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import call
from indexer import language_for_path, parse_source
from memory_service.server import build_server
from memory_service.settings import ServerSettings, Settings

HERE = Path(__file__).resolve().parent
DEFAULT_MODEL = HERE.parents[1] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
DEFAULT_QUESTIONS = HERE / "data" / "code_questions.json"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "memory-service-bench"
LIMIT = 10
SPLITS = ("dev", "held_out")


class SourceError(RuntimeError):
    """A library's sources could not be obtained."""


# ---------------------------------------------------------------------------- sources


def fetch_pip(package: str, version: str, root: str, cache: Path) -> Path:
    """The package directory of ``package==version``: installed if it is that version, else a wheel."""
    try:
        installed = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed == version:
        dist = importlib.metadata.distribution(package)
        path = Path(str(dist.locate_file(root)))
        if path.is_dir():
            return path
    dest = cache / f"{package}-{version}"
    if not (dest / root).is_dir():
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
            cmd += ["-d", tmp, f"{package}=={version}"]
            run_client(cmd, f"pip download {package}=={version}")
            wheels = list(Path(tmp).glob("*.whl"))
            if not wheels:
                raise SourceError(f"pip download {package}=={version} produced no wheel")
            with zipfile.ZipFile(wheels[0]) as wheel:
                wheel.extractall(dest)
    if not (dest / root).is_dir():
        raise SourceError(f"{package}=={version}: no {root}/ directory in the wheel")
    return dest / root


def fetch_npm(package: str, version: str, root: str, cache: Path) -> Path:
    """The unpacked ``npm pack`` tarball of ``package@version``."""
    dest = cache / f"{package}-{version}"
    if not (dest / root).is_dir():
        if shutil.which("npm") is None:
            raise SourceError(f"npm is not installed: cannot fetch {package}@{version}")
        with tempfile.TemporaryDirectory() as tmp:
            run_client(["npm", "pack", f"{package}@{version}", "--pack-destination", tmp], "npm pack")
            tarballs = list(Path(tmp).glob("*.tgz"))
            if not tarballs:
                raise SourceError(f"npm pack {package}@{version} produced no tarball")
            dest.mkdir(parents=True, exist_ok=True)
            with tarfile.open(tarballs[0]) as tar:
                tar.extractall(dest, filter="data")
    if not (dest / root).is_dir():
        raise SourceError(f"{package}@{version}: no {root}/ directory in the tarball")
    return dest / root


def run_client(cmd: list[str], what: str) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(f"{what} failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SourceError(f"{what} failed (exit {done.returncode}): {' / '.join(tail)}")


def library_source(spec: dict[str, Any], cache: Path) -> Path:
    fetch = {"pip": fetch_pip, "npm": fetch_npm}.get(spec["client"])
    if fetch is None:
        raise SourceError(f"unknown client {spec['client']!r}")
    return fetch(spec["package"], spec["version"], spec["root"], cache)


def copy_library(source: Path, include: list[str] | None, project: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    if not include:
        shutil.copytree(source, project, ignore=ignore)
        return
    project.mkdir(parents=True)
    for name in include:
        src = source / name
        if src.is_dir():
            shutil.copytree(src, project / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, project / name)
        else:
            raise SourceError(f"{source}: {name} not found")


def source_units(project: Path) -> set[tuple[str, str]]:
    """(qualified name, relative file) of every unit the indexer finds in ``project``."""
    found: set[tuple[str, str]] = set()
    for path in sorted(project.rglob("*")):
        language = language_for_path(path) if path.is_file() else None
        if language is None:
            continue
        rel = path.relative_to(project).as_posix()
        for unit in parse_source(path.read_bytes(), language, rel).units:
            found.add((unit.qualified_name, rel))
    return found


# ---------------------------------------------------------------------------- scoring


@dataclass
class Outcome:
    question: dict[str, Any]
    rank: int | None  # 1-based rank of the first expected unit; None when not in the results
    results: list[dict[str, Any]]
    latency_ms: float


@dataclass
class Scores:
    n: int = 0
    reciprocal: float = 0.0
    at: dict[int, int] = field(default_factory=lambda: {1: 0, 3: 0, 10: 0})

    def add(self, rank: int | None) -> None:
        self.n += 1
        if rank is None:
            return
        self.reciprocal += 1 / rank
        for k in self.at:
            self.at[k] += rank <= k

    def row(self) -> str:
        if not self.n:
            return f"{0:>4}" + f"{'-':>8}" * 4
        cells = [self.reciprocal / self.n] + [self.at[k] / self.n for k in (1, 3, 10)]
        return f"{self.n:>4}" + "".join(f"{c:>8.3f}" for c in cells)


def rank_of(results: list[dict[str, Any]], expected: list[dict[str, str]]) -> int | None:
    wanted = {(e["name"], e["file"]) for e in expected}
    for i, hit in enumerate(results, 1):
        if (hit.get("qualified_name") or hit["name"], hit["file_path"]) in wanted:
            return i
    return None


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] if ordered else 0.0


# ---------------------------------------------------------------------------- running


async def run_library(
    name: str, spec: dict[str, Any], questions: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[list[Outcome], dict[str, Any]]:
    source = library_source(spec, args.cache)
    with tempfile.TemporaryDirectory(prefix="codesearchbench-") as tmp:
        project, data = Path(tmp) / name, Path(tmp) / "data"
        copy_library(source, spec.get("include"), project)
        units = source_units(project)
        missing = [
            f"{q['id']}: {e['name']} in {e['file']}"
            for q in questions
            for e in q["expected"]
            if (e["name"], e["file"]) not in units
        ]
        if missing:
            sys.exit(f"{name}: expected units not found in the sources:\n  " + "\n  ".join(missing))
        settings = Settings(
            data_dir=data,
            project_root=project,
            project="bench",
            embedding={"model_path": args.model_path},
            server=ServerSettings(http_enabled=False),
        )
        outcomes: list[Outcome] = []
        async with Client(build_server(settings)) as client:
            await call(client, "code_search", {"query": "warm up"})  # loads the model
            t0 = time.perf_counter()
            job = (await call(client, "index_directory", {"directory_path": str(project), "wait": True}))[
                "job"
            ]
            info = {
                "index_seconds": time.perf_counter() - t0,
                "status": job["status"],
                **job.get("stats", {}),
            }
            for q in questions:
                t0 = time.perf_counter()
                out = await call(client, "code_search", {"query": q["question"], "limit": LIMIT})
                elapsed = (time.perf_counter() - t0) * 1000
                outcomes.append(Outcome(q, rank_of(out["results"], q["expected"]), out["results"], elapsed))
    return outcomes, info


def report(outcomes: list[Outcome], infos: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    libraries = list(dict.fromkeys(o.question["library"] for o in outcomes))
    print()
    for name in libraries:
        info = infos[name]
        print(
            f"{name}: indexed {info.get('files_indexed', info.get('files_seen'))} files, "
            f"{info.get('units')} units in {info['index_seconds']:.1f} s "
            f"(embed {info.get('embed_seconds', 0):.1f} s); status {info['status']}"
        )
    latencies = [o.latency_ms for o in outcomes]
    print(f"code_search latency p50 {pct(latencies, 50):.0f} ms, p95 {pct(latencies, 95):.0f} ms\n")
    print(f"{'library':<11}{'split':<10}{'n':>4}{'MRR@10':>8}{'top-1':>8}{'top-3':>8}{'top-10':>8}")
    for name in [*libraries, "overall"]:
        for split in [*SPLITS, "all"]:
            scores = Scores()
            for o in outcomes:
                if name in (o.question["library"], "overall") and split in (o.question["split"], "all"):
                    scores.add(o.rank)
            if scores.n:
                print(f"{name:<11}{split:<10}{scores.row()}")
    if args.verbose:
        print(f"\nbelow top {args.below}:")
        for o in outcomes:
            if o.rank is not None and o.rank <= args.below:
                continue
            q = o.question
            wanted = ", ".join(e["name"] for e in q["expected"])
            print(f"  {q['id']} [{q['split']}] rank {o.rank or '-'}: {q['question']}  (want {wanted})")
            above = o.results if o.rank is None else o.results[: o.rank - 1]
            for i, hit in enumerate(above[:5], 1):
                print(f"      {i}. {hit.get('qualified_name') or hit['name']}  {hit['file_path']}")


async def run(args: argparse.Namespace) -> None:
    spec = json.loads(args.questions.read_text(encoding="utf-8"))
    outcomes: list[Outcome] = []
    infos: dict[str, dict[str, Any]] = {}
    for name, lib in spec["libraries"].items():
        if args.library and name != args.library:
            continue
        questions = [
            q for q in spec["questions"] if q["library"] == name and args.split in (q["split"], "all")
        ]
        try:
            found, infos[name] = await run_library(name, lib, questions, args)
        except SourceError as exc:
            sys.exit(f"{name}: cannot obtain the sources: {exc}")
        outcomes += found
    if not outcomes:
        sys.exit("no questions selected")
    report(outcomes, infos, args)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--library", help="only this library of the question file")
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where fetched sources are kept")
    parser.add_argument(
        "--model-path", type=Path, default=Path(os.environ.get("MEMORY_TEST_MODEL_PATH", DEFAULT_MODEL))
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list the questions below top --below")
    parser.add_argument("--below", type=int, default=3, help="with -v: list questions ranked below this")
    args = parser.parse_args()
    anyio.run(run, args)


if __name__ == "__main__":
    main()
