"""LoCoMo retrieval recall through the service: R@1, R@5, R@10, MRR and search latency.

    .venv/bin/python bench/locomo_recall.py                 # dev split, default ranking
    .venv/bin/python bench/locomo_recall.py --split test    # held-out split
    .venv/bin/python bench/locomo_recall.py --keep-data /tmp/locomo   # embed once, reuse after
    .venv/bin/python bench/locomo_recall.py --split all --fusion dense   # plain dense baseline
    .venv/bin/python bench/locomo_recall.py --weight time=0 --weight date=0 --weight speaker=0  # no cues
    .venv/bin/python bench/locomo_recall.py --context-turns 0 --thread-weight 0 --hops 2  # before threads

Protocol (``../shared/data/README.md``): every turn of a conversation is stored as a ``session``
memory (``"<speaker>: <text>"``, plus the shared photo's caption when there is one; the dia_id,
session number, session date and speaker go in metadata, and ``session_id`` makes each LoCoMo
session a thread, so turns are also indexed with the turns before them) with memory_bulk_add-sized
batches through MemoryService, store-level dedupe off (a turn repeating an earlier one's words is
still its own turn); every question of categories 1-4 is a memory_search call (limit 10); a
question is a hit at k when any of its evidence dia_ids is among the top k. Each conversation gets
a fresh data directory, so questions only see their own conversation.

Split: the ten files sorted by name; the first five (26, 30, 41, 42, 43) are the dev split that
ranking is tuned on, the last five (44, 47, 48, 49, 50) are held out and only reported.
Latency is the in-process ``SearchService.search`` call (query embedding included), not MCP.

``--keep-data DIR`` keeps each conversation's data directory under DIR (one per conversation and
thread-context setting) with its memory id -> dia_id map, and later runs reuse it instead of
embedding again: ranking settings can then be compared in seconds. A directory whose ingest did
not finish (no map) is ingested again. Only the thread-context setting is in the key: after a
change to what is stored or embedded (the model, BM25, the turn format), start from an empty DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory_service.app import open_services
from memory_service.core.memory.schemas import MemoryBulkAddRequest
from memory_service.core.search.schemas import MemorySearchInput
from memory_service.settings import (
    RANKING_PROFILES,
    MemorySettings,
    RankingSettings,
    RankingWeights,
    Settings,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
DATA = SHARED / "data" / "locomo"
MODEL = SHARED / "models" / "all-MiniLM-L6-v2-onnx"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
BATCH = 100


def conversation_files(split: str) -> list[Path]:
    files = sorted(DATA.glob("*.json"), key=lambda p: p.name)
    return {"dev": files[:5], "test": files[5:], "all": files}[split]


def turns(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn as a memory_bulk_add item, in conversation order."""
    out = []
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := re.fullmatch(r"session_(\d+)", key)))
    for number, key in sessions:
        date = conv.get(f"{key}_date_time", "")
        for turn in conv[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            meta = {
                "dia_id": turn["dia_id"],
                "session_id": f"session-{number}",  # one thread per LoCoMo session
                "session": number,
                "session_date": date,
                "speaker": turn["speaker"],
            }
            out.append({"type": "session", "content": text, "metadata": meta})
    return out


def evidence_ids(qa: dict[str, Any]) -> set[str]:
    return {part for ev in qa.get("evidence", []) for part in re.split(r"[;,\s]+", str(ev)) if part}


def run_conversation(
    path: Path,
    ranking: RankingSettings,
    mode: str,
    memory: MemorySettings,
    keep: Path | None = None,
    model: Path = MODEL,
) -> list[dict[str, Any]]:
    """Ingest one conversation into a fresh data directory and ask its questions.

    With ``keep``, the data directory is kept under it (one per conversation and thread-context
    setting, since context changes what is embedded) and reused by later runs: ranking changes
    can then be measured without embedding the turns again."""
    data = json.loads(path.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        root = (
            Path(tmp)
            if keep is None
            else keep / f"{path.stem}-ctx{memory.context_turns}x{memory.context_chars}-{model.name}"
        )
        ids_file = root / "ids.json"
        settings = Settings(
            data_dir=root / "data",
            project_root=root,
            project="locomo",
            embedding={"model_path": model},
            ranking=ranking,
            memory=memory,
        )
        if not ids_file.exists() and (root / "data").exists():
            shutil.rmtree(root / "data")  # an ingest that did not finish
        services = open_services(settings, housekeeping=False)
        try:
            items = turns(data.get("conversation", data))
            by_id: dict[str, str] = {}
            started = time.perf_counter()
            reused = ids_file.exists()
            if reused:
                by_id = json.loads(ids_file.read_text())
            else:
                for i in range(0, len(items), BATCH):
                    batch = items[i : i + BATCH]
                    out = services.memory.bulk_add(MemoryBulkAddRequest(memories=batch))
                    assert not out.errors, out.errors
                    by_id.update(zip(out.memory_ids, (b["metadata"]["dia_id"] for b in batch), strict=True))
                if keep is not None:
                    ids_file.write_text(json.dumps(by_id))
            ingest_s = time.perf_counter() - started
            rows = []
            for qa in data["qa"]:
                if qa.get("category") not in CATEGORIES:
                    continue
                wanted = evidence_ids(qa)
                t0 = time.perf_counter()
                found = services.search.search(
                    MemorySearchInput(query=str(qa["question"]), limit=10, mode=mode)
                )
                ms = (time.perf_counter() - t0) * 1000
                dia = [by_id.get(r.memory_id) for r in found.results]
                rank = next((i for i, d in enumerate(dia, start=1) if d in wanted), None)
                rows.append({"conv": path.stem, "category": qa["category"], "rank": rank, "ms": ms})
            print(
                f"  {path.stem}: {len(items)} turns {'reused' if reused else 'ingested'}"
                f" in {ingest_s:.1f}s, {len(rows)} questions",
                flush=True,
            )
            return rows
        finally:
            services.close()


def metrics(rows: list[dict[str, Any]]) -> dict[str, float]:
    n = len(rows)
    out = {f"R@{k}": sum(1 for r in rows if r["rank"] and r["rank"] <= k) / n for k in KS}
    out["MRR"] = sum(1 / r["rank"] for r in rows if r["rank"]) / n
    out["n"] = n
    return out


def report(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    print(f"  {'':12} {'n':>5} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[CATEGORIES[r["category"]]].append(r)
    for name, group in [("overall", rows), *sorted(groups.items())]:
        m = metrics(group)
        print(f"  {name:12} {m['n']:5d} {m['R@1']:6.3f} {m['R@5']:6.3f} {m['R@10']:6.3f} {m['MRR']:6.3f}")
    lat = sorted(r["ms"] for r in rows)
    p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
    print(f"  search latency: p50 {statistics.median(lat):.1f} ms, p95 {p95:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--mode", choices=["auto", "fast", "deep"], default="auto")
    parser.add_argument("--profile", choices=["default", "seed004", "relevance"], default="default")
    parser.add_argument("--fusion", choices=["rrf", "dense", "sparse"], default="rrf")
    parser.add_argument("--rrf-k", type=int, default=None)
    parser.add_argument("--dense-weight", type=float, default=None)
    parser.add_argument("--sparse-weight", type=float, default=None)
    parser.add_argument("--min-candidates", type=int, default=None, help="candidates per source")
    parser.add_argument("--candidate-factor", type=int, default=None, help="candidates per result")
    parser.add_argument(
        "--rescore-factor", type=float, default=None, help="memories re-scored, per candidate per source"
    )
    parser.add_argument("--prf-docs", type=int, default=None, help="feedback-round seeds (0 = no hops)")
    parser.add_argument("--hops", type=int, default=None, help="feedback rounds in auto mode")
    parser.add_argument("--context-turns", type=int, default=None, help="thread context (0 = off)")
    parser.add_argument("--thread-weight", type=float, default=None, help="weight of the thread component")
    parser.add_argument(
        "--weight",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override one weight of the profile (RankingWeights field, e.g. time=0); repeatable",
    )
    parser.add_argument(
        "--keep-data",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep each conversation's data directory under DIR and reuse it (no re-embedding)",
    )
    parser.add_argument(
        "--model-path",
        type=Path,
        default=Path(os.environ.get("MEMORY_TEST_MODEL_PATH", MODEL)),
        help="folder of the ONNX export (default: the fp32 one in ../shared/models)",
    )
    args = parser.parse_args()
    overrides: dict[str, Any] = {"profile": args.profile, "fusion": args.fusion}
    names = ("rrf_k", "dense_weight", "sparse_weight", "prf_docs", "min_candidates", "candidate_factor")
    for name in (*names, "rescore_factor"):
        if getattr(args, name) is not None:
            overrides[name] = getattr(args, name)
    if args.hops is not None:
        overrides["auto_hops"] = args.hops
    weights: dict[str, float] = {}
    if args.thread_weight is not None:
        weights["thread"] = args.thread_weight
    for item in args.weight:
        name, _, value = item.partition("=")
        if name not in RankingWeights.model_fields:
            parser.error(
                f"--weight {item}: no weight '{name}' (one of {', '.join(RankingWeights.model_fields)})"
            )
        weights[name] = float(value)
    if weights:
        overrides["weights"] = RANKING_PROFILES[args.profile].model_copy(update=weights)
    ranking = RankingSettings(**overrides)
    # Every turn is its own memory, even when its words repeat an earlier one ("John: Take care,
    # bye!" twice in 47): store-level dedupe would drop the second turn and its dia_id.
    memory_overrides: dict[str, Any] = {"dedupe": False}
    if args.context_turns is not None:
        memory_overrides["context_turns"] = args.context_turns
    memory = MemorySettings(**memory_overrides)
    print(
        f"LoCoMo recall, split={args.split}, mode={args.mode}, ranking={ranking.model_dump()}, "
        f"context_turns={memory.context_turns}, model={args.model_path}"
    )
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    everything = []
    model = args.model_path.resolve()
    for split in splits:
        rows = [
            r
            for p in conversation_files(split)
            for r in run_conversation(p, ranking, args.mode, memory, args.keep_data, model)
        ]
        names = ",".join(p.stem for p in conversation_files(split))
        report(f"{split} split ({names})", rows)
        everything += rows
    if len(splits) > 1:
        report("all ten conversations", everything)


if __name__ == "__main__":
    main()
