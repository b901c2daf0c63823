"""The Grafana dashboard queries only what memory-service exports.

Two checks: the dashboard is valid Grafana JSON wired to the provisioned data source, and every
metric and label its PromQL names is exported by a real server (started over stdio as a client
starts it, driven with tool calls, then scraped), also checked against the metric table in
docs/observability.md. A renamed metric or label fails here instead of leaving a panel empty.
"""

from __future__ import annotations

import re
import socket
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import PROFILE, REPO, SERVERS, require_model, server_env
from tests.deploy import promql
from tests.e2e.conftest import call_error, call_ok

DASHBOARD = REPO / "deploy" / "grafana" / "dashboards" / "memory-service.json"
DATASOURCES = REPO / "deploy" / "grafana" / "provisioning" / "datasources"
METRICS_DOC = REPO / "docs" / "observability.md"
PREFIX = "memory_service_"
SCRAPE_DEADLINE_SECONDS = 180.0


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    return promql.load(DASHBOARD)


def _datasource_uid() -> str:
    sources = [
        s for f in sorted(DATASOURCES.glob("*.yml")) for s in yaml.safe_load(f.read_text())["datasources"]
    ]
    assert len(sources) == 1
    return str(sources[0]["uid"])


def _queries(dashboard: dict[str, Any]) -> list[tuple[str, dict[str, Any], promql.Query]]:
    return [(p["title"], t, promql.parse(t["expr"])) for p, t in promql.targets(dashboard)]


