"""Issue #15's shared-service gaps on the default tools: restorable archive, contextual utility,
linked reads, and a read over two projects (the seed-002 profile builds on all four)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from memory_service.app import Services, open_services
from memory_service.core.errors import ConflictError, NotFoundError
from memory_service.core.memory.schemas import MemoryAddInput
from memory_service.core.models import MemoryType
from memory_service.core.ports import AuditQuery
from memory_service.core.records import MEMORY_LABEL
from memory_service.core.scopes import GLOBAL_PROJECT, ScopeInput
from memory_service.core.search.schemas import MemorySearchInput
from tests.conftest import require_model
from tests.e2e.conftest import call_error, call_ok, make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def _add(client: Client, kind: str, content: str, **extra: Any) -> str:
    out = await call_ok(client, "memory_add", {"type": kind, "content": content, **extra})
    return str(out["memory_id"])


async def _search(client: Client, query: str, **extra: Any) -> list[dict[str, Any]]:
    found = await call_ok(client, "memory_search", {"query": query, "limit": 20, **extra})
    return list(found["results"])


async def _ids(client: Client, query: str, **extra: Any) -> list[str]:
    return [r["memory_id"] for r in await _search(client, query, **extra)]


async def _operations(client: Client, memory_id: str) -> list[str]:
    audit = await call_ok(client, "memory_audit", {"memory_id": memory_id})
    return [e["operation"] for e in audit["events"]]


# --------------------------------------------------------------------------- archive (memory_update)


async def test_archive_hides_a_memory_and_restore_brings_it_back(client: Client) -> None:
    query = "nightly ledger export parquet cold storage"
    target = await _add(client, "design", "The nightly ledger export writes parquet files to cold storage.")
    citing = await _add(
        client,
        "code_pattern",
        "Ledger export job: stream rows, never load the whole ledger.",
        relationships=[{"type": "IMPLEMENTS", "target_id": target}],
    )
    assert target in await _ids(client, query)

    out = await call_ok(client, "memory_update", {"memory_id": target, "archived": True})
    assert out == {"memory_id": target, "status": "updated", "updated_fields": ["status"]}
    for mode in ("auto", "fast", "deep"):  # hidden from every read, like a deleted memory
        assert target not in await _ids(client, query, mode=mode)
    assert target not in await _ids(client, query, read="ambient")
    explained = await call_ok(client, "memory_explain", {"ids": [target]})
    assert explained["missing_ids"] == [target]
    got = await call_ok(client, "memory_get", {"memory_id": target, "include_relationships": True})
    assert got["memory"]["status"] == "archived" and got["memory"]["version"] == 2
    assert {(r["type"], r["other_id"]) for r in got["relationships"]} == {("IMPLEMENTS", citing)}  # kept

    again = await call_ok(client, "memory_update", {"memory_id": target, "archived": True})
    assert again["updated_fields"] == []  # unchanged: nothing written
    edit = await call_error(client, "memory_update", {"memory_id": target, "content": "Changed."})
    assert edit["code"] == "NF_MEMORY" and edit["details"]["status"] == "archived"
    assert "archived=false" in edit["suggestion"]
    problem = await _add(client, "problem", "Ledger exports sometimes miss the last partition.")
    vote = await call_error(
        client, "memory_feedback", {"memory_id": target, "problem_id": problem, "vote": 1}
    )
    assert vote["code"] == "NF_MEMORY"
    assert (await call_ok(client, "memory_get", {"memory_id": target}))["memory"]["version"] == 2

    back = await call_ok(
        client, "memory_update", {"memory_id": target, "archived": False, "expected_version": 2}
    )
    assert back["updated_fields"] == ["status"]
    assert target in await _ids(client, query)  # the vectors stayed: found again at once
    got = await call_ok(client, "memory_get", {"memory_id": target})
    assert got["memory"]["status"] == "active" and got["memory"]["version"] == 3
    same = await call_ok(client, "memory_update", {"memory_id": target, "archived": False})
    assert same["updated_fields"] == []
    assert await _operations(client, target) == ["restore", "archive", "create"]  # newest first


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"memory_id": "SELF", "archived": "maybe"}, "VAL_INVALID_FIELD_TYPE", "archived"),
        ({"memory_id": "SELF", "archived": True, "content": "x"}, "VAL_INVALID_VALUE", "arguments"),
        ({"memory_id": "SELF", "archived": False, "metadata": {}}, "VAL_INVALID_VALUE", "arguments"),
        ({"memory_id": "SELF", "archived": True, "expected_version": 7}, "CON_VERSION_MISMATCH",
         "expected_version"),
        ({"memory_id": "abc", "archived": True}, "VAL_INVALID_UUID", "memory_id"),
        ({"memory_id": "UNKNOWN", "archived": True}, "NF_MEMORY", "memory_id"),
        ({"memory_id": "DELETED", "archived": True}, "NF_MEMORY", "memory_id"),
        ({"memory_id": "DELETED", "archived": False}, "NF_MEMORY", "memory_id"),
    ],
)  # fmt: skip
async def test_archive_bad_inputs_change_nothing(
    client: Client, args: dict[str, Any], code: str, field: str
) -> None:
    me = await _add(client, "design", f"Design kept as it is for archive case {code} {field} {len(args)}.")
    deleted = await _add(client, "design", f"Design deleted before archive case {code} {field} {len(args)}.")
    await call_ok(client, "memory_delete", {"memory_id": deleted})
    names = {"SELF": me, "UNKNOWN": str(uuid.uuid4()), "DELETED": deleted}
    resolved = {k: names.get(v, v) if isinstance(v, str) else v for k, v in args.items()}
    error = await call_error(client, "memory_update", resolved)
    assert error["code"] == code, error
    assert error["details"]["field"] == field
    got = await call_ok(client, "memory_get", {"memory_id": me})
    assert got["memory"]["status"] == "active" and got["memory"]["version"] == 1
    assert await _operations(client, me) == ["create"]


# --------------------------------------------------------------------------- contextual utility


async def test_votes_count_for_the_problem_the_read_is_for(client: Client) -> None:
    slow = await _add(client, "problem", "Checkout requests time out while the payment gateway is slow.")
    bad_rows = await _add(client, "problem", "The nightly supplier import aborts on malformed CSV rows.")
    text = "Wrap the flaky upstream call in retries with exponential backoff and a circuit breaker"
    one = await _add(client, "solution", f"{text} (variant one).", metadata={"problem_id": slow})
    two = await _add(client, "solution", f"{text} (variant two).", metadata={"problem_id": slow})
    for memory, problem, vote in ((one, slow, 1), (one, bad_rows, -1), (two, slow, -1), (two, bad_rows, 1)):
        out = await call_ok(
            client, "memory_feedback", {"memory_id": memory, "problem_id": problem, "vote": vote}
        )
    assert (out["votes_count"], out["mean_vote"]) == (1, 1.0)  # two's votes for bad_rows
    assert (out["overall_votes_count"], out["overall_mean_vote"]) == (2, 0.0)

    async def lead(query: str, **extra: Any) -> float:
        """How far `one` ranks ahead of `two` (its score minus two's)."""
        scores = {r["memory_id"]: r["relevance_score"] for r in await _search(client, query, **extra)}
        return float(scores[one] - scores[two])

    # The two texts' relevance differs a little, and by how much depends on how fusion breaks
    # lexical ties: compare one query under two contexts (same relevance), so only votes count.
    # Swapping the context swaps each utility from +1 to -1: the lead moves by 4 x the weight (0.05).
    query = "retries with exponential backoff and a circuit breaker"
    for_slow = await lead(query, problem_id=slow, memory_types=["solution"])
    for_rows = await lead(query, problem_id=bad_rows, memory_types=["solution"])
    assert for_slow - for_rows == pytest.approx(0.2, abs=0.02)
    # No problem named: the best-ranked problem among the candidates is the context.
    slow_query = f"checkout requests time out, payment gateway slow: {query}"
    assert await lead(slow_query) - await lead(slow_query, problem_id=bad_rows) == pytest.approx(
        0.2, abs=0.02
    )
    rows_query = f"supplier import aborts on malformed CSV rows: {query}"
    assert await lead(rows_query, problem_id=slow) - await lead(rows_query) == pytest.approx(0.2, abs=0.02)
    explained = await call_ok(client, "memory_explain", {"ids": [one]})  # no context: every vote
    assert explained["items"][0]["score"]["components"]["utility"] == 0.0


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({"problem_id": "7"}, "VAL_INVALID_UUID", "problem_id"),
        ({"problem_id": "UNKNOWN"}, "NF_MEMORY", "problem_id"),
        ({"problem_id": "NOT_PROBLEM"}, "VAL_PROBLEM_LINK_INVALID", "problem_id"),
        ({"include_problem_links": "sometimes"}, "VAL_INVALID_FIELD_TYPE", "include_problem_links"),
        ({"include_fact_update_links": [True]}, "VAL_INVALID_FIELD_TYPE", "include_fact_update_links"),
    ],
)
async def test_search_bad_inputs(client: Client, args: dict[str, Any], code: str, field: str) -> None:
    names = {
        "UNKNOWN": str(uuid.uuid4()),
        "NOT_PROBLEM": await _add(client, "design", f"Not a problem {code}."),
    }
    resolved = {k: names.get(v, v) if isinstance(v, str) else v for k, v in args.items()}
    error = await call_error(client, "memory_search", {"query": "anything", **resolved})
    assert error["code"] == code, error
    assert error["details"]["field"] == field


