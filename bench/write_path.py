"""Write-path cost: memory_add latency (p50, p95) and memory_bulk_add throughput, in process.

Measures what a write costs end to end through the services (embedding, vector upsert, the
write journal, the outbox, the audit log, the graph drain), on the embedded profile unless the
MEMORY_* environment says otherwise. Used to compare the write path before and after a change:

    .venv/bin/python -m bench.write_path --adds 200 --bulk 20 --model-path <all-MiniLM-L6-v2-onnx>
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from memory_service.app import open_services
from memory_service.core.memory.schemas import MemoryAddInput, MemoryBulkAddRequest
from memory_service.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--adds", type=int, default=200, help="memory_add calls, one at a time")
    parser.add_argument("--bulk", type=int, default=20, help="memory_bulk_add calls of 100 memories")
    parser.add_argument("--model-path", type=Path, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp) / "data",
            project="bench",
            embedding={"model_path": args.model_path},  # type: ignore[arg-type]
        )
        services = open_services(settings, housekeeping=False)
        try:
            services.stores.embedder.wait_ready(60)
            lat = []
            for i in range(args.adds):
                req = MemoryAddInput(
                    type="design",
                    content=f"Design note {i}: the billing service retries webhook {i % 17} with backoff.",
                    metadata={"session_id": f"s{i % 5}"},
                )
                t0 = time.perf_counter()
                services.memory.add(req)
                lat.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            for b in range(args.bulk):
                body = [
                    {"type": "session", "content": f"Bulk {b}-{j}: cache miss {j} in region {b}."}
                    for j in range(100)
                ]
                services.memory.bulk_add(MemoryBulkAddRequest(memories=body))
            bulk_s = time.perf_counter() - t0
        finally:
            services.close()
    lat.sort()
    print(f"memory_add   p50 {statistics.median(lat):.1f} ms  p95 {lat[int(len(lat) * 0.95) - 1]:.1f} ms")
    print(f"bulk_add     {args.bulk * 100 / bulk_s:.0f} memories/s ({args.bulk} x 100 in {bulk_s:.1f} s)")


if __name__ == "__main__":
    main()
