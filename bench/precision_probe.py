"""Probe: int8 matrix products with one activation scale per token, against fp32 (issue 16, item 5).

The server offers it as ``MEMORY_EMBEDDING__PRECISION=int8-rows`` (embeddings/quantize.py,
``row_scaled``); this probe measures the model alone, without the server. ONNX Runtime's dynamic
quantiser (the ``int8`` precision) scales all of a run's activations with one number, which costs
code_search its target and makes a text's vector depend on its neighbours in a run (so the
server embeds one text per run). Here each MatMul with a constant weight becomes: the row-wise
absolute maximum of its input (one scale per token), the input rounded to uint8 around 128,
``MatMulInteger`` with the weight in int8 (one scale per output channel), and the int32 result
scaled back. The feed-forward down-projections (weights taller than wide, fed by GELU) stay fp32
by default, as in the int8 precision. It prints the texts per second of the fp32 model and of the
rewritten one (two single-thread runs of 8 texts at once, as the server embeds), each text's
cosine against fp32, and whether a text's vector depends on its run:

    .venv/bin/python bench/precision_probe.py [--all-layers] [--save DIR]

``--save DIR`` writes the rewritten model with the tokenizer files, a folder the other benches
take with ``--model-path DIR`` and ``MEMORY_EMBEDDING__PRECISION=fp32``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import memories
from memory_service.core.models import derive_title, embedding_text
from memory_service.embeddings.quantize import _down_projections, row_scaled
from tests.conftest import model_path


def rewrite(source: Path, target: Path, *, all_layers: bool) -> int:
    """Write the row-scaled int8 model of ``source`` to ``target``; how many MatMuls it rewrote."""
    import onnx

    model = onnx.load(str(source))
    keep = set() if all_layers else set(_down_projections(model.graph))
    done = row_scaled(model, keep)
    onnx.save(model, str(target))
    return done


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model-path", type=Path, default=None, help="the fp32 ONNX folder")
    parser.add_argument("--n", type=int, default=2000, help="corpus memories embedded (title + content)")
    parser.add_argument("--all-layers", action="store_true", help="rewrite the down-projections too")
    parser.add_argument("--save", type=Path, help="keep the rewritten model, with its tokenizer, here")
    args = parser.parse_args()
    import onnxruntime as ort
    from tokenizers import Tokenizer

    source = args.model_path or model_path()
    target = args.save or Path(f"/tmp/precision-probe-{time.time_ns()}")
    target.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.is_file() and item.name != "model.onnx":
            shutil.copy2(item, target / item.name)
    rewritten = rewrite(source / "model.onnx", target / "model.onnx", all_layers=args.all_layers)
    print(f"rewrote {rewritten} MatMuls ({'all' if args.all_layers else 'down-projections kept fp32'})")

    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    sample = list(memories(args.n))
    texts = sorted(
        (embedding_text(derive_title(m["content"], m["metadata"]), m["content"]) for m in sample), key=len
    )
    batches = [texts[i : i + 8] for i in range(0, len(texts), 8)]

    def session(path: Path) -> Any:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def embed(sess: Any, batch: list[str]) -> np.ndarray:
        encoded = tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        out = sess.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (out * weights).sum(1) / weights.sum(1)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    vectors = {}
    with ThreadPoolExecutor(2) as pool:
        for name, path in (
            ("fp32", source / "model.onnx"),
            ("int8, a scale per token", target / "model.onnx"),
        ):
            sess = session(path)
            embed(sess, batches[0])
            started = time.perf_counter()
            vectors[name] = np.concatenate(list(pool.map(lambda b, s=sess: embed(s, b), batches)))
            rate = len(texts) / (time.perf_counter() - started)
            alone = np.concatenate([embed(sess, [t]) for t in texts[:40]])
            own = float((alone * vectors[name][:40]).sum(1).min())
            print(f"{name:24s} {rate:6.0f} texts/s   a text alone vs in its run of 8: min cosine {own:.6f}")
    cosine = (vectors["fp32"] * vectors["int8, a scale per token"]).sum(1)
    print(f"cosine against fp32: min {cosine.min():.4f}, mean {cosine.mean():.5f} over {len(texts)} texts")
    if args.save is None:
        shutil.rmtree(target, ignore_errors=True)


if __name__ == "__main__":
    main()
