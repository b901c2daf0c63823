"""What the core tells a metrics backend: a port, so that core never imports prometheus_client.

:class:`~memory_service.core.maintenance.telemetry.Telemetry` already sees every tool call (the registry
records each one there); when a recorder is attached it forwards the call, so there is one place
that counts tool calls, whatever reads them (memory_statistics, /metrics).
"""

from __future__ import annotations

from typing import Protocol


class ToolCallRecorder(Protocol):
    """Receives every tool call: its name, its duration and its error code ("" when it succeeded)."""

    def tool_call(self, tool: str, seconds: float, code: str) -> None: ...
