"""Live latency counters since the process started: what memory_statistics reports.

Each named operation (a tool, a store call) keeps its call and error counts, its total time and a
window of the most recent durations, from which p50/p95 are read. The window is bounded, so
memory stays flat however long the server runs, and the percentiles follow recent behaviour.
Pure Python and thread-safe: tools run in worker threads.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from memory_service.core.ports.metrics import ToolCallRecorder

WINDOW = 2048  # durations kept per operation for the percentiles


def percentile(sorted_values: list[float], q: float) -> float:
    """The nearest-rank ``q`` percentile (0-100) of already sorted values; 0.0 when empty."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass
class _Series:
    calls: int = 0
    errors: int = 0
    total_ms: float = 0.0
    recent: deque[float] = field(default_factory=lambda: deque(maxlen=WINDOW))


class Telemetry:
    """Counters per operation name; ``record`` is cheap (a lock, an append)."""

    def __init__(self, recorder: ToolCallRecorder | None = None) -> None:
        self._recorder = recorder  # /metrics, when enabled: sees each call recorded here
        self._lock = threading.Lock()
        self._series: dict[str, _Series] = {}
        self.started = time.time()
        self._started_mono = time.monotonic()

    def record(self, name: str, elapsed_ms: float, *, ok: bool = True, code: str = "") -> None:
        """One call of ``name``; ``code`` is its error code when it failed (for /metrics)."""
        with self._lock:
            series = self._series.setdefault(name, _Series())
            series.calls += 1
            series.errors += 0 if ok else 1
            series.total_ms += elapsed_ms
            series.recent.append(elapsed_ms)
        if self._recorder is not None:
            self._recorder.tool_call(name, elapsed_ms / 1000, "" if ok else (code or "UNKNOWN"))

    def uptime_seconds(self) -> float:
        return time.monotonic() - self._started_mono

    def summary(self, names: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
        """Per operation: calls, errors, avg_ms over all calls, p50_ms / p95_ms over the window."""
        with self._lock:
            snapshot = {
                name: (s.calls, s.errors, s.total_ms, sorted(s.recent))
                for name, s in self._series.items()
                if names is None or name in names
            }
        return {
            name: {
                "calls": calls,
                "errors": errors,
                "avg_ms": round(total / calls, 2) if calls else 0.0,
                "p50_ms": round(percentile(recent, 50), 2),
                "p95_ms": round(percentile(recent, 95), 2),
            }
            for name, (calls, errors, total, recent) in sorted(snapshot.items())
        }

    def combined(self, names: tuple[str, ...]) -> dict[str, float]:
        """One figure over several operations (every write tool, say): calls, avg_ms, p50, p95."""
        with self._lock:
            series = [s for name, s in self._series.items() if name in names]
            calls = sum(s.calls for s in series)
            total = sum(s.total_ms for s in series)
            recent = sorted(v for s in series for v in s.recent)
        return {
            "calls": calls,
            "avg_ms": round(total / calls, 2) if calls else 0.0,
            "p50_ms": round(percentile(recent, 50), 2),
            "p95_ms": round(percentile(recent, 95), 2),
        }
