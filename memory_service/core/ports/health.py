"""Component health: what every store and the embedder report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class ComponentHealth:
    """State of one store or model: ``ok``, ``degraded`` or ``unavailable``, with a reason."""

    name: str
    state: Literal["ok", "degraded", "unavailable"]
    backend: str
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
