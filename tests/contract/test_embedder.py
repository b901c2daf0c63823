"""Contract tests for the dense embedder (real fastembed on the local ONNX export) and BM25 encoder.

The model folder comes from ``MEMORY_TEST_MODEL_PATH`` (default: ``../shared/models/...`` beside
the repository). Without it the model's tests are skipped with the reason printed, and fail in CI.
"""

from __future__ import annotations

import base64
import logging
import math
import os
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from qdrant_edge import Bm25, Bm25Config, TokenizerType

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import Embedder, SparseEncoder, SparseVector
from memory_service.embeddings.bm25 import Bm25Encoder
from memory_service.embeddings.embedding_cache import text_key
from memory_service.embeddings.fake import FakeEmbedder, UnavailableEmbedder
from memory_service.embeddings.fastembed_embedder import MODEL_INPUT_CHARS, FastEmbedder
from memory_service.embeddings.model_source import fastembed_cache_dir
from memory_service.settings import EmbeddingSettings
from memory_service.stores.local.cache import LocalCache
from memory_service.stores.local.db import LocalDB
from tests.conftest import missing

pytestmark = pytest.mark.contract

REPO = Path(__file__).resolve().parents[2]
MODEL = Path(os.environ.get("MEMORY_TEST_MODEL_PATH") or REPO.parent / "shared/models/all-MiniLM-L6-v2-onnx")
MODEL_INT8 = MODEL.with_name(MODEL.name + "-int8")
needs_model = pytest.mark.usefixtures("model_dir")  # skipped locally, failed in CI, when absent


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def raw_embed(embedder: FastEmbedder, text: str) -> list[float]:
    """One text straight through the loaded model, bypassing the cache: the reference vector."""
    model = embedder._require_model()
    return [float(x) for x in next(iter(model.embed([text])))]


def sparse_dot(query: SparseVector, doc: SparseVector) -> float:
    weights = dict(zip(doc.indices, doc.values, strict=True))
    return sum(v * weights.get(i, 0.0) for i, v in zip(query.indices, query.values, strict=True))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCache]:
    store = LocalCache(LocalDB.in_dir(tmp_path_factory.mktemp("cache")))
    yield store
    store.close()


@pytest.fixture(scope="module")
def embedder(cache: LocalCache) -> FastEmbedder:
    if not (MODEL / "model.onnx").is_file():
        missing(f"no ONNX model in {MODEL}: set MEMORY_TEST_MODEL_PATH")
    emb = FastEmbedder(EmbeddingSettings(model_path=MODEL), cache)
    assert not emb.ready and emb.health().state == "degraded"  # nothing loads before start()
    emb.start()
    assert emb.wait_ready(60), emb.failure_reason
    return emb


# --------------------------------------------------------------------------- dense


