"""Opening the embedding model: from ``model_path`` (no network), else fastembed's cache, else one
download (model_source.py settles first whether a download can work); with precision int8,
int8-rows or mixed, its copy quantised on this machine (quantize.py).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.embeddings.model_source import (
    ModelUnobtainableError,
    fastembed_cache_dir,
    fastembed_muted,
    offline_flag,
    probe_hub,
)
from memory_service.embeddings.quantize import COPIES, int8_folder, is_quantised
from memory_service.settings import EmbeddingSettings

logger = logging.getLogger(__name__)

MODEL_PATH_FIX = (
    "Set MEMORY_EMBEDDING__MODEL_PATH (memory-service --model-path) to a folder holding the ONNX "
    "export of the model (model.onnx, tokenizer.json, config.json, special_tokens_map.json, "
    "tokenizer_config.json), or give the server network access once so that fastembed downloads "
    "the model into its cache (FASTEMBED_CACHE_PATH), then restart the server."
)
_REQUIRED_FILES = ("model.onnx", "tokenizer.json", "config.json")
# ONNX Runtime threads inside one model run; ``EmbeddingSettings.threads`` runs go at once (data
# parallel). Measured on 2 cores: two 1-thread runs embed more texts per second than one 2-thread
# run, and a 1-thread query embedding leaves a core to the searches it overlaps (ranker.py).
RUN_THREADS = 1
TOKENIZER_THREADS_VARIABLE = "TOKENIZERS_PARALLELISM"  # the tokenizers library's own thread pool
# ONNX Runtime's telemetry: on Linux it writes a device id and an event database under
# ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ unless this is set when onnxruntime is imported.
ORT_TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY"


def unavailable_error(model_name: str, reason: str) -> ServiceUnavailableError:
    """The error every embedding call raises while no model is usable."""
    return ServiceUnavailableError(
        f"Embedding model '{model_name}' is not available: {reason}",
        code="SVC_EMBEDDING_UNAVAILABLE",
        details={"model_name": model_name, "reason": reason},
        suggestion=MODEL_PATH_FIX,
    )


class ModelOpener:
    """Opens the model the settings name, and keeps what the embedder needs to know of it: where
    its weights are and whether it is quantised."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self._settings = settings
        self.downloading = False  # past the cache and the probe: fastembed is fetching the model
        self.model_folder: Path | None = None  # where the loaded weights are, once loaded
        self.one_per_run = False  # a quantised model: one text per model run (see _from_folder)

    def _check_model_path(self, path: Path) -> str | None:
        if not path.is_dir():
            return f"model path {path} is not a directory"
        missing = [name for name in _REQUIRED_FILES if not (path / name).is_file()]
        return f"model path {path} lacks {', '.join(missing)}" if missing else None

    def open(self) -> Any:
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
        self.downloading = True
        fetched = TextEmbedding(name, cache_dir=str(cache_dir), threads=threads, lazy_load=True)
        self.downloading = False
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
        self.one_per_run = is_quantised(folder / model_file)
        return TextEmbedding(
            model_name=settings.model_name, threads=RUN_THREADS, specific_model_path=str(folder)
        )
