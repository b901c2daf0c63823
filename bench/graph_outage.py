"""Recovery after a graph outage: N writes queued while Neo4j is down, then the time to apply them.

Starts its own Neo4j (the test harness, tests/servers/neo4j_harness.py), opens the services in
process with housekeeping on (as the server runs), stops Neo4j, writes N memories
(memory_bulk_add, 100 at a time: one graph-sync message each; ``--single``: memory_add, one
message per write), times graph calls made during the outage, starts Neo4j again on the same
port and measures how long housekeeping takes to notice it and to drain the outbox, then checks
that every memory's node is in the graph. The harness comes back with an empty graph, which
does not change what the outbox has to apply.

    .venv/bin/python -m bench.graph_outage --writes 10000 [--model-path <all-MiniLM-L6-v2-onnx>]
    (add --redis URL to queue through Redis instead of the data directory's SQLite queue)
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path
from typing import Any

from memory_service.app import open_services
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.graph.schemas import GetRelatedInput
from memory_service.core.memory.schemas import MemoryAddInput, MemoryBulkAddRequest
from memory_service.settings import Settings
from tests.servers.neo4j_harness import Neo4jHarness, launcher_command


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    with contextlib.suppress(ServiceUnavailableError):
        fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", type=int, default=10_000)
    parser.add_argument("--model-path", type=Path, default=None, help="without it: lexical-only writes")
    parser.add_argument("--redis", default=None, help="redis://host:port/0 for the outbox")
    parser.add_argument("--single", action="store_true", help="memory_add one at a time (a message each)")
    args = parser.parse_args()
    command = launcher_command()
    if command is None:
        raise SystemExit("the Neo4j harness is not built: run `make install`")
    harness = Neo4jHarness(command)
    harness.start()
    harness.pin_port()
    with tempfile.TemporaryDirectory() as tmp:
        sections: dict[str, Any] = {"graph": {"uri": harness.uri, "namespace": "outage"}}
        if args.redis:
            sections["redis"] = {"url": args.redis, "key_prefix": f"outage{int(time.time())}:"}
        settings = Settings(
            data_dir=Path(tmp) / "data",
            project="bench",
            embedding={"model_path": args.model_path or Path(tmp) / "no-model"},
            **sections,
        )
        services = open_services(settings)
        try:
            if args.model_path:
                services.stores.embedder.wait_ready(60)
            harness.stop()
            probe = GetRelatedInput(entity_id="00000000-0000-4000-8000-000000000001")
            first = _timed(lambda: services.graph.related(probe))
            later = [_timed(lambda: services.graph.related(probe)) for _ in range(20)]
            t0 = time.perf_counter()
            for b in range(0, args.writes, 100):
                body = [
                    {"type": "session", "content": f"Outage note {b + j}: cache miss {j} in region {b}."}
                    for j in range(min(100, args.writes - b))
                ]
                if args.single:
                    for one in body:
                        services.memory.add(MemoryAddInput(**one))
                else:
                    services.memory.bulk_add(MemoryBulkAddRequest(memories=body))
            write_s = time.perf_counter() - t0
            queued = services.sync.pending()
            harness.start()
            t_up = time.perf_counter()
            noticed = None
            while (left := services.sync.pending())["pending"] or left["inflight"]:
                if noticed is None and left["pending"] < queued["pending"]:
                    noticed = time.perf_counter() - t_up
                time.sleep(0.1)
            drained = time.perf_counter() - t_up
            nodes = services.stores.graph.count_nodes_by_label().get("Memory", 0)
        finally:
            services.close()
            harness.stop()
    print(f"graph call while down: first {first * 1000:.0f} ms, then max {max(later) * 1000:.1f} ms")
    print(f"{args.writes} writes during the outage in {write_s:.1f} s; queued {queued}")
    print(f"after Neo4j was back: first messages applied within {noticed or 0:.1f} s, all in {drained:.1f} s")
    print(f"Memory nodes in the graph: {nodes} (expected {args.writes})")


if __name__ == "__main__":
    main()