# --------------------------------------------------------------------------- linked reads


@pytest.fixture(scope="module")
async def problem_links(client: Client) -> dict[str, str]:
    """A problem whose solution and failed tactic share no word with the problem's wording."""
    problem = await _add(client, "problem", "Zebrafish telemetry ingestion stalls near ninety-nine percent.")
    fix = await _add(
        client, "solution", "Split the work into batches of 512 documents.", metadata={"problem_id": problem}
    )
    dead_end = await _add(
        client,
        "failed_tactic",
        "Raising the timeout to one hour did not help.",
        metadata={"problem_id": problem},
    )
    return {"problem": problem, "fix": fix, "dead_end": dead_end}


async def test_problem_links_follow_the_problem(client: Client, problem_links: dict[str, str]) -> None:
    problem, links = problem_links["problem"], {problem_links["fix"], problem_links["dead_end"]}
    query = "zebrafish telemetry ingestion stalls"
    plain = await _ids(client, query, mode="fast")
    assert problem in plain and not links & set(plain)  # lexical only: the links share no word
    linked = await _search(client, query, mode="fast", include_problem_links=True)
    ids = [r["memory_id"] for r in linked]
    at = ids.index(problem)
    assert set(ids[at + 1 : at + 3]) == links
    assert {r["route_used"] for r in linked[at + 1 : at + 3]} == {"graph"}
    two = await _ids(client, query, mode="fast", include_problem_links=True, limit=2)
    assert two[0] == problem and len(two) == 2 and two[1] in links  # links count toward the limit
    # Semantic search: links are listed even below min_similarity; a fix brings its problem back.
    strict = await _ids(
        client, "Zebrafish telemetry ingestion stalls near ninety-nine percent.", min_similarity=0.8
    )
    assert strict == [problem]
    strict_linked = await _ids(
        client,
        "Zebrafish telemetry ingestion stalls near ninety-nine percent.",
        min_similarity=0.8,
        include_problem_links=True,
    )
    assert strict_linked[0] == problem and set(strict_linked[1:]) == links
    back = await _ids(
        client, "split the work into batches of 512 documents", mode="fast", include_problem_links=True
    )
    assert back[: back.index(problem_links["fix"]) + 2][-1] == problem