def test_model_loads_and_reports_health(embedder: FastEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    health = embedder.health()
    assert (health.state, health.backend) == ("ok", "fastembed")
    assert health.extra["load_seconds"] > 0
    assert embedder.dim == 384


def test_vectors_are_384_dim_and_normalised(embedder: FastEmbedder) -> None:
    vectors = embedder.embed_documents(["a short sentence", "def parse_request(raw: bytes) -> Request:"])
    for vec in [*vectors, embedder.embed_query("a query")]:
        assert len(vec) == 384
        assert math.isclose(math.sqrt(sum(x * x for x in vec)), 1.0, abs_tol=1e-5)


def test_similar_sentences_are_closer_than_unrelated(embedder: FastEmbedder) -> None:
    a, b, c = embedder.embed_documents(
        [
            "The user session expires after thirty minutes of inactivity.",
            "Sessions time out when the user is idle for half an hour.",
            "Bananas are rich in potassium.",
        ]
    )
    assert cosine(a, b) > cosine(a, c) + 0.3


def test_repeat_is_a_cache_hit(embedder: FastEmbedder, cache: LocalCache) -> None:
    text = "cache me: the outbox drains into the graph"
    first = embedder.embed_documents([text])[0]
    before = cache.stats()["hits"]
    assert embedder.embed_documents([text])[0] == first
    assert cache.stats()["hits"] == before + 1
    assert cache.get(embedder.namespace, text_key(text)) is not None


def test_documents_not_remembered_skip_the_shared_cache(embedder: FastEmbedder, cache: LocalCache) -> None:
    """``remember=False`` (a memory's own texts): neither looked up nor kept, same vectors."""
    kept, passing = "kept: the drain applies the outbox", "passing: the writer skips the cache"
    reference = embedder.embed_documents([kept])[0]
    before = cache.stats()
    out = embedder.embed_documents([passing, kept], remember=False)
    assert cache.get(embedder.namespace, text_key(passing)) is None
    assert cache.stats()["hits"] == before["hits"]  # the cached one was embedded again
    assert np.allclose(out[1], reference, atol=1e-6)
    assert np.allclose(out[0], raw_embed(embedder, passing), atol=1e-5)


def test_queries_are_remembered_in_process_not_in_the_shared_cache(
    embedder: FastEmbedder, cache: LocalCache
) -> None:
    """The search path never writes the shared cache (a commit, fsync'd, maybe behind an ingest)."""
    text = "which queue feeds the graph?"
    before = cache.stats()
    first = embedder.embed_query(text)
    assert embedder.embed_query(text) == first
    assert cache.get(embedder.namespace, text_key(text)) is None
    assert cache.stats()["hits"] == before["hits"]
    assert embedder.health().extra["cache_hits"] >= 1
    assert np.allclose(first, embedder.embed_documents([text])[0], atol=1e-6)


def test_order_preserved_with_mixed_hits_misses_and_duplicates(embedder: FastEmbedder) -> None:
    texts = ["alpha requirement", "beta design", "gamma test", "delta component"]
    cached = embedder.embed_documents(texts[:2])
    mixed = ["gamma test", "alpha requirement", "delta component", "beta design", "gamma test"]
    out = embedder.embed_documents(mixed)
    assert out[1] == cached[0] and out[3] == cached[1]  # hits come back exactly
    assert out[0] == out[4]
    singles = {t: np.array(raw_embed(embedder, t)) for t in mixed}
    for text, vec in zip(mixed, out, strict=True):
        assert np.allclose(vec, singles[text], atol=1e-5), text


def test_long_texts_embed_as_the_model_sees_them_whole(embedder: FastEmbedder) -> None:
    """Texts longer than MODEL_INPUT_CHARS are cut before tokenizing: the model's first 256 tokens
    are the same, so the vector equals the one from the whole text (prose, code, base64)."""
    prose = " ".join(
        f"The {i}th deployment rolled back after the cache warmed too slowly." for i in range(900)
    )
    code = "def handler(event, context):\n    return {'status': 200, 'body': event['body']}\n" * 400
    blob = base64.b64encode(random.Random(3).randbytes(80_000)).decode()
    for text in (prose, code, blob):
        assert len(text) > MODEL_INPUT_CHARS
        reference = raw_embed(embedder, text)
        (vector,) = embedder.embed_documents([text])
        assert np.allclose(vector, reference / np.linalg.norm(reference), atol=1e-5)


def test_concurrent_callers_get_the_same_vectors(embedder: FastEmbedder) -> None:
    batches = [[f"thread {n} text {i} about parsing requests" for i in range(16)] for n in range(4)]
    reference = [[raw_embed(embedder, t) for t in batch] for batch in batches]
    results: dict[int, list[list[float]]] = {}
    start = threading.Barrier(4)

    def worker(n: int) -> None:
        start.wait()
        results[n] = embedder.embed_documents(batches[n])

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in range(4):
        assert np.allclose(results[n], reference[n], atol=1e-5)


def _needs_int8() -> None:
    if not (MODEL_INT8 / "model.onnx").is_file():
        missing(f"no int8 model in {MODEL_INT8}")


@needs_model
def test_int8_precision_quantises_the_fp32_export_once_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Precision int8: the fp32 folder is quantised once, beside fastembed's cache, and gives
    the int8 export's vectors exactly; a second load reuses the copy."""
    _needs_int8()
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fe"))
    caplog.set_level(logging.INFO)
    first = FastEmbedder(EmbeddingSettings(model_path=MODEL, precision="int8"), None)
    assert first.wait_ready(60), first.failure_reason
    folder = first.model_folder
    assert folder is not None and folder.parent == tmp_path / "fe" / "int8"
    assert (folder / "model.onnx").stat().st_size < (MODEL / "model.onnx").stat().st_size / 2
    assert {"tokenizer.json", "config.json", "special_tokens_map.json"} <= {p.name for p in folder.iterdir()}
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary folder left
    shipped = FastEmbedder(EmbeddingSettings(model_path=MODEL_INT8), None)  # default precision
    assert shipped.wait_ready(60), shipped.failure_reason
    assert shipped.model_folder == MODEL_INT8  # already int8: loaded where it is, not copied
    texts = ["Validate the request body before writing the record", "def parse(argv): return argv[1:]"]
    assert np.array_equal(first.embed_documents(texts), shipped.embed_documents(texts))
    quantised = [r for r in caplog.records if "quantised to int8" in r.getMessage()]
    assert len(quantised) == 1
    again = FastEmbedder(EmbeddingSettings(model_path=MODEL, precision="int8"), None)
    assert again.wait_ready(60) and again.model_folder == folder
    assert len([r for r in caplog.records if "quantised to int8" in r.getMessage()]) == 1
    assert not [r for r in caplog.records if r.name == "root"]  # the quantiser's chatter is dropped


@needs_model
def test_release_memory_shrinks_the_arena_and_changes_no_vector(embedder: FastEmbedder) -> None:
    """Housekeeping's call once writes went quiet: a tiny run that shrinks ONNX Runtime's arena;
    the session keeps embedding exactly as before, and an embedder not loaded does nothing."""
    long = ["Validate the request body before writing the record. " * 30 + str(i) for i in range(16)]
    before = embedder.embed_documents(long[:2])
    embedder._embed(long, keys=[text_key(t) for t in long], shared=False)  # grow the arena
    embedder.release_memory()
    after = embedder._embed(long[:2], keys=[text_key(t) for t in long[:2]], shared=False)
    assert np.allclose(before, after, atol=1e-6)
    idle = FastEmbedder(EmbeddingSettings(model_path=MODEL), None)
    idle.release_memory()  # never started: nothing to shrink, no load begun
    assert idle.health().state == "degraded" and not idle.ready


@needs_model
def test_mixed_precision_quantises_only_the_token_tables(embedder: FastEmbedder) -> None:
    """precision mixed: an int8 copy of the token-embedding tables, every layer fp32. Vectors
    within cosine 0.999 of the fp32 export's, and a text's vector is its own in a run of several."""
    mixed = FastEmbedder(EmbeddingSettings(model_path=MODEL, precision="mixed"), None)
    assert mixed.wait_ready(60), mixed.failure_reason
    folder = mixed.model_folder
    assert folder is not None and folder.parent == fastembed_cache_dir() / "int8-table"
    assert not mixed.one_text_per_run
    size, fp32_size = (folder / "model.onnx").stat().st_size, (MODEL / "model.onnx").stat().st_size
    assert fp32_size * 0.55 < size < fp32_size * 0.65  # the 47 MB word table at a quarter
    fp32 = FastEmbedder(EmbeddingSettings(model_path=MODEL, precision="fp32"), None)
    int8 = FastEmbedder(EmbeddingSettings(model_path=MODEL, precision="int8"), None)
    assert fp32.wait_ready(60) and int8.wait_ready(60), (fp32.failure_reason, int8.failure_reason)
    assert fp32.model_folder == MODEL and not fp32.one_text_per_run  # the export as it is
    assert int8.one_text_per_run and int8.model_folder not in (MODEL, folder)
    spaces = {embedder.namespace, mixed.namespace, fp32.namespace, int8.namespace}
    assert len(spaces) == 4  # never mixed in the cache
    texts = [
        "Validate the request body before writing the record",
        "def parse(argv):\n    return [a for a in argv[1:] if not a.startswith('-')]",
        "We chose PostgreSQL over MongoDB because the billing data is relational.",
        "ok",
    ]
    ours, exact = mixed.embed_documents(texts), fp32.embed_documents(texts)
    for a, b in zip(ours, exact, strict=True):
        assert 0.999 < cosine(a, b) < 1 - 1e-7  # near, but not the same weights
    model = mixed._require_model()
    together = [[float(x) for x in v] for v in model.embed(texts, batch_size=len(texts))]
    for text, vector in zip(texts, together, strict=True):
        assert cosine(vector, raw_embed(mixed, text)) > 1 - 1e-6  # no neighbour changes it


@needs_model
def test_int8_rows_by_default_scales_each_token_alone_so_runs_of_several_texts_stay(
    embedder: FastEmbedder,
) -> None:
    """The default, int8-rows: the layers in int8 with one activation scale per token. Its own
    copy, texts embedded several per run, each text's vector independent of its neighbours, and
    within cosine 0.995 of the fp32 export's (the int8 precision's per-run scale gave 0.991)."""
    assert EmbeddingSettings().precision == "int8-rows"
    rows = embedder
    fp32 = FastEmbedder(EmbeddingSettings(model_path=MODEL, precision="fp32"), None)
    assert fp32.wait_ready(60), fp32.failure_reason
    assert rows.model_folder is not None and rows.model_folder.parent == fastembed_cache_dir() / "int8-rows"
    assert not rows.one_text_per_run
    assert rows.namespace != fp32.namespace  # never mixed in the cache
    texts = [
        "Validate the request body before writing the record",
        "def parse(argv):\n    return [a for a in argv[1:] if not a.startswith('-')]",
        "We chose PostgreSQL over MongoDB because the billing data is relational. " * 4,
        "PR-123",
    ]
    ours, exact = rows.embed_documents(texts), fp32.embed_documents(texts)
    for a, b in zip(ours, exact, strict=True):
        assert 0.995 < cosine(a, b) < 1 - 1e-6  # near, but int8 arithmetic
    assert cosine(rows.embed_query("ok"), fp32.embed_query("ok")) > 0.98  # one word: 0.985 (int8: 0.987)
    model = rows._require_model()
    together = [[float(x) for x in v] for v in model.embed(texts, batch_size=len(texts))]
    for text, vector in zip(texts, together, strict=True):
        assert cosine(vector, raw_embed(rows, text)) > 1 - 1e-6  # no neighbour changes it


@needs_model
def test_int8_copy_that_cannot_be_made_falls_back_to_fp32_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path))
    (tmp_path / "int8").write_text("")  # a file where the int8 copies' folder would be
    fallback = FastEmbedder(EmbeddingSettings(model_path=MODEL, precision="int8"), None)
    assert fallback.wait_ready(60), fallback.failure_reason
    assert fallback.model_folder == MODEL
    (warning,) = _warnings(caplog)
    assert "no int8 copy" in warning and str(MODEL) in warning and "fp32" in warning
    assert len(fallback.embed_query("still works")) == 384


