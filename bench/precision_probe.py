"""Probe: int8 matrix products with one activation scale per token, against fp32 (issue 16, item 5).

Not a precision the server offers yet. ONNX Runtime's dynamic quantiser (the ``int8`` precision)
scales all of a run's activations with one number, which costs code_search its target and makes a
text's vector depend on its neighbours in a run (so the server embeds one text per run). This
probe rewrites each MatMul with a constant weight into: the row-wise absolute maximum of its input
(one scale per token), the input rounded to uint8 around 128, ``MatMulInteger`` with the weight
in int8 (one scale per output channel), and the int32 result scaled back. The feed-forward
down-projections (weights taller than wide, fed by GELU) stay fp32 by default, as in the int8
precision. It prints the texts per second of the fp32 model and of the rewritten one (two
single-thread runs of 8 texts at once, as the server embeds), each text's cosine against fp32,
and whether a text's vector depends on its batch:

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
from tests.conftest import model_path


def rewrite(source: Path, target: Path, *, all_layers: bool) -> int:
    """Write the row-scaled int8 model of ``source`` to ``target``; how many MatMuls it rewrote."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    weights = {t.name: t for t in graph.initializer}
    nodes: list[Any] = []
    added: list[Any] = []
    done = 0
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None or len(weight.dims) != 2 or (not all_layers and weight.dims[0] > weight.dims[1]):
            nodes.append(node)
            continue
        w = numpy_helper.to_array(weight).astype(np.float32)
        w_scale = np.abs(w).max(axis=0) / 127.0
        w_scale[w_scale == 0] = 1.0
        p, x, y = f"rowq{done}", node.input[0], node.output[0]
        added += [
            numpy_helper.from_array(np.clip(np.round(w / w_scale), -127, 127).astype(np.int8), p + "_wq"),
            numpy_helper.from_array(w_scale.astype(np.float32), p + "_ws"),
            numpy_helper.from_array(np.array(127.0, dtype=np.float32), p + "_127"),
            numpy_helper.from_array(np.array(1e-8, dtype=np.float32), p + "_eps"),
            numpy_helper.from_array(np.array(128.0, dtype=np.float32), p + "_128f"),
            numpy_helper.from_array(np.array(128, dtype=np.uint8), p + "_zp"),
            numpy_helper.from_array(np.array(0, dtype=np.int8), p + "_wzp"),
        ]
        nodes += [
            helper.make_node("Abs", [x], [p + "_abs"]),
            helper.make_node("ReduceMax", [p + "_abs"], [p + "_max"], axes=[-1], keepdims=1),
            helper.make_node("Max", [p + "_max", p + "_eps"], [p + "_max1"]),
            helper.make_node("Div", [p + "_max1", p + "_127"], [p + "_xs"]),  # one scale per token
            helper.make_node("Div", [x, p + "_xs"], [p + "_xd"]),
            helper.make_node("Round", [p + "_xd"], [p + "_xr"]),
            helper.make_node("Add", [p + "_xr", p + "_128f"], [p + "_xa"]),
            helper.make_node("Cast", [p + "_xa"], [p + "_xq"], to=TensorProto.UINT8),
            helper.make_node("MatMulInteger", [p + "_xq", p + "_wq", p + "_zp", p + "_wzp"], [p + "_yi"]),
            helper.make_node("Cast", [p + "_yi"], [p + "_yf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_yf", p + "_xs"], [p + "_y1"]),
            helper.make_node("Mul", [p + "_y1", p + "_ws"], [y]),
        ]
        done += 1
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for n in graph.node for name in n.input}
    kept = [t for t in [*graph.initializer, *added] if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
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
