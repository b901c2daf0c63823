"""Gauges read when Prometheus scrapes: queue depth, memory counts, store health, jobs.

These come from the stores (or the job manager), not from the request path, so they cost nothing
between scrapes. The store reads (queue counts, one count per memory type and status, each
store's health) are kept for ``ttl`` seconds: a 15 s scrape interval, or several scrapers, cost at
most one round of reads per ``ttl``. A store that fails leaves its family out of that scrape
(``memory_service_store_up`` says why it is missing), never fails the scrape.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from memory_service.core.errors import MemoryServiceError
from memory_service.core.models import MemoryStatus, MemoryType
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import MEMORIES
from memory_service.observability.metrics import PREFIX, Metrics

logger = logging.getLogger(__name__)

STATE_VALUE = {"ok": 1.0, "degraded": 0.5, "unavailable": 0.0}


class ServiceGauges(Collector):
    """A custom collector over the running services (``services()`` is None until they open)."""

    def __init__(self, services: Callable[[], Any], metrics: Metrics, *, ttl: float = 5.0) -> None:
        self._services = services
        self._metrics = metrics
        self._ttl = ttl
        self._lock = threading.Lock()
        self._cached: list[Metric] = []
        self._read_at = -float("inf")

    def describe(self) -> list[Metric]:
        return []  # families vary with the stores' state; nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        ratio = GaugeMetricFamily(f"{PREFIX}cache_hit_ratio", "Cache hits / lookups since start")
        ratio.add_metric([], self._metrics.cache_hit_ratio())
        yield ratio
        services = self._services()
        if services is None:
            return
        yield from self._jobs(services)
        with self._lock:
            if time.monotonic() - self._read_at >= self._ttl:
                self._cached = list(self._store_families(services))
                self._read_at = time.monotonic()
            cached = list(self._cached)
        yield from cached

    def _jobs(self, services: Any) -> Iterator[Metric]:
        jobs = GaugeMetricFamily(
            f"{PREFIX}jobs", "Background jobs known to this process", labels=["kind", "status"]
        )
        progress = GaugeMetricFamily(
            f"{PREFIX}job_progress_ratio",
            "Progress (0-1) of the running job of each kind, else of its last job",
            labels=["kind"],
        )
        counts: dict[tuple[str, str], int] = {}
        latest: dict[str, float] = {}
        running: dict[str, float] = {}
        for kind, status, percent in services.jobs.known():
            counts[(kind, status)] = counts.get((kind, status), 0) + 1
            latest[kind] = percent / 100
            if status == "running":
                running[kind] = percent / 100
        for (kind, status), n in sorted(counts.items()):
            jobs.add_metric([kind, status], n)
        for kind in sorted(latest):
            progress.add_metric([kind], running.get(kind, latest[kind]))
        yield jobs
        yield progress

    def _store_families(self, services: Any) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            f"{PREFIX}store_up", "1 ok, 0.5 degraded, 0 unavailable", labels=["store", "backend"]
        )
        for part in services.health():
            up.add_metric([part.name, part.backend], STATE_VALUE.get(part.state, 0.0))
        yield up
        try:
            yield self._queue(services)
        except MemoryServiceError as exc:
            logger.debug("metrics: queue depth not read: %s", exc.message)
        try:
            yield self._memories(services)
        except MemoryServiceError as exc:
            logger.debug("metrics: memory counts not read: %s", exc.message)

    @staticmethod
    def _queue(services: Any) -> Metric:
        counts = services.sync.pending()
        family = GaugeMetricFamily(
            f"{PREFIX}sync_queue_messages", "Graph-sync outbox depth", labels=["state"]
        )
        for state, key in (("pending", "pending"), ("inflight", "inflight"), ("dead", "failed")):
            family.add_metric([state], counts.get(key, 0))
        return family

    @staticmethod
    def _memories(services: Any) -> Metric:
        vectors = services.stores.vectors
        family = GaugeMetricFamily(
            f"{PREFIX}memories", "Memory records by type and status", labels=["type", "status"]
        )
        for status in MemoryStatus:
            for kind in MemoryType:
                flt = PayloadFilter(equals={"status": status.value, "type": kind.value})
                family.add_metric([kind.value, status.value], vectors.count(MEMORIES, flt))
        return family
