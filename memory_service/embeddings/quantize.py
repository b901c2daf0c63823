"""int8 weights made on this machine from the fp32 ONNX export, once, with ONNX Runtime's tools.

Three scopes (``embedding.precision``): ``int8-rows`` (the default) quantises the layers with one
activation scale per token, written here by hand (:func:`row_scaled`), since ONNX Runtime's
dynamic quantiser has one scale per run: ~1.5x faster than fp32, each text's vector independent
of its neighbours in a run, within cosine 0.997 of fp32's. ``mixed`` quantises only the
token-embedding tables, the model's largest tensor (30,522 x 384 in MiniLM, 47 MB of its 90), and
keeps every layer fp32. A table lookup is exact in int8 up to the table's rounding, and no
activation is quantised, so vectors stay within cosine 0.999 of fp32's, at fp32's speed, with the
process ~35 MB smaller. ``int8`` quantises the layers with one scale per run: below.

Why ``int8`` is not the default: on 2 cores the int8 model embeds ~1.6x
faster than fp32 (491 against 295 short texts/s, a query in 4.1 ms instead of 6.7), the process is
~80 MB smaller, and its vectors agree with fp32's (cosine >= 0.99 on sentences and code; LoCoMo
R@5 the same within noise), but code_search's top 3 holds the right unit for 84-88 % of the
benchmark questions instead of 89 % (docs/benchmarks.md). fastembed only lists the fp32 export, so
the int8 one is derived here from whatever fp32 folder the model came from (``model_path`` or
fastembed's cache): no download.

How: dynamic quantisation, per output channel, int8 weights; the feed-forward down-projections
(weights taller than wide, 1536 x 384 in MiniLM) stay fp32, as in the int8 export of
``../shared/models``, whose vectors this reproduces to the last bit (per-tensor quantisation, the
tool's default, gave cosine 0.93 against fp32 there).

The copy lives under ``<fastembed cache>/int8-rows/<name>-<key>/`` (``int8-table/`` for ``mixed``,
``int8/`` for ``int8``), keyed by the source file's path, size and mtime; it is written to a
temporary folder and renamed, so racing processes never load a half-written model. A source that
is already quantised is used as it is (noted by a marker file).
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import re
import shutil
import tempfile
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

MODEL_FILE = "model.onnx"
# Each precision's copy: its folder under fastembed's cache, and what it quantises (for the log).
COPIES = {
    "int8": ("int8", "layers"),
    "mixed": ("int8-table", "token tables"),
    "int8-rows": ("int8-rows", "layers, a scale per token"),
}
# In the name of the operator every quantised graph holds: QuantizeLinear (static quantisation,
# QLinear* operators) or DynamicQuantizeLinear (dynamic, before MatMulInteger).
_QUANTISED_MARK = b"QuantizeLinear"
_AS_IS = "ALREADY_QUANTISED"  # marker: the source is int8 already, load it from where it is


def _key(model_file: Path) -> str:
    stat = model_file.stat()
    ident = f"{model_file.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def int8_folder(
    source: Path,
    model_name: str,
    cache_root: Path,
    model_file: str = MODEL_FILE,
    *,
    precision: str = "int8",
) -> Path:
    """The folder of the int8 model derived from ``source`` (a folder with an fp32 model, at
    ``model_file`` inside it, and its tokenizer files), quantising it first if this source was
    never quantised here; the copy keeps the same layout. ``source`` itself when its model is
    already quantised. ``precision`` says what is quantised (:data:`COPIES`): ``int8`` the
    layers, ``mixed`` only the token-embedding tables, ``int8-rows`` the layers with one
    activation scale per token (:func:`row_scaled`).

    Raises:
        ImportError: the ``onnx`` package is missing. OSError, ValueError: the model cannot be read
        or written. The caller falls back to the fp32 model.
    """
    source_file = source / model_file
    target = cache_root / f"{_slug(model_name)}-{_key(source_file)}"
    if (target / _AS_IS).is_file():
        return source
    if (target / model_file).is_file():
        return target
    cache_root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".int8-", dir=cache_root))
    try:
        if is_quantised(source_file):
            (work / _AS_IS).write_text(str(source))
            _publish(work, target)
            return source
        import onnx

        started = time.monotonic()
        model = onnx.load(str(source_file))
        (work / model_file).parent.mkdir(parents=True, exist_ok=True)
        if precision == "mixed":
            _quantise(model, work / model_file, [], ops=["Gather"])
        elif precision == "int8-rows":
            row_scaled(model, keep=set(_down_projections(model.graph)))
            onnx.save(model, str(work / model_file))
        else:
            _quantise(model, work / model_file, _down_projections(model.graph))
        for item in source.iterdir():  # the tokenizer and config files
            if item.is_file() and item != source_file:
                shutil.copy2(item, work / item.name)
        _publish(work, target)
        logger.info(
            "embedding model %s quantised to int8 (%s) in %.1f s: %s",
            model_name,
            COPIES[precision][1],
            time.monotonic() - started,
            target,
        )
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def is_quantised(model_file: Path) -> bool:
    """Whether the ONNX file holds a graph that quantises activations (dynamically or statically):
    an operator only such a graph has (operator names are stored as plain strings; one pass over a
    90 MB file takes about 50 ms). Tables quantised alone (``mixed``) only dequantise their
    weights, which is no such operator: its name is spelt with a small q."""
    with model_file.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return data.find(_QUANTISED_MARK) >= 0


def row_scaled(model: Any, keep: Collection[str] = ()) -> int:
    """Rewrite, in ``model``, each MatMul with a constant 2-D weight (but the nodes named in
    ``keep``) into int8 arithmetic with one activation scale per token; how many it rewrote.

    ONNX Runtime's dynamic quantiser scales a whole run's activations with one number: a text's
    vector then depends on the other texts of its run, and code_search lost its target. Here each
    row of the input (a token) gets its own scale (its largest absolute value / 127) and is
    rounded to uint8 around 128; the weight is int8 with one scale per output channel;
    ``MatMulInteger`` multiplies them (exact int32 sums) and the result is scaled back. A token's
    output depends on nothing but that token, so runs of several texts stay.
    """
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    weights = {t.name: t for t in graph.initializer}
    nodes: list[Any] = []
    added: list[Any] = []
    done = 0
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None or len(weight.dims) != 2 or node.name in keep:
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
    return done


def _down_projections(graph: Any) -> list[str]:
    """The MatMul nodes whose constant weight is taller than wide: the feed-forward layers'
    down-projections, which stay fp32."""
    shapes = {t.name: tuple(t.dims) for t in graph.initializer}
    keep = []
    for node in graph.node:
        if node.op_type != "MatMul":
            continue
        dims = [shapes[i] for i in node.input if i in shapes and len(shapes[i]) == 2]
        if dims and dims[0][0] > dims[0][1]:
            keep.append(node.name)
    return keep


def _quantise(model: Any, target: Path, exclude: list[str], ops: list[str] | None = None) -> None:
    """Quantise the loaded ``model`` into ``target`` (only the operators ``ops`` when given: per
    tensor, the tool's only way for a table). Given a path, the tool would write its
    shape-inferred copy beside the source (a read-only folder, or one another process is
    quantising from); given the model, it works in a temporary folder of its own."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    root.addFilter(_no_preprocessing_hint)
    try:
        quantize_dynamic(
            model,
            target,
            per_channel=ops is None,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=exclude,
            op_types_to_quantize=ops,
        )
    finally:
        root.removeFilter(_no_preprocessing_hint)


def _no_preprocessing_hint(record: logging.LogRecord) -> bool:
    """Drop what ONNX Runtime's quantiser logs on the root logger below ERROR: a line per skipped
    tensor, and a hint about pre-processing that is for static quantisation of vision models."""
    return record.levelno >= logging.ERROR or "onnxruntime" not in record.pathname


def _publish(work: Path, target: Path) -> None:
    """Rename the finished folder into place; another process that got there first wins."""
    try:
        os.rename(work, target)
    except OSError:
        if not target.is_dir():
            raise