def _quantise_in_child(cache_root: str) -> str:
    from memory_service.embeddings.quantize import int8_folder

    return str(int8_folder(MODEL, "sentence-transformers/all-MiniLM-L6-v2", Path(cache_root)))


@needs_model
def test_processes_racing_to_quantise_share_one_complete_copy(tmp_path: Path) -> None:
    """Three processes start on an empty cache at once: all get the same folder, complete, and
    nothing half-written is left behind."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(3) as pool:
        folders = pool.map(_quantise_in_child, [str(tmp_path)] * 3)
    assert len(set(folders)) == 1
    (folder,) = {Path(f) for f in folders}
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]
    model = FastEmbedder(EmbeddingSettings(model_path=folder), None)
    assert model.wait_ready(60), model.failure_reason
    assert model.model_folder == folder  # an int8 folder is used as it is


_THREADS_AFTER_EMBEDDING = """
import json, os, sys, threading
from pathlib import Path
from memory_service.embeddings.fastembed_embedder import FastEmbedder
from memory_service.settings import EmbeddingSettings
native = lambda: len(os.listdir("/proc/self/task")) - len(threading.enumerate())
before = native()
emb = FastEmbedder(EmbeddingSettings(model_path=Path(sys.argv[1])))
assert emb.wait_ready(60), emb.failure_reason
emb.embed_documents([f"text {i} about parsing requests, and then some" for i in range(64)], remember=False)
print(json.dumps([native() - before, os.environ.get("TOKENIZERS_PARALLELISM")]))
"""


@needs_model
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="not applicable: no /proc to count threads")
def test_the_tokenizer_starts_no_threads_of_its_own_unless_the_user_asks() -> None:
    """Runs are parallel already (one per embedding thread): the tokenizer's own pool would only
    add threads that spin beside them. A user's explicit TOKENIZERS_PARALLELISM is kept."""
    import json
    import subprocess
    import sys

    def run(**env: str) -> tuple[int, str | None]:
        clean = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
        done = subprocess.run(
            [sys.executable, "-c", _THREADS_AFTER_EMBEDDING, str(MODEL)],
            env={**clean, **env},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
        )
        assert done.returncode == 0, done.stderr
        started, setting = json.loads(done.stdout.splitlines()[-1])
        return started, setting

    ours, asked = run(), run(TOKENIZERS_PARALLELISM="true")
    assert ours[1] == "false" and asked[1] == "true"
    assert ours[0] < asked[0]  # the tokenizer's pool: one thread per core


