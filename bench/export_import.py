"""Export and import rate (memories/s) at N memories, with and without embeddings.

    .venv/bin/python bench/export_import.py --n 10000

Ingests N corpus memories (bench/corpus.py) through MemoryService.bulk_add, adds graph edges
between a tenth of them and votes on another tenth, then times, in-process on the embedded stores:

* export without embeddings, and with them (file size per memory too);
* import of the file with embeddings into an empty data directory (the vectors are reused);
* import of the file without embeddings into another empty one (every memory is embedded again).

Each import is checked: exporting the imported store gives the same memory lines, and --queries
searches give the same top-10 ids in the same order as on the source. Prints a table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import memories, queries
from memory_service.app import Services, open_services
from memory_service.core.memory.schemas import MemoryBulkAddRequest
from memory_service.core.portability.schemas import ExportMemoryInput, ImportMemoryInput
from memory_service.core.ports import GraphEdge, Vote
from memory_service.core.records import MEMORY_LABEL
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.settings import Settings

DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


def open_dir(data_dir: Path, model: Path) -> Services:
    settings = Settings(
        data_dir=data_dir,
        project_root=data_dir,
        project="bench",
        embedding={"model_path": model},
    )
    services = open_services(settings, housekeeping=False)
    assert services.stores.embedder.wait_ready(120), "the model did not load"
    return services


def ingest(services: Services, n: int) -> None:
    items = list(memories(n))
    ids: list[str] = []
    for i in range(0, n, 100):
        ids += services.memory.bulk_add(MemoryBulkAddRequest(memories=items[i : i + 100])).memory_ids
    edges = [GraphEdge("RELATES_TO", MEMORY_LABEL, ids[i], MEMORY_LABEL, ids[i - 1]) for i in range(1, n, 10)]
    services.stores.graph.upsert_edges(edges)
    services.stores.votes.add([Vote(ids[i], ids[0], 1.0, "bench") for i in range(5, n, 10)])


def answers(services: Services, questions: list[str]) -> list[list[str]]:
    """The top-10 memory ids each question gets (memory_search, auto mode)."""
    return [
        [hit.memory_id for hit in services.search.search(MemorySearchInput(query=q, limit=10)).results]
        for q in questions
    ]


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    out = run()
    return out, time.perf_counter() - started


def body(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:-1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--queries", type=int, default=100, help="searches compared after each import")
    args = parser.parse_args()
    rows: list[tuple[str, int, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        root = Path(tmp)
        source = open_dir(root / "source", args.model)
        try:
            _, seconds = timed(lambda: ingest(source, args.n))
            print(f"ingested {args.n} memories in {seconds:.1f} s", flush=True)
            questions = list(queries(args.queries))
            expected = answers(source, questions)
            files = {}
            for embeddings in (False, True):
                path = root / f"export-{'vectors' if embeddings else 'plain'}.jsonl"
                req = ExportMemoryInput(output_path=str(path), include_embeddings=embeddings)
                out, seconds = timed(lambda req=req: source.portability.export(req, trusted_path=True))
                files[embeddings] = path
                size = (
                    f"{out.file_size_bytes / 1e6:.1f} MB ({out.file_size_bytes // max(1, args.n)} B/memory)"
                )
                rows.append((f"export, embeddings={embeddings}", out.memories_exported, seconds, size))
        finally:
            source.close()
        for embeddings in (True, False):
            target = open_dir(root / f"target-{embeddings}", args.model)
            try:
                req = ImportMemoryInput(file_path=str(files[embeddings]))
                out, seconds = timed(
                    lambda req=req, t=target: t.portability.import_file(req, trusted_path=True)
                )
                got = answers(target, questions)
                check = root / f"check-{embeddings}.jsonl"
                target.portability.export(
                    ExportMemoryInput(output_path=str(check), include_embeddings=embeddings),
                    trusted_path=True,
                )
            finally:
                target.close()
            same = "identical" if body(check) == body(files[embeddings]) else "DIFFERENT"
            agree = sum(a == b for a, b in zip(got, expected, strict=True))
            note = f"reused {out.vectors_reused}, re-embedded {out.reembedded}; re-export {same}; "
            note += f"same top-10 for {agree}/{len(questions)} searches"
            rows.append((f"import, embeddings={embeddings}", out.imported, seconds, note))
    print(f"\n{'step':<28} {'memories':>9} {'seconds':>8} {'memories/s':>11}  notes")
    for step, count, seconds, note in rows:
        print(f"{step:<28} {count:>9} {seconds:>8.2f} {count / seconds:>11.0f}  {note}")


if __name__ == "__main__":
    main()
