"""Embedders that need no model: a deterministic fake for unit tests, and a deliberately dead one.

:class:`FakeEmbedder` uses the hashing trick (each word adds a signed 1 to one of ``dim`` buckets),
so texts sharing words are closer than texts that share none: enough to test ranking, dedup and
filtering logic without ONNX. It knows nothing of meaning (synonyms do not match): never use it
to judge search quality.

:class:`UnavailableEmbedder` is what the service wires in when no model can be loaded, so every
tool that needs vectors fails with the same readable ``SVC_EMBEDDING_UNAVAILABLE`` error while
the rest (get, list, graph, keyword search) keeps working.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import ClassVar

from memory_service.core.ports import ComponentHealth
from memory_service.embeddings.model_loading import MODEL_PATH_FIX, unavailable_error

_WORD = re.compile(r"\w+")


class _StaticEmbedder:
    """What both embedders share: a fixed name and size, and a readiness that never changes."""

    _READY: ClassVar[bool]

    def __init__(self, model_name: str, dim: int) -> None:
        self._model_name = model_name
        self._dim = dim

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def ready(self) -> bool:
        return self._READY

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._READY

    def release_memory(self) -> None:
        """No model, no buffers."""


class FakeEmbedder(_StaticEmbedder):
    """Deterministic bag-of-words hashing embedder, L2-normalised; always ready."""

    _READY = True

    def __init__(self, dim: int = 384, model_name: str = "fake-hashing") -> None:
        super().__init__(model_name, dim)

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self._dim
        for token in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            vec[value % self._dim] += 1.0 if (value >> 63) & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vec))
        if norm == 0.0:  # no words: a fixed unit vector keeps cosine defined
            vec[0] = 1.0
            return vec
        return [x / norm for x in vec]

    def embed_documents(self, texts: Sequence[str], *, remember: bool = True) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def health(self) -> ComponentHealth:
        return ComponentHealth("embedding", "ok", "fake", "deterministic hashing embedder (tests only)")


class UnavailableEmbedder(_StaticEmbedder):
    """An :class:`~memory_service.core.ports.Embedder` that never works and says why."""

    _READY = False

    def __init__(
        self, reason: str, *, model_name: str = "sentence-transformers/all-MiniLM-L6-v2", dim: int = 384
    ) -> None:
        super().__init__(model_name, dim)
        self.reason = reason

    def embed_documents(self, texts: Sequence[str], *, remember: bool = True) -> list[list[float]]:
        raise unavailable_error(self._model_name, self.reason)

    def embed_query(self, text: str) -> list[float]:
        raise unavailable_error(self._model_name, self.reason)

    def health(self) -> ComponentHealth:
        extra = {"model_name": self._model_name, "reason": self.reason, "suggestion": MODEL_PATH_FIX}
        return ComponentHealth("embedding", "unavailable", "none", self.reason, extra)
