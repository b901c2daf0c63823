"""A deterministic generator of realistic coding-agent memories and the questions an agent asks.

Not random bytes: sentences built from a vocabulary of services, components, libraries, failure
modes and decisions, spread over the eight memory types with type-specific metadata, so that
embeddings, filters and ranking behave as they would on a real project's memory.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

SERVICES = [
    "payment",
    "billing",
    "checkout",
    "inventory",
    "search",
    "auth",
    "notification",
    "shipping",
    "reporting",
    "ingest",
    "gateway",
    "catalog",
    "pricing",
    "recommendation",
    "audit",
    "export",
    "scheduler",
    "webhook",
    "session",
    "analytics",
    "media",
    "email",
    "fraud",
    "ledger",
]
COMPONENTS = [
    "API handler",
    "retry worker",
    "cache layer",
    "database migration",
    "rate limiter",
    "queue consumer",
    "config loader",
    "HTTP client",
    "serializer",
    "feature flag",
    "health check",
    "batch job",
    "connection pool",
    "circuit breaker",
    "event publisher",
    "schema validator",
    "token refresher",
]
TECH = [
    "PostgreSQL",
    "Redis",
    "Kafka",
    "gRPC",
    "FastAPI",
    "SQLAlchemy",
    "Celery",
    "S3",
    "Elasticsearch",
    "Kubernetes",
    "Terraform",
    "pydantic",
    "asyncio",
    "OpenTelemetry",
    "Prometheus",
    "nginx",
    "Docker",
]
PROBLEMS = [
    "times out under load",
    "leaks connections",
    "returns stale data",
    "double-charges on retry",
    "drops messages during deploys",
    "deadlocks on concurrent updates",
    "exceeds memory limits",
    "fails on unicode input",
    "logs secrets",
    "is slow on cold start",
    "loses ordering",
    "retries forever",
    "breaks on daylight saving changes",
    "rejects valid tokens after rotation",
]
FIXES = [
    "added exponential backoff with jitter",
    "introduced an idempotency key",
    "moved to a bounded pool",
    "switched to optimistic locking",
    "added a dead-letter queue",
    "cached the lookup for 5 minutes",
    "normalised timestamps to UTC",
    "streamed the response instead of buffering",
    "pinned the driver",
    "added a circuit breaker",
    "validated input at the boundary",
    "batched the writes",
]
PRIORITIES = ["Critical", "High", "Medium", "Low"]
WHY = [
    "to keep p95 under 200 ms",
    "because audits require it",
    "to survive partial outages",
    "so that retries are safe",
    "to cut infrastructure cost",
    "to simplify on-call",
]


def _requirement(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    svc, comp = r.choice(SERVICES), r.choice(COMPONENTS)
    text = (
        f"The {svc} service shall ensure its {comp} {r.choice(['never', 'must not'])} "
        f"{r.choice(PROBLEMS)}; {r.choice(WHY)}."
    )
    return (
        "requirements",
        text,
        {
            "requirement_id": f"REQ-{svc.upper()}-{i:05d}",
            "title": f"{svc} {comp} reliability",
            "priority": r.choice(PRIORITIES),
        },
    )


def _design(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    svc, tech, alt = r.choice(SERVICES), r.choice(TECH), r.choice(TECH)
    text = (
        f"ADR: the {svc} service uses {tech} for its {r.choice(COMPONENTS)} instead of {alt} "
        f"{r.choice(WHY)}. Consequence: we {r.choice(FIXES)}."
    )
    return "design", text, {"design_type": "ADR", "title": f"Use {tech} in {svc}", "status": "accepted"}


def _pattern(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    comp, tech = r.choice(COMPONENTS), r.choice(TECH)
    text = (
        f"Pattern: wrap every {comp} call to {tech} in a helper that {r.choice(FIXES)}; "
        f"see the {r.choice(SERVICES)} service for the reference implementation."
    )
    return "code_pattern", text, {"pattern_name": f"{comp} wrapper", "language": "python"}


def _component(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    svc, comp = r.choice(SERVICES), r.choice(COMPONENTS)
    text = (
        f"The {svc} {comp} lives in {svc}/{comp.replace(' ', '_').lower()}.py, depends on "
        f"{r.choice(TECH)} and {r.choice(TECH)}, and is owned by the {r.choice(SERVICES)} team."
    )
    return "component", text, {"name": f"{svc}-{comp}", "file_path": f"{svc}/{comp.replace(' ', '_')}.py"}


def _function(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    svc, verb = r.choice(SERVICES), r.choice(["load", "save", "sync", "retry", "validate", "render"])
    name = f"{verb}_{svc}_{r.choice(['record', 'batch', 'event', 'state'])}"
    text = f"def {name}(ctx, payload): {verb}s a {svc} item using {r.choice(TECH)}; {r.choice(FIXES)}."
    return "function", text, {"name": name, "signature": f"def {name}(ctx, payload)", "language": "python"}


def _test(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    svc = r.choice(SERVICES)
    status = r.choice(["passed", "failed", "flaky"])
    text = (
        f"test_{svc}_{i % 97} {status}: the {r.choice(COMPONENTS)} {r.choice(PROBLEMS)} when "
        f"{r.choice(TECH)} is slow; fixed by a change that {r.choice(FIXES)}."
    )
    return "test_history", text, {"test_name": f"test_{svc}_{i % 97}", "status": status}


def _session(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    svc = r.choice(SERVICES)
    text = (
        f"Session {i}: debugged why the {svc} {r.choice(COMPONENTS)} {r.choice(PROBLEMS)}. "
        f"Root cause was {r.choice(TECH)} configuration; we {r.choice(FIXES)}."
    )
    return "session", text, {"session_id": f"s-{i}"}


def _preference(r: random.Random, i: int) -> tuple[str, str, dict[str, Any]]:
    tech = r.choice(TECH)
    other, comp = r.choice(TECH), r.choice(COMPONENTS)
    text = f"Preference: prefer {tech} over {other} for new {comp} code {r.choice(WHY)}."
    return "user_preference", text, {"key": f"prefer-{tech.lower()}", "category": "tooling"}


MAKERS = [_requirement, _design, _pattern, _component, _function, _test, _session, _preference]


def memories(n: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    r = random.Random(seed)
    for i in range(n):
        kind, text, meta = MAKERS[i % len(MAKERS)](r, i)
        yield {"type": kind, "content": text, "metadata": meta}


QUESTION_TEMPLATES = [
    "why does the {svc} {comp} {problem}?",
    "how did we fix the {svc} service when it {problem}",
    "which database does {svc} use for its {comp}",
    "what is our pattern for calling {tech}",
    "decision about {tech} in the {svc} service",
    "requirements for {svc} {comp} reliability",
    "tests failing because {tech} is slow",
    "do we prefer {tech} for new code",
]


def queries(n: int, seed: int = 11) -> list[str]:
    r = random.Random(seed)
    return [
        r.choice(QUESTION_TEMPLATES).format(
            svc=r.choice(SERVICES), comp=r.choice(COMPONENTS), problem=r.choice(PROBLEMS), tech=r.choice(TECH)
        )
        for _ in range(n)
    ]


def distinct_queries(n: int, source: Callable[[int], list[str]] | None = None) -> list[str]:
    """The first ``n`` distinct questions of the generator (its draws are a stream:
    ``queries(2 * k)`` starts with ``queries(k)``)."""
    source = source or queries
    found: dict[str, None] = {}
    pool = n
    while len(found) < n:
        pool *= 2
        more = dict.fromkeys(source(pool))
        if len(more) == len(found):
            raise ValueError(f"the generator has only {len(found)} distinct questions, not {n}")
        found = more
    return list(found)[:n]
