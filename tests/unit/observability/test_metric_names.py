"""Every metric the server exports follows Prometheus naming and matches docs/observability.md."""

from __future__ import annotations

import re
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from memory_service.observability.gauges import ServiceGauges
from memory_service.observability.metrics import PREFIX, Metrics
from tests.conftest import REPO

# The published list (docs/observability.md; the Grafana dashboard queries these): name -> type.
EXPECTED = {
    "memory_service_tool_calls": "counter",
    "memory_service_tool_duration_seconds": "histogram",
    "memory_service_store_operation_duration_seconds": "histogram",
    "memory_service_store_errors": "counter",
    "memory_service_embed_duration_seconds": "histogram",
    "memory_service_embed_batch_size": "histogram",
    "memory_service_sync_queue_messages": "gauge",
    "memory_service_cache_requests": "counter",
    "memory_service_cache_hit_ratio": "gauge",
    "memory_service_jobs": "gauge",
    "memory_service_job_progress_ratio": "gauge",
    "memory_service_memories": "gauge",
    "memory_service_store_up": "gauge",
    "memory_service_build_info": "gauge",  # an Info: one sample, value 1, labelled with the version
}
# Base units only (seconds, bytes, ratios); never milliseconds or a plural unit.
BAD_UNITS = re.compile(r"_(ms|milliseconds|minutes|hours|kb|mb|percent)(_|$)")


class _Job:
    def __init__(self, rows: list[tuple[str, str, int]]) -> None:
        self.rows = rows

    def known(self) -> list[tuple[str, str, int]]:
        return self.rows


class _Health:
    def __init__(self, name: str, state: str, backend: str) -> None:
        self.name, self.state, self.backend = name, state, backend


class _FakeServices:
    """Just enough of Services for the scrape-time collector (a unit test of its shapes)."""

    def __init__(self) -> None:
        self.jobs = _Job([("index", "completed", 100), ("index", "running", 40), ("normalize", "failed", 7)])
        self.sync = type("Sync", (), {"pending": lambda _self: {"pending": 3, "inflight": 1, "failed": 2}})()
        counts = type(
            "Vectors", (), {"count": lambda _self, _c, flt: 1 if flt.equals["type"] == "design" else 0}
        )
        self.stores = type("Stores", (), {"vectors": counts()})()

    def health(self) -> list[_Health]:
        return [_Health("vectors", "ok", "qdrant-edge"), _Health("embedding", "degraded", "fastembed")]


def _scrape(metrics: Metrics) -> dict[str, Any]:
    return {f.name: f for f in text_string_to_metric_families(metrics.exposition().decode())}


def test_every_metric_is_exported_with_its_type_and_conventional_name() -> None:
    metrics = Metrics()
    metrics.registry.register(ServiceGauges(_FakeServices, metrics))
    metrics.tool_call("memory_add", 0.01, "")
    metrics.tool_call("memory_get", 0.002, "NF_MEMORY")
    metrics.store_duration.labels("vectors", "upsert").observe(0.001)
    metrics.store_errors.labels("graph", "query").inc()
    metrics.embed_duration.labels("query").observe(0.004)
    metrics.embed_batch.labels("query").observe(1)
    metrics.cache_hits.inc(3)
    metrics.cache_misses.inc()
    families = _scrape(metrics)
    assert {name: f.type for name, f in families.items()} == EXPECTED
    for name, family in families.items():
        assert name.startswith(PREFIX) and name == name.lower(), name
        assert not BAD_UNITS.search(name), name
        if family.type == "counter":
            assert {s.name for s in family.samples} == {f"{name}_total"}
            assert not name.endswith("_total")  # the parser strips it: the exported name has it once
        if "duration" in name:
            assert name.endswith("_seconds"), name
        if name.endswith("_ratio"):
            assert all(0 <= s.value <= 1 for s in family.samples), name
    assert families["memory_service_cache_hit_ratio"].samples[0].value == 0.75
    samples = {
        (s.labels["tool"], s.labels["outcome"], s.labels["code"]): s.value
        for s in families["memory_service_tool_calls"].samples
        if s.name.endswith("_total")
    }
    assert samples == {("memory_add", "ok", ""): 1.0, ("memory_get", "error", "NF_MEMORY"): 1.0}
    progress = {s.labels["kind"]: s.value for s in families["memory_service_job_progress_ratio"].samples}
    assert progress == {"index": 0.4, "normalize": 0.07}  # the running job, else the last one
    queue = {s.labels["state"]: s.value for s in families["memory_service_sync_queue_messages"].samples}
    assert queue == {"pending": 3, "inflight": 1, "dead": 2}
    up = {
        (s.labels["store"], s.labels["backend"]): s.value for s in families["memory_service_store_up"].samples
    }
    assert up == {("vectors", "qdrant-edge"): 1.0, ("embedding", "fastembed"): 0.5}
    memories = {
        (s.labels["type"], s.labels["status"]): s.value for s in families["memory_service_memories"].samples
    }
    assert memories[("design", "active")] == 1 and memories[("session", "deleted")] == 0


def test_the_documented_list_is_the_exported_list() -> None:
    """docs/observability.md names each metric once in its table; the dashboard is built from it."""
    text = (REPO / "docs" / "observability.md").read_text()
    documented = set(re.findall(r"^\| `(memory_service_[a-z_]+)`", text, flags=re.MULTILINE))
    exported = {f"{name}_total" if kind == "counter" else name for name, kind in EXPECTED.items()}
    assert documented == exported
