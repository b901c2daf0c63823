"""The Prometheus metrics of one server: names, types, labels and buckets in one place.

Each server gets its own ``CollectorRegistry`` (not the global one), so several servers in one
process (the tests, the in-memory client) never collide. Names follow docs/observability.md:
prefix ``memory_service_``, units in names, counters end in ``_total``.

What changes on the request path (tool calls, store operations, embeddings, cache lookups) is
counted as it happens; what is read from the stores (queue depth, memory counts, store health,
jobs) is computed when Prometheus scrapes (:mod:`memory_service.observability.gauges`).
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    Info,
    disable_created_metrics,
    generate_latest,
)

from memory_service import __version__

PREFIX = "memory_service_"

# Tool calls span a cache hit (~1 ms) to an indexing job waited on (minutes).
TOOL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
# Store calls: an embedded cache read is ~50 us, a Neo4j round trip a few ms.
STORE_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1,
    2.5,
    10,
)
EMBED_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class Metrics:
    """The registry and the request-path metrics; implements core's ``ToolCallRecorder``."""

    def __init__(self) -> None:
        # No ``*_created`` series beside each counter and histogram: they double the series count
        # and no dashboard reads them (process-wide, and prometheus_client is only ours here).
        disable_created_metrics()
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.tool_calls = Counter(
            f"{PREFIX}tool_calls", "MCP tool calls", ["tool", "outcome", "code"], registry=r
        )
        self.tool_duration = Histogram(
            f"{PREFIX}tool_duration_seconds",
            "End-to-end tool latency in the server",
            ["tool"],
            buckets=TOOL_BUCKETS,
            registry=r,
        )
        self.store_duration = Histogram(
            f"{PREFIX}store_operation_duration_seconds",
            "Store call latency",
            ["store", "operation"],
            buckets=STORE_BUCKETS,
            registry=r,
        )
        self.store_errors = Counter(
            f"{PREFIX}store_errors", "Store calls that raised", ["store", "operation"], registry=r
        )
        self.embed_duration = Histogram(
            f"{PREFIX}embed_duration_seconds",
            "Embedding latency per call (cache lookups included)",
            ["kind"],
            buckets=EMBED_BUCKETS,
            registry=r,
        )
        self.embed_batch = Histogram(
            f"{PREFIX}embed_batch_size", "Texts per embed call", ["kind"], buckets=BATCH_BUCKETS, registry=r
        )
        self.cache_requests = Counter(
            f"{PREFIX}cache_requests", "Cache lookups by result (one per key)", ["result"], registry=r
        )
        self.cache_hits = self.cache_requests.labels("hit")
        self.cache_misses = self.cache_requests.labels("miss")
        Info(f"{PREFIX}build", "Version of the running server", registry=r).info({"version": __version__})

    def tool_call(self, tool: str, seconds: float, code: str) -> None:
        """Counted by :class:`~memory_service.core.maintenance.telemetry.Telemetry` for every tool call."""
        self.tool_calls.labels(tool, "error" if code else "ok", code).inc()
        self.tool_duration.labels(tool).observe(seconds)

    def cache_hit_ratio(self) -> float:
        """Hits / lookups since start (0 before the first lookup), read from the counter itself."""
        counts = {
            sample.labels["result"]: sample.value
            for family in self.cache_requests.collect()
            for sample in family.samples
            if sample.name.endswith("_total")
        }
        lookups = counts.get("hit", 0.0) + counts.get("miss", 0.0)
        return counts.get("hit", 0.0) / lookups if lookups else 0.0

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        return generate_latest(self.registry)
