"""Idempotent stores (seed 004 FR-032..035): what makes two stores the same one.

A store's dedupe key is the caller's ``idempotency_key`` (within its project) when given, else
the synthesised {kind, scope, source, SHA-256 of the normalised content}: Unicode NFC, runs of
whitespace folded to one space, ends trimmed (case is kept: code is case-sensitive). ``source``
is ``metadata.source`` when the memory names one. A store whose key an active memory already
holds writes nothing and answers ``skipped_dedupe`` with that memory's id.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from typing import Any

from memory_service.core.models import Scope


def normalise(content: str) -> str:
    return " ".join(unicodedata.normalize("NFC", content).split())


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def source_of(metadata: dict[str, Any]) -> str:
    source = metadata.get("source")
    if source is None:
        return ""
    return source if isinstance(source, str) else json.dumps(source, sort_keys=True, default=str)


def dedupe_key(
    kind: str, scope: Scope, metadata: dict[str, Any], content: str, idempotency_key: str | None
) -> str:
    if idempotency_key is not None:
        return "key:" + _sha(json.dumps([scope.project, idempotency_key]))
    parts = [kind, scope.model_dump(), source_of(metadata), _sha(normalise(content))]
    return "sha256:" + _sha(json.dumps(parts, sort_keys=True))