def test_dashboard_is_grafana_json_on_the_provisioned_datasource(dashboard: dict[str, Any]) -> None:
    uid = _datasource_uid()
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    ids = [p["id"] for p in promql.panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    queried = 0
    for panel in promql.panels(dashboard):
        grid = panel["gridPos"]
        assert set(grid) == {"x", "y", "w", "h"} and grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["title"] and panel["targets"], f"{panel['title']}: a panel without a query"
        assert panel["datasource"] == {"type": "prometheus", "uid": uid}, panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == uid and target["expr"].strip(), panel["title"]
            queried += 1
    assert queried >= 10


def test_dashboard_has_the_panels_the_issue_asks_for(dashboard: dict[str, Any]) -> None:
    """Tool rate, error rate, p50/p95 per tool, store latency, queue depth, cache hit rate, memory counts."""
    exprs = [re.sub(r"\s+", " ", t["expr"]) for _, t in promql.targets(dashboard)]

    def some(*parts: str) -> bool:
        return any(all(p in e for p in parts) for e in exprs)

    assert some("by (tool)", "rate(memory_service_tool_calls_total[")
    assert some('memory_service_tool_calls_total{outcome="error"}', "by (tool, code)")
    for q in ("0.5", "0.95"):
        assert some(
            f"histogram_quantile({q}, sum by (tool, le)", "memory_service_tool_duration_seconds_bucket"
        )
    assert some(
        "histogram_quantile(0.95", "by (store, operation, le)", "store_operation_duration_seconds_bucket"
    )
    assert some("by (state)", "memory_service_sync_queue_messages")
    assert some('memory_service_cache_requests_total{result="hit"}') and some(
        "memory_service_cache_hit_ratio"
    )
    assert some("by (type)", "memory_service_memories")


def test_every_query_reads_and_stays_within_its_labels(dashboard: dict[str, Any]) -> None:
    """Legends name labels the query keeps: grouped labels after an aggregation."""
    for title, target, query in _queries(dashboard):
        assert query.metrics, f"{title}: {target['expr']} names no metric"
        for name in query.metrics:
            assert name.startswith(PREFIX), f"{title}: {name} is not memory-service's"
        legend = promql.legend_labels(target)
        aggregated = query.functions & {"sum", "max", "min", "avg", "count", "topk", "bottomk"}
        if aggregated:
            assert legend <= query.grouping, f"{title}: legend {legend} outside by {query.grouping}"


def _documented() -> dict[str, tuple[str, set[str]]]:
    """Queryable series name -> (family, labels), from the metric table of docs/observability.md."""
    out: dict[str, tuple[str, set[str]]] = {}
    for line in METRICS_DOC.read_text().splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith(PREFIX):
            continue
        name, kind = cells[0], cells[1].split()[0]
        labels = {x.strip().strip("`") for x in re.sub(r"\([^)]*\)", "", cells[2]).split(",")} - {
            "-",
            "",
            "none",
        }
        for series in promql.queryable(name, kind):
            out[series] = (name, labels | ({"le"} if series.endswith("_bucket") else set()))
    return out


def test_dashboard_queries_only_documented_metrics_and_labels(dashboard: dict[str, Any]) -> None:
    documented = _documented()
    assert len({family for family, _ in documented.values()}) >= 10, (
        "no metric table in docs/observability.md"
    )
    for title, _, query in _queries(dashboard):
        labels_in_query = set(query.grouping)
        for name, matchers in query.metrics.items():
            assert name in documented, f"{title}: {name} is not in docs/observability.md"
            assert matchers <= documented[name][1], (
                f"{title}: {name} has no label {matchers - documented[name][1]}"
            )
        known = set().union(*(documented[n][1] for n in query.metrics))
        assert labels_in_query <= known, f"{title}: grouping by {labels_in_query - known}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        return response.read().decode()


def _exported(text: str) -> tuple[dict[str, str], dict[str, list[dict[str, str]]]]:
    """(queryable series name -> family, series name -> label sets of its samples) of a scrape."""
    names: dict[str, str] = {}
    samples: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(text):
        for series in promql.queryable(family.name, family.type):
            names[series] = family.name
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(dict(sample.labels))
    return names, samples


@pytest.mark.anyio
@pytest.mark.e2e
async def test_every_dashboard_metric_is_exported_by_a_running_server(
    tmp_path: Path, dashboard: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    """Start the server as Claude Code does (stdio), call tools, scrape /metrics, compare."""
    if PROFILE == "server":  # as tests/e2e's session fixture does: Neo4j and Redis for the server
        SERVERS["neo4j"] = request.getfixturevalue("neo4j_uri")
        SERVERS["redis"] = request.getfixturevalue("redis_url")
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "billing.py").write_text(
        '"""Billing."""\n\n\ndef charge(amount: int) -> int:\n    """Charge an order."""\n    return amount\n'
    )
    port = _free_port()
    env = server_env(tmp_path / "data", model=require_model())
    env.update(
        {
            "MEMORY_PROJECT_ROOT": str(project),
            "MEMORY_SERVER__HTTP_ENABLED": "true",
            "MEMORY_SERVER__HTTP_HOST": "127.0.0.1",
            "MEMORY_SERVER__HTTP_PORT": str(port),
        }
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO)
    )
    wanted: dict[str, set[str]] = {}  # metric -> every label its matchers use, over all queries
    for _, _, query in _queries(dashboard):
        for name, labels in query.metrics.items():
            wanted.setdefault(name, set()).update(labels)
    async with Client(params) as client:
        first = await call_ok(
            client, "memory_add", {"type": "design", "content": "Charges go through billing."}
        )
        await call_ok(
            client,
            "memory_add",
            {
                "type": "requirements",
                "content": "Every charge is audited.",
                "relationships": [{"type": "RELATES_TO", "target_id": first["memory_id"]}],
            },
        )
        job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
        assert job["job"]["status"] == "completed", job
        await call_error(client, "memory_get", {"memory_id": "no-such-memory"})
        # Until the model has loaded, searches are lexical; keep searching (the same query twice,
        # for a cache hit) and scraping until every series the dashboard reads is there.
        deadline = time.monotonic() + SCRAPE_DEADLINE_SECONDS
        while True:
            for _ in range(2):
                await call_ok(client, "memory_search", {"query": "how are charges audited?"})
            names, samples = _exported(_scrape(f"http://127.0.0.1:{port}/metrics"))
            missing = {n for n in wanted if n not in samples}
            if not missing or time.monotonic() > deadline:
                break
            await anyio.sleep(2)
    undeclared = sorted(n for n in wanted if n not in names)
    assert not undeclared, f"the dashboard queries metrics the server does not export: {undeclared}"
    assert not missing, f"exported but without samples after tool calls, an index job and searches: {missing}"
    for name, labels in wanted.items():
        for sample_labels in samples.get(name, []):
            assert labels <= set(sample_labels), f"{name} samples lack labels {labels - set(sample_labels)}"
    for _, _, query in _queries(dashboard):
        if all(samples.get(n) for n in query.metrics):
            present = {label for n in query.metrics for s in samples[n] for label in s}
            assert query.grouping <= present, f"{query.expr}: grouping by labels the samples lack"
    assert any(s.get("outcome") == "error" for s in samples["memory_service_tool_calls_total"])