async def test_ambient_reads_add_links_unless_told_not_to(
    client: Client, problem_links: dict[str, str]
) -> None:
    links = {problem_links["fix"], problem_links["dead_end"]}
    query = {"query": "zebrafish telemetry ingestion stalls", "mode": "fast", "read": "ambient"}
    ambient = await _ids(client, **query)  # today's behaviour: linked memories join an ambient read
    assert links <= set(ambient)
    assert not links & set(await _ids(client, **query, include_problem_links=False))
    assert links <= set(await _ids(client, **query, include_fact_update_links=False))  # other family only


async def test_fact_update_links_show_the_chain(client: Client) -> None:
    old = await _add(client, "fact", "The quokka gateway listens on port 8080.")
    chain = await call_ok(
        client,
        "memory_supersede",
        {
            "old_fact_id": old,
            "new_fact": {"content": "The quokka gateway listens on port 9090."},
            "change": {"content": "Infrastructure moved the listener after the firewall review."},
        },
    )
    new, change = chain["new_fact_id"], chain["change_id"]
    query = "quokka gateway port 9090"
    plain = await _ids(client, query, mode="fast")
    assert new in plain and old not in plain and change not in plain
    linked = await _search(client, query, mode="fast", include_fact_update_links=True)
    ids = [r["memory_id"] for r in linked]
    at = ids.index(new)
    assert set(ids[at + 1 : at + 3]) == {old, change}  # the superseded fact too: the chain is the point
    by_id = {r["memory_id"]: r for r in linked}
    assert by_id[old]["metadata"]["superseded_by"] == new and by_id[old]["route_used"] == "graph"
    assert old not in await _ids(client, query, mode="fast", include_problem_links=True)  # other family


