"""Where the embedder remembers vectors: the shared cache (best effort: a broken cache only costs
speed), keyed by the text's hash under the model's namespace, and an in-process LRU of queries."""

from __future__ import annotations

import hashlib
import logging
import threading
from array import array
from collections import OrderedDict

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import Cache
from memory_service.settings import EmbeddingSettings

logger = logging.getLogger(__name__)

QUERY_MEMORY = 2048  # query vectors kept in process (1.5 KB each)


def text_key(text: str) -> str:
    """Cache key of a text: its sha256, so keys are short and the text is not stored twice."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_namespace(settings: EmbeddingSettings) -> str:
    """Cache namespace: model name and dim, plus the weights' size when loaded from a folder,
    so the fp32 and int8 exports of one model never share cached vectors."""
    ns = f"emb:{settings.model_name}:{settings.dim}"
    path = settings.model_path
    if path is not None and (path / "model.onnx").is_file():
        ns += f":{(path / 'model.onnx').stat().st_size}"
    return ns + ("" if settings.precision == "fp32" else f":{settings.precision}")


class SharedVectors:
    """Vectors in the shared cache (Cache port) under one namespace; no cache: nothing kept."""

    def __init__(self, cache: Cache | None, namespace: str) -> None:
        self.cache = cache
        self.namespace = namespace

    def get(self, keys: list[str]) -> dict[str, bytes]:
        if self.cache is None:
            return {}
        try:
            return self.cache.get_many(self.namespace, list(dict.fromkeys(keys)))
        except ServiceUnavailableError as exc:  # a broken cache only costs speed
            logger.warning("embedding cache read failed: %s", exc.message)
            return {}

    def set(self, items: dict[str, bytes]) -> None:
        if self.cache is None or not items:
            return
        try:
            self.cache.set_many(self.namespace, items)
        except ServiceUnavailableError as exc:
            logger.warning("embedding cache write failed: %s", exc.message)


class QueryVectors:
    """LRU of query vectors, as float32 arrays: 1.5 KB each, not the 12 KB of a list of floats."""

    def __init__(self, size: int = QUERY_MEMORY) -> None:
        self._size = size
        self._vectors: OrderedDict[str, array[float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> array[float] | None:
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
        return vector

    def put(self, key: str, vector: array[float]) -> None:
        with self._lock:
            self._vectors[key] = vector
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
