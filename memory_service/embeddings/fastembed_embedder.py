"""Dense embeddings with fastembed (ONNX Runtime), loaded in the background, cached by content hash.

Why a background load: importing fastembed and opening the ONNX session takes ~1.5 s locally. The
MCP server must answer ``initialize`` at once, so :meth:`FastEmbedder.start` loads in a daemon
thread and the tools that need vectors wait (up to ``load_timeout_seconds``) or get
``SVC_EMBEDDING_UNAVAILABLE``.

Where the weights come from (model_loading.py), in order: ``model_path`` (no network), else
fastembed's cache (``local_files_only``, no network), else one download. Before that download, an
offline environment (``HF_HUB_OFFLINE=1``) or one request to the hub with a short timeout settles
whether it can work at all: left to itself, fastembed retries a failed download with sleeps of 3,
9 and 27 s, so a machine without network waited ~40 s for every first write and ``memory-cli
health``. Now it knows within seconds, logs one warning, and the service runs lexically (BM25).
Vectors are remembered by their text's hash in the shared cache, queries in process as well
(embedding_cache.py).

Thread safety: calls are not serialised. ONNX Runtime documents ``InferenceSession.run`` as safe to
call concurrently, fastembed's per-call path only reads the tokenizer (``encode_batch``), and four
threads embedding at once gave bit-identical vectors to serial runs. A lock would make a search
query wait behind a whole indexing batch (measured: p50 160 ms instead of 4 ms).
"""

from __future__ import annotations

import logging
import threading
import time
from array import array
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memory_service.core.ports import Cache, ComponentHealth
from memory_service.embeddings.embedding_cache import QueryVectors, SharedVectors, cache_namespace, text_key
from memory_service.embeddings.model_loading import MODEL_PATH_FIX, ModelOpener, unavailable_error
from memory_service.embeddings.model_source import ModelUnobtainableError
from memory_service.resident import trim_heap
from memory_service.settings import EmbeddingSettings

logger = logging.getLogger(__name__)

MODEL_INPUT_CHARS = 256 * 32  # the model's 256 tokens, at up to 32 characters per token
MIN_PARALLEL_BATCH = 8  # fewer texts than this per run: one run (splitting costs more than it saves)


def _embed_batch(model: Any, batch: list[tuple[str, str]]) -> dict[str, bytes]:
    """One model run: cache key -> normalised float32 vector bytes."""
    vectors = np.asarray(list(model.embed([t for _, t in batch], batch_size=len(batch))), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return {k: v.tobytes() for (k, _), v in zip(batch, vectors, strict=True)}


class FastEmbedder:
    """:class:`~memory_service.core.ports.Embedder` over ``fastembed.TextEmbedding``."""

    def __init__(self, settings: EmbeddingSettings, cache: Cache | None = None) -> None:
        self._settings = settings
        self._model: Any = None
        self._state: Literal["idle", "loading", "ready", "failed"] = "idle"
        self._reason = ""
        self._done = threading.Event()
        self._start_lock = threading.Lock()
        self._started_at: float | None = None
        self._opener = ModelOpener(settings)  # where the weights come from (model_loading.py)
        self.load_seconds: float | None = None
        self.namespace = cache_namespace(settings)
        self._shared = SharedVectors(cache, self.namespace)
        self._counts_lock = threading.Lock()
        self._queries = QueryVectors()
        self._pool = ThreadPoolExecutor(max(1, settings.threads), thread_name_prefix="embed")
        self._embedded = 0
        self._cache_hits = 0

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start loading in a daemon thread; returns at once. Calling it again does nothing."""
        with self._start_lock:
            if self._state != "idle":
                return
            self._state = "loading"
            self._started_at = time.monotonic()
            threading.Thread(target=self._load, name="fastembed-loader", daemon=True).start()

    def _load(self) -> None:
        settings = self._settings
        try:
            model = self._opener.open()
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
            if self._opener.downloading:
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
    def model_folder(self) -> Path | None:
        """Where the loaded weights are, once loaded."""
        return self._opener.model_folder

    @property
    def one_text_per_run(self) -> bool:
        """Whether the loaded model is quantised, so each model run embeds one text."""
        return self._opener.one_per_run

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
        vector = self._queries.get(key)
        if vector is None:
            vector = array("f", self._embed([text], keys=[key], shared=False)[0])
            self._queries.put(key, vector)
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
        known = self._shared.get(keys) if shared else {}
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
            self._shared.set(embedded)
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
        if self._opener.one_per_run:
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
        self._shared.cache = cache

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