# --------------------------------------------------------------------------- unavailable


def _assert_unavailable(emb: Embedder, reason_part: str) -> None:
    assert not emb.wait_ready(30)
    assert not emb.ready
    health = emb.health()
    assert health.state == "unavailable"
    assert reason_part in health.detail
    assert "MEMORY_EMBEDDING__MODEL_PATH" in health.extra["suggestion"]
    with pytest.raises(ServiceUnavailableError) as err:
        emb.embed_query("anything")
    assert err.value.code == "SVC_EMBEDDING_UNAVAILABLE"
    assert reason_part in err.value.details["reason"]
    assert "MEMORY_EMBEDDING__MODEL_PATH" in err.value.suggestion


def test_bad_model_path_is_unavailable_with_reason(tmp_path: Path) -> None:
    _assert_unavailable(
        FastEmbedder(EmbeddingSettings(model_path=tmp_path / "nope"), None), "not a directory"
    )


def test_incomplete_model_folder_is_unavailable_with_reason(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not really onnx")
    _assert_unavailable(FastEmbedder(EmbeddingSettings(model_path=tmp_path), None), "tokenizer.json")


@needs_model
def test_wrong_dim_setting_is_unavailable(tmp_path: Path) -> None:
    _assert_unavailable(FastEmbedder(EmbeddingSettings(model_path=MODEL, dim=768), None), "384-dim")


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_no_path_offline_and_not_cached_is_unavailable_with_one_warning(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """No model path, an empty fastembed cache and HF_HUB_OFFLINE=1: fail at once, say so once."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed-cache"))
    caplog.set_level(logging.DEBUG)
    _assert_unavailable(FastEmbedder(EmbeddingSettings(), None), "HF_HUB_OFFLINE=1 forbids downloading")
    (warning,) = _warnings(caplog)
    assert str(tmp_path / "fastembed-cache") in warning  # where it looked
    assert "MEMORY_EMBEDDING__MODEL_PATH" in warning and "--model-path" in warning
    assert "lexically" in warning
    assert "fastembed" not in capfd.readouterr().err  # fastembed's own loguru lines stay quiet


def _hub_cache_from_folder(
    cache: Path, folder: Path, repo_name: str = "Qdrant/all-MiniLM-L6-v2-onnx", model_file: str = "model.onnx"
) -> None:
    """A fastembed cache holding the model as a past download left it (hub layout, symlinked files)."""
    repo = cache / f"models--{repo_name.replace('/', '--')}"
    revision = "0" * 40
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    for name in (
        "model.onnx",
        "tokenizer.json",
        "config.json",
        "special_tokens_map.json",
        "tokenizer_config.json",
    ):
        (snapshot / (model_file if name == "model.onnx" else name)).symlink_to(folder / name)


@needs_model
@pytest.mark.parametrize("offline", ["1", None], ids=["offline", "online"])
def test_no_path_but_cached_model_loads_from_the_cache(
    offline: str | None,
    embedder: FastEmbedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A model fastembed fetched earlier is used as it is: no path needed, no network asked."""
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed-cache"))
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", offline)
    else:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    _hub_cache_from_folder(fastembed_cache_dir(), MODEL)
    cached = FastEmbedder(EmbeddingSettings(), None)
    assert cached.wait_ready(60), cached.failure_reason
    assert cached.health().extra["model_path"] is None
    text = "Validate the request body before writing the record"
    assert np.allclose(cached.embed_query(text), embedder.embed_query(text), atol=1e-5)
    assert not _warnings(caplog)


@needs_model
def test_no_path_int8_quantises_the_model_fastembed_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A user with a network: fastembed fetched the fp32 export by name; precision int8 makes
    its copy from that, with no second download."""
    _needs_int8()
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _hub_cache_from_folder(fastembed_cache_dir(), MODEL)
    cached = FastEmbedder(EmbeddingSettings(precision="int8"), None)
    assert cached.wait_ready(60), cached.failure_reason
    assert cached.model_folder is not None and cached.model_folder.parent == fastembed_cache_dir() / "int8"
    shipped = FastEmbedder(EmbeddingSettings(model_path=MODEL_INT8), None)
    assert shipped.wait_ready(60), shipped.failure_reason
    text = "Validate the request body before writing the record"
    assert np.array_equal(cached.embed_query(text), shipped.embed_query(text))
    assert not _warnings(caplog)


@needs_model
@pytest.mark.parametrize("precision", ["fp32", "mixed", "int8", "int8-rows"])
def test_a_cached_model_whose_weights_are_not_model_onnx_loads(
    precision: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fastembed's other models keep their weights elsewhere (bge-small: model_optimized.onnx);
    the loader and the int8 copy follow the model's own file name. (The cache holds MiniLM's
    weights under that model's name: only the layout is under test.)"""
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "fastembed-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo, weights = "Qdrant/bge-small-en-v1.5-onnx-Q", "model_optimized.onnx"
    _hub_cache_from_folder(fastembed_cache_dir(), MODEL, repo, weights)
    settings = EmbeddingSettings(model_name="BAAI/bge-small-en-v1.5", precision=precision)  # type: ignore[arg-type]
    other = FastEmbedder(settings, None)
    assert other.wait_ready(60), other.failure_reason
    assert other.model_folder is not None and (other.model_folder / weights).is_file()
    assert other.one_text_per_run is (precision == "int8")
    assert len(other.embed_query("still 384 numbers")) == 384


def test_unavailable_and_fake_embedders_keep_the_contract() -> None:
    _assert_unavailable(UnavailableEmbedder("no model configured"), "no model configured")
    fake = FakeEmbedder(dim=64)
    assert isinstance(fake, Embedder) and fake.ready
    a, b, c = fake.embed_documents(["parse http request", "parse the http request", "bananas"])
    assert math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-9)
    assert a == fake.embed_query("parse http request")
    assert cosine(a, b) > cosine(a, c)


# --------------------------------------------------------------------------- sparse


def test_bm25_vectors_are_non_empty_valid_and_overlap_on_shared_terms() -> None:
    enc = Bm25Encoder()
    assert isinstance(enc, SparseEncoder)
    docs = enc.encode_documents(
        ["Retry the graph sync when Neo4j is down", "Bananas are yellow", "the of and"]
    )
    query = enc.encode_query("graph sync retries")
    assert docs[0].indices and query.indices
    assert docs[2].indices == []  # only stopwords
    for vec in [*docs, query]:
        assert vec.indices == sorted(set(vec.indices))
        assert all(0 <= i < 2**32 for i in vec.indices)
        assert len(vec.indices) == len(vec.values)
    assert sparse_dot(query, docs[0]) > 0  # "retries" stems to "retry"
    assert sparse_dot(query, docs[1]) == 0


def test_identifier_splitting_lets_names_match_words() -> None:
    code = "def parseHttpRequest(raw): ..."
    query = "parse http request"
    enc = Bm25Encoder()  # the code tokenizer splits identifiers itself
    assert sparse_dot(enc.encode_query(query), enc.encode_documents([code])[0]) >= 3
    assert sparse_dot(enc.encode_query("parseHttpRequest"), enc.encode_documents([code])[0]) > 0
    word = Bm25Encoder(tokenizer="word")  # pre-splits with split_identifiers
    assert sparse_dot(word.encode_query(query), word.encode_documents([code])[0]) >= 3
    plain = Bm25(Bm25Config(tokenizer=TokenizerType.Word, language="english"))
    q, d = plain.embed_query(query), plain.embed_document(code)
    assert not set(q.indices) & set(d.indices)  # without splitting nothing matches