# --------------------------------------------------------------------------- service level


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    opened = open_services(
        make_settings(tmp_path_factory.mktemp("archive"), require_model()), housekeeping=False
    )
    try:
        yield opened
    finally:
        opened.close()


def _store(services: Services, content: str, project: str | None = None) -> str:
    scope = ScopeInput(project=project, branch=None) if project else None
    return services.memory.add(MemoryAddInput(type=MemoryType.DESIGN, content=content, scope=scope)).memory_id


def _events(services: Services, memory_id: str) -> list[tuple[str, Any]]:
    found, _ = services.stores.audit.query(AuditQuery(entity_id=memory_id))
    return [(e.operation, e.details.get("rationale")) for e in found]  # newest first


def test_archive_service_dry_runs_and_records_its_rationale(services: Services) -> None:
    mid = _store(services, "Payment webhooks are verified with an HMAC over the raw body.")
    archive = services.archive
    dry = archive.set_archived(mid, True, rationale="obsolete", dry_run=True)
    assert (dry.status, dry.archived, dry.previous_archived) == ("dry_run", True, False)
    assert services.memory.load(mid).version == 1 and [op for op, _ in _events(services, mid)] == ["create"]

    done = archive.set_archived(mid, True, rationale="replaced by the signing service")
    assert (done.status, done.archived, done.previous_archived) == ("archived", True, False)
    record = services.memory.load(mid, archived_ok=True)
    assert record.status == "archived" and record.version == 2
    with pytest.raises(NotFoundError):
        services.memory.load(mid)
    node = services.stores.graph.find_nodes([MEMORY_LABEL], mid)[0]
    assert node.properties.get("archived") is True
    assert archive.set_archived(mid, True).status == "unchanged"
    assert archive.set_archived(mid, False, dry_run=True).status == "dry_run"
    with pytest.raises(ConflictError):
        archive.set_archived(mid, False, expected_version=1)
    assert services.memory.load(mid, archived_ok=True).status == "archived"

    back = archive.set_archived(mid, False, rationale="still in use")
    assert (back.status, back.archived, back.previous_archived) == ("restored", False, True)
    assert "archived" not in services.stores.graph.find_nodes([MEMORY_LABEL], mid)[0].properties
    assert _events(services, mid) == [
        ("restore", "still in use"),
        ("archive", "replaced by the signing service"),
        ("create", None),
    ]
    for unknown in (str(uuid.uuid4()), _deleted(services)):
        with pytest.raises(NotFoundError):
            archive.set_archived(unknown, True, dry_run=True)


def _deleted(services: Services) -> str:
    mid = _store(services, "A design note deleted before anyone archives it.")
    services.memory.delete(mid)
    return mid


def test_a_read_over_two_projects(services: Services) -> None:
    own = _store(services, "Kestrel deploys roll out region by region.")
    shared = _store(services, "Kestrel deploys never run on Fridays.", project=GLOBAL_PROJECT)
    req = MemorySearchInput(query="kestrel deploys", limit=10)
    alone = [r.memory_id for r in services.search.search(req).results]
    assert own in alone and shared not in alone
    both = [r.memory_id for r in services.search.search(req, extra_projects=[GLOBAL_PROJECT]).results]
    assert {own, shared} <= set(both)
    fast = req.model_copy(update={"mode": "fast"})
    assert shared not in [r.memory_id for r in services.search.search(fast).results]
    cached = services.search.search(fast, extra_projects=[GLOBAL_PROJECT])  # not the one-project cache entry
    assert shared in [r.memory_id for r in cached.results]
