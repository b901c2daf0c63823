"""Dense embeddings with fastembed (ONNX Runtime), loaded in the background, cached by content hash.

Why a background load: importing fastembed and opening the ONNX session takes ~1.5 s locally. The
MCP server must answer ``initialize`` at once, so :meth:`FastEmbedder.start` loads in a daemon
thread and the tools that need vectors wait (up to ``load_timeout_seconds``) or get
``SVC_EMBEDDING_UNAVAILABLE``.

Where the weights come from, in order: ``model_path`` (no network), else fastembed's cache
(``local_files_only``, no network), else one download. Before that download, an offline
environment (``HF_HUB_OFFLINE=1``) or one request to the hub with a short timeout settles whether
it can work at all: left to itself, fastembed retries a failed download with sleeps of 3, 9 and
27 s, so a machine without network waited ~40 s for every first write and ``memory-cli health``.
Now it knows within seconds, logs one warning, and the service runs lexically (BM25).

Thread safety: calls are not serialised. ONNX Runtime documents ``InferenceSession.run`` as safe to
call concurrently, fastembed's per-call path only reads the tokenizer (``encode_batch``), and four
threads embedding at once gave bit-identical vectors to serial runs. A lock would make a search
query wait behind a whole indexing batch (measured: p50 160 ms instead of 4 ms).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import Cache, ComponentHealth
from memory_service.embeddings.model_source import (
    ModelUnobtainableError,
    fastembed_cache_dir,
    fastembed_muted,
    offline_flag,
    probe_hub,
)
from memory_service.embeddings.quantize import COPIES, int8_folder, is_quantised
from memory_service.resident import trim_heap
from memory_service.settings import EmbeddingSettings

logger = logging.getLogger(__name__)

MODEL_PATH_FIX = (
    "Set MEMORY_EMBEDDING__MODEL_PATH (memory-service --model-path) to a folder holding the ONNX "
    "export of the model (model.onnx, tokenizer.json, config.json, special_tokens_map.json, "
    "tokenizer_config.json), or give the server network access once so that fastembed downloads "
    "the model into its cache (FASTEMBED_CACHE_PATH), then restart the server."
)
_REQUIRED_FILES = ("model.onnx", "tokenizer.json", "config.json")
MODEL_INPUT_CHARS = 256 * 32  # the model's 256 tokens, at up to 32 characters per token
# ONNX Runtime threads inside one model run; ``EmbeddingSettings.threads`` runs go at once (data
# parallel). Measured on 2 cores: two 1-thread runs embed more texts per second than one 2-thread
# run, and a 1-thread query embedding leaves a core to the searches it overlaps (ranker.py).
RUN_THREADS = 1
QUERY_MEMORY = 2048  # query vectors kept in process (1.5 KB each)
MIN_PARALLEL_BATCH = 8  # fewer texts than this per run: one run (splitting costs more than it saves)
TOKENIZER_THREADS_VARIABLE = "TOKENIZERS_PARALLELISM"  # the tokenizers library's own thread pool
# ONNX Runtime's telemetry: on Linux it writes a device id and an event database under
# ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ unless this is set when onnxruntime is imported.
ORT_TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY"


def _embed_batch(model: Any, batch: list[tuple[str, str]]) -> dict[str, bytes]:
    """One model run: cache key -> normalised float32 vector bytes."""
    vectors = np.asarray(list(model.embed([t for _, t in batch], batch_size=len(batch))), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return {k: v.tobytes() for (k, _), v in zip(batch, vectors, strict=True)}


def unavailable_error(model_name: str, reason: str) -> ServiceUnavailableError:
    """The error every embedding call raises while no model is usable."""
    return ServiceUnavailableError(
        f"Embedding model '{model_name}' is not available: {reason}",
        code="SVC_EMBEDDING_UNAVAILABLE",
        details={"model_name": model_name, "reason": reason},
        suggestion=MODEL_PATH_FIX,
    )


def text_key(text: str) -> str:
    """Cache key of a text: its sha256, so keys are short and the text is not stored twice."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class FastEmbedder:
    """:class:`~memory_service.core.ports.Embedder` over ``fastembed.TextEmbedding``."""

    def __init__(self, settings: EmbeddingSettings, cache: Cache | None = None) -> None:
        self._settings = settings
        self._cache = cache
        self._model: Any = None
        self._state: Literal["idle", "loading", "ready", "failed"] = "idle"
        self._reason = ""
        self._done = threading.Event()
        self._start_lock = threading.Lock()
        self._started_at: float | None = None
        self._downloading = False  # past the cache and the probe: fastembed is fetching the model
        self.load_seconds: float | None = None
        self.model_folder: Path | None = None  # where the loaded weights are, once loaded
        self._one_per_run = False  # a quantised model: one text per model run (see _from_folder)
        self.namespace = self._namespace()
        self._counts_lock = threading.Lock()
        # LRU of query vectors, as float32 arrays: 1.5 KB each, not the 12 KB of a list of floats
        self._queries: OrderedDict[str, array[float]] = OrderedDict()
        self._queries_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max(1, settings.threads), thread_name_prefix="embed")
        self._embedded = 0
        self._cache_hits = 0

    # ------------------------------------------------------------------ lifecycle

    def _namespace(self) -> str:
        """Cache namespace: model name and dim, plus the weights' size when loaded from a folder,
        so the fp32 and int8 exports of one model never share cached vectors."""
        ns = f"emb:{self._settings.model_name}:{self._settings.dim}"
        path = self._settings.model_path
        if path is not None and (path / "model.onnx").is_file():
            ns += f":{(path / 'model.onnx').stat().st_size}"
        return ns + ("" if self._settings.precision == "fp32" else f":{self._settings.precision}")

    def start(self) -> None:
        """Start loading in a daemon thread; returns at once. Calling it again does nothing."""
        with self._start_lock:
            if self._state != "idle":
                return
            self._state = "loading"
            self._started_at = time.monotonic()
            threading.Thread(target=self._load, name="fastembed-loader", daemon=True).start()

    def _check_model_path(self, path: Path) -> str | None:
        if not path.is_dir():
            return f"model path {path} is not a directory"
        missing = [name for name in _REQUIRED_FILES if not (path / name).is_file()]
        return f"model path {path} lacks {', '.join(missing)}" if missing else None

    def _open_model(self) -> Any:
        """The fastembed model: from ``model_path``, else from fastembed's cache, else downloaded.

        Raises:
            ModelUnobtainableError: no path, not cached, and offline or the hub is unreachable.
        """
        settings = self._settings
        # Our runs are already parallel (one per thread). Left on, the tokenizer would hand each
        # run's texts to its own pool of one thread per core, whose threads spin while they wait:
        # ~9 ms of CPU per bulk add of 100, taken from the write path (docs/benchmarks.md).
        os.environ.setdefault(TOKENIZER_THREADS_VARIABLE, "false")
        # Nothing outside the data directory: before fastembed's first import of onnxruntime.
        os.environ.setdefault(ORT_TELEMETRY_VARIABLE, "1")
        if settings.model_path is not None:
            problem = self._check_model_path(settings.model_path)
            if problem:
                raise FileNotFoundError(problem)
            # Before the first import of fastembed/huggingface_hub, which read it once.
            os.environ["HF_HUB_OFFLINE"] = "1"
            return self._from_folder(settings.model_path)
        from fastembed import TextEmbedding

        known = {m["model"].lower(): m for m in TextEmbedding.list_supported_models()}
        description = known.get(settings.model_name.lower())
        if description is None:
            raise ValueError(f"fastembed does not know the model {settings.model_name}")
        cache_dir, name, threads = fastembed_cache_dir(), settings.model_name, RUN_THREADS
        try:
            with fastembed_muted():
                cached = TextEmbedding(
                    name, cache_dir=str(cache_dir), threads=threads, local_files_only=True, lazy_load=True
                )
            return self._fetched(cached)
        except ValueError:  # fastembed: "Could not load model ... from any source"
            pass
        missing = f"no model path is set and the model is not in fastembed's cache ({cache_dir})"
        flag = offline_flag()
        if flag:
            raise ModelUnobtainableError(f"{missing}, and {flag}=1 forbids downloading it")
        repo = description["sources"].get("hf")
        if repo:
            probe_hub(repo, missing)
        self._downloading = True
        fetched = TextEmbedding(name, cache_dir=str(cache_dir), threads=threads, lazy_load=True)
        self._downloading = False
        return self._fetched(fetched)

    def _fetched(self, model: Any) -> Any:
        """A model fastembed found in its cache (or fetched), loaded as the precision asks."""
        inner = getattr(model, "model", None)
        folder = getattr(inner, "_model_dir", None)
        model_file = getattr(getattr(inner, "model_description", None), "model_file", None)
        if folder is None or not model_file or not (Path(folder) / model_file).is_file():
            model.model.load_onnx_model()  # not laid out as fastembed 0.9 does: load what it has
            return model
        return self._from_folder(Path(folder), model_file)

    def _from_folder(self, folder: Path, model_file: str = "model.onnx") -> Any:
        """The model in ``folder`` (its weights at ``model_file``); with precision int8 or mixed,
        its copy quantised as that asks (made here once, quantize.py), or the folder as it is when
        that copy cannot be made (a warning says why)."""
        from fastembed import TextEmbedding

        settings = self._settings
        if settings.precision != "fp32":
            try:
                cache = fastembed_cache_dir() / COPIES[settings.precision][0]
                folder = int8_folder(
                    folder, settings.model_name, cache, model_file, precision=settings.precision
                )
            except Exception as exc:  # onnx missing, unreadable or unwritable files: fp32 still works
                logger.warning(
                    "embedding model %s: no %s copy (%s: %s), so the fp32 weights in %s are used",
                    settings.model_name,
                    settings.precision,
                    type(exc).__name__,
                    exc,
                    folder,
                )
        self.model_folder = folder
        # Dynamic quantisation scales each run's activations together, so in a run of several
        # texts a text's vector would depend on its neighbours (cosine 0.992 against alone). One
        # text per run keeps a text's vector its own, at the same speed here (478 vs 482 texts/s).
        self._one_per_run = is_quantised(folder / model_file)
        return TextEmbedding(
            model_name=settings.model_name, threads=RUN_THREADS, specific_model_path=str(folder)
        )

    def _load(self) -> None:
        settings = self._settings
        try:
            model = self._open_model()
            probe = next(iter(model.embed(["dimension probe"])))
            if probe.shape[-1] != settings.dim:
                raise ValueError(
                    f"the model yields {probe.shape[-1]}-dim vectors, settings say {settings.dim}"
                )
        except ModelUnobtainableError as exc:
            self._reason, self._state = str(exc), "failed"
            logger.warning(
                "embedding model %s is not available, so memories are stored and searched "
                "lexically (BM25) only: %s. %s",
                settings.model_name,
                exc,
                MODEL_PATH_FIX,
            )
        # The loader thread is its own top level: any failure (ONNX Runtime raises its own
        # exception types) must become a readable reason, never a dead thread.
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if self._downloading:
                reason = f"no model path is set and fastembed could not fetch the model ({reason})"
            self._reason, self._state = reason, "failed"
            logger.error("embedding model %s failed to load: %s", settings.model_name, self._reason)
            logger.debug("embedding model load failure", exc_info=True)
        else:
            self._model = model
            trim_heap()  # reading the weights freed as much heap as they take (~30 MB kept otherwise)
            self.load_seconds = time.monotonic() - (self._started_at or time.monotonic())
            self._state = "ready"
            logger.info("embedding model %s loaded in %.2f s", settings.model_name, self.load_seconds)
        finally:
            self._done.set()

    # ------------------------------------------------------------------ Embedder

    @property
    def model_name(self) -> str:
        return self._settings.model_name

    @property
    def dim(self) -> int:
        return self._settings.dim

    @property
    def one_text_per_run(self) -> bool:
        """Whether the loaded model is quantised, so each model run embeds one text."""
        return self._one_per_run

    @property
    def ready(self) -> bool:
        return self._state == "ready"

    @property
    def failure_reason(self) -> str:
        return self._reason

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Start loading if nobody did, then block until loaded or failed (or timeout)."""
        self.start()
        self._done.wait(timeout)
        return self.ready

    def _require_model(self) -> Any:
        if not self.wait_ready(self._settings.load_timeout_seconds):
            reason = self._reason or f"still loading after {self._settings.load_timeout_seconds:.0f} s"
            raise unavailable_error(self.model_name, reason)
        return self._model

    def embed_query(self, text: str) -> list[float]:
        """A query's vector, remembered in this process only: the search path never waits on the
        shared cache (a write there is a commit, fsync'd, behind any ingest holding it)."""
        key = text_key(text)
        with self._queries_lock:
            vector = self._queries.get(key)
            if vector is not None:
                self._queries.move_to_end(key)
        if vector is None:
            vector = array("f", self._embed([text], keys=[key], shared=False)[0])
            with self._queries_lock:
                self._queries[key] = vector
                while len(self._queries) > QUERY_MEMORY:
                    self._queries.popitem(last=False)
        else:
            with self._counts_lock:
                self._cache_hits += 1
        return vector.tolist()

    def embed_documents(self, texts: Sequence[str], *, remember: bool = True) -> list[list[float]]:
        """Vectors in input order, duplicates embedded once; with ``remember``, cached texts are
        not re-embedded and the others are cached."""
        return self._embed(texts, keys=[text_key(t) for t in texts], shared=remember)

    def _embed(self, texts: Sequence[str], *, keys: list[str], shared: bool) -> list[list[float]]:
        """Embed what the shared cache (when ``shared``) does not hold, and keep it there."""
        if not texts:
            return []
        model = self._require_model()
        known = self._cache_get(keys) if shared else {}
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in known}
        # Only the first max_length tokens (256) reach the model, but the tokenizer splits the whole
        # text first: 100 pasted 100 KB blobs took 14 s. No real text needs 32 characters per
        # token, so the model sees the same tokens from this prefix (tests/contract/test_embedder.py).
        todo = {k: t[:MODEL_INPUT_CHARS] for k, t in todo.items()}
        # Similar lengths per batch: the model pads every text to the batch's longest one.
        pending = sorted(todo.items(), key=lambda item: len(item[1]))
        batches = self._batches(pending)
        runs = (
            self._pool.map(lambda batch: _embed_batch(model, batch), batches)
            if len(batches) > 1
            else [_embed_batch(model, b) for b in batches]
        )
        embedded: dict[str, bytes] = {}
        for fresh in runs:
            embedded.update(fresh)
        if shared:  # one cache write per call: each is a commit, fsync'd
            self._cache_set(embedded)
        known.update(embedded)
        with self._counts_lock:
            self._embedded += len(pending)
            self._cache_hits += len(texts) - len(pending)
        return [array("f", known[k]).tolist() for k in keys]

    def _batches(self, pending: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
        """One text per batch for a quantised model; else at most ``batch_size`` texts per batch,
        and at least one batch per thread when there are enough texts (one model run per thread:
        runs in parallel beat threads inside one run on short texts, and a query embeds on one
        core while the searches use the other)."""
        if self._one_per_run:
            return [[item] for item in pending]
        parallel = max(1, self._settings.threads)
        size = max(1, min(self._settings.batch_size, -(-len(pending) // parallel)))
        size = max(size, min(len(pending), MIN_PARALLEL_BATCH))
        return [pending[i : i + size] for i in range(0, len(pending), size)]

    def release_memory(self) -> None:
        """One tiny model run that asks ONNX Runtime to shrink its arena at the end: the arena
        keeps the buffers of the largest runs it has seen (a burst of long texts: ~25 MB), and
        frees those no run uses. Reaches into fastembed's session (``model.model.model``): a
        fastembed that moved it is left as it is."""
        if self._state != "ready":
            return
        session = getattr(getattr(self._model, "model", None), "model", None)
        if session is None or not hasattr(session, "get_inputs"):
            return
        import onnxruntime as ort

        shrink = ort.RunOptions()
        shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        ids = np.array([[101, 102]], dtype=np.int64)  # [CLS] [SEP]
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        try:
            session.run(None, {i.name: feed[i.name] for i in session.get_inputs() if i.name in feed}, shrink)
        except Exception as exc:  # a model with other inputs: its buffers stay, nothing else changes
            logger.debug("embedding model: no arena shrink (%s: %s)", type(exc).__name__, exc)

    # ------------------------------------------------------------------ cache (best effort)

    def use_cache(self, cache: Cache | None) -> None:
        """Keep vectors in ``cache`` from now on (the instrumented cache, so /metrics counts these
        lookups with the others)."""
        self._cache = cache

    def _cache_get(self, keys: list[str]) -> dict[str, bytes]:
        if self._cache is None:
            return {}
        try:
            return self._cache.get_many(self.namespace, list(dict.fromkeys(keys)))
        except ServiceUnavailableError as exc:  # a broken cache only costs speed
            logger.warning("embedding cache read failed: %s", exc.message)
            return {}

    def _cache_set(self, items: dict[str, bytes]) -> None:
        if self._cache is None or not items:
            return
        try:
            self._cache.set_many(self.namespace, items)
        except ServiceUnavailableError as exc:
            logger.warning("embedding cache write failed: %s", exc.message)

    # ------------------------------------------------------------------ health

    def health(self) -> ComponentHealth:
        extra: dict[str, Any] = {
            "model_name": self.model_name,
            "dim": self.dim,
            "model_path": str(self._settings.model_path) if self._settings.model_path else None,
            "embedded": self._embedded,
            "cache_hits": self._cache_hits,
        }
        if self._state == "ready":
            extra["load_seconds"] = round(self.load_seconds or 0.0, 3)
            return ComponentHealth("embedding", "ok", "fastembed", "model loaded", extra)
        if self._state == "failed":
            extra.update(reason=self._reason, suggestion=MODEL_PATH_FIX)
            return ComponentHealth("embedding", "unavailable", "fastembed", self._reason, extra)
        if self._state == "idle":
            return ComponentHealth("embedding", "degraded", "fastembed", "model not loading yet", extra)
        waited = time.monotonic() - (self._started_at or time.monotonic())
        return ComponentHealth("embedding", "degraded", "fastembed", f"model loading ({waited:.1f} s)", extra)
