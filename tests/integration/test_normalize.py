"""normalize_memory on real stores: each problem planted directly in the engines, then fixed, with
nothing lost; a dry run changes nothing; a second run finds nothing to do.

Runs on the embedded stores, and on Neo4j + Redis + qdrant-client with MEMORY_TEST_PROFILE=server.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_service.app import Services
from memory_service.core.code.schemas import IndexFileInput
from memory_service.core.maintenance.normalize.schemas import (
    NormalizeMemoryInput,
    NormalizeOptions,
    NormalizeStatusInput,
    NormalizeStatusOutput,
)
from memory_service.core.memory.feedback_schemas import MemoryFeedbackInput, MemorySupersedeInput, NewMemory
from memory_service.core.memory.schemas import MemoryAddInput, RelationshipInput
from memory_service.core.models import content_hash
from memory_service.core.ports import GraphEdge, GraphNode, VectorPoint
from memory_service.core.records import MEMORIES, MEMORY_LABEL, from_payload, to_payload
from memory_service.settings import EmbeddingSettings, Settings
from tests.conftest import PROFILE, SERVERS, profile_settings, require_model
from tests.integration.conftest import opened_services

NEAR_A = "The billing service retries failed payments three times with exponential backoff."
NEAR_B = "The billing service retries failed payments 3 times, using exponential backoff."
EXACT = "Orders are stored in PostgreSQL with one schema per tenant."


@pytest.fixture
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    if PROFILE == "server":
        SERVERS["neo4j"] = request.getfixturevalue("neo4j_uri")
        SERVERS["redis"] = request.getfixturevalue("redis_url")
    (tmp_path / "shop.py").write_text("def charge(amount):\n    return amount * 2\n")
    settings = Settings(
        data_dir=tmp_path / "data",
        project_root=tmp_path,
        project="normalize",
        embedding=EmbeddingSettings(model_path=require_model()),
        **profile_settings(tmp_path / "data"),
    )
    with opened_services(settings) as opened:
        yield opened


def add(s: Services, kind: str, content: str, meta: dict[str, Any] | None = None, rels: Any = ()) -> str:
    relationships = [RelationshipInput(type=t, target_id=i) for t, i in rels]
    req = MemoryAddInput(type=kind, content=content, metadata=meta, relationships=relationships or None)
    return s.memory.add(req, dedupe=False).memory_id  # planted duplicates, as older stores hold


def normalize(s: Services, **options: Any) -> NormalizeStatusOutput:
    started = s.normalize.start(NormalizeMemoryInput(options=NormalizeOptions(**options)))
    assert started.status == "started" and started.estimated_duration_minutes >= 1
    assert s.jobs.wait(started.job_id, 300)
    status = s.normalize.status(NormalizeStatusInput(job_id=started.job_id))
    assert status.status == "completed", status.error
    assert status.progress == 100 and status.phase == "done" and status.estimated_remaining_seconds == 0
    return status


def record(s: Services, memory_id: str) -> Any:
    return from_payload(s.stores.vectors.retrieve(MEMORIES, [memory_id])[0].payload)


def snapshot(s: Services) -> tuple[Any, ...]:
    """Everything normalize may change: payloads, context pairs, Memory/code nodes and their edges."""
    points, _ = s.stores.vectors.scroll(MEMORIES, None, limit=1000)
    ids = sorted(p.id for p in points)
    graph = s.stores.graph
    nodes = {label: sorted(graph.node_ids(label)) for label in ("Memory", "File", "Function")}
    edges = {i: sorted(map(repr, graph.edges_of(MEMORY_LABEL, i))) for i in nodes["Memory"]}
    return (
        sorted(map(repr, (p.payload for p in points))),
        s.stores.vectors.context_ids(MEMORIES, ids),
        nodes,
        edges,
    )


def plant(s: Services) -> dict[str, str]:
    """One of each problem, planted straight into the stores."""
    ids: dict[str, str] = {}
    s.index.index_file(IndexFileInput(file_path="shop.py"))
    ids["req"] = add(s, "requirements", "Payments must be retried.", {"requirement_id": "REQ-PAY-1"})
    ids["problem"] = add(s, "problem", "Checkout times out under load.")
    # Exact duplicates: the younger one has an explicit edge, tags and a vote; another type stays apart.
    ids["exact_old"] = add(s, "design", EXACT, {"tags": ["db"]})
    ids["exact_new"] = add(s, "design", EXACT, {"tags": ["tenancy"], "rationale": "isolation"},
                           [("RELATES_TO", ids["req"])])  # fmt: skip
    ids["other_type"] = add(s, "code_pattern", EXACT)
    s.feedback.vote(MemoryFeedbackInput(memory_id=ids["exact_new"], problem_id=ids["problem"], vote=1.0))
    ids["near_a"] = add(s, "design", NEAR_A)
    ids["near_b"] = add(s, "design", NEAR_B, rels=[("DEPENDS_ON", ids["exact_old"])])
    ids["pg"] = add(s, "design", "Use PostgreSQL for the orders database.")  # cosine 0.92: not merged
    ids["mysql"] = add(s, "design", "Use MySQL for the orders database.")
    # A fact chain whose two facts say the same: history, never merged.
    ids["fact_old"] = add(s, "fact", "The API rate limit is 100 requests per minute.")
    out = s.supersede.supersede(
        MemorySupersedeInput(
            old_fact_id=ids["fact_old"],
            new_fact=NewMemory(content="The API rate limit is 100 requests per minute."),
            change=NewMemory(content="Rate limit restated."),
        )
    )
    ids["fact_new"] = out.new_fact_id or ""
    # A solution whose graph node (and SOLVES edge) vanished, as after a crash.
    ids["no_node"] = add(s, "solution", "Raise the checkout pool size.", {"problem_id": ids["problem"]})
    s.stores.graph.delete_node(MEMORY_LABEL, ids["no_node"])
    # A session turn without its context vectors.
    add(s, "session", "We talked about invoices.", {"session_id": "s1"})
    ids["turn"] = add(s, "session", "Invoices go out on the first of the month.", {"session_id": "s1"})
    point = s.stores.vectors.retrieve(MEMORIES, [ids["turn"]], with_dense=True)[0]
    s.stores.vectors.upsert(MEMORIES, [VectorPoint(point.id, point.payload, dense=point.dense)])
    # Embedded by an older model; a content hash that is not the content's.
    ids["old_model"] = add(s, "design", "Emails are sent through a queue worker.")
    ids["bad_hash"] = add(s, "design", "Feature flags live in the config service.")
    for key, field, value in (
        ("old_model", "embedding_model", "old-model-v1"),
        ("bad_hash", "content_hash", "0" * 64),
    ):
        rec = record(s, ids[key])
        setattr(rec, field, value)
        s.stores.vectors.overwrite_payload(MEMORIES, [VectorPoint(rec.id, to_payload(rec))])
    # Orphans: a node with no record at all, a deleted memory's node with a dangling edge, code
    # nodes of a file that left the index.
    ids["ghost"] = str(uuid.uuid4())
    s.stores.graph.upsert_nodes([GraphNode(MEMORY_LABEL, ids["ghost"], {"name": "ghost"})])
    s.stores.graph.upsert_edges(
        [GraphEdge("RELATES_TO", MEMORY_LABEL, ids["ghost"], MEMORY_LABEL, ids["req"])]
    )
    ids["deleted"] = add(s, "design", "A decision that was withdrawn.")
    s.memory.delete(ids["deleted"])
    s.stores.graph.upsert_edges(
        [GraphEdge("RELATES_TO", MEMORY_LABEL, ids["req"], MEMORY_LABEL, ids["deleted"])]
    )
    s.stores.graph.upsert_nodes([GraphNode("File", "gone.py"), GraphNode("Function", "gone.py::f#function")])
    # A memory citing code that then vanished from the graph.
    ids["cites"] = add(s, "design", "Charging doubles the amount.", {"code_refs": ["shop.py", "charge"]})
    s.stores.graph.delete_nodes("Function", ["shop.py::charge#function"])
    return ids


def test_normalize_fixes_each_planted_problem_and_loses_nothing(services: Services) -> None:
    s = services
    ids = plant(s)
    before = snapshot(s)

    dry = normalize(s, dry_run=True)
    assert snapshot(s) == before, "a dry run changes nothing"
    assert dry.dry_run and dry.stats.planned
    planned = {a["action"] for a in dry.stats.planned}
    assert planned >= {"merge", "reembed", "restore_graph_node", "remove_orphan_node", "flag_stale"}

    done = normalize(s)
    st = done.stats
    expected = {
        "duplicates_merged": 2, "exact_duplicates": 1, "near_duplicates": 1, "graph_nodes_repaired": 1,
        "content_hashes_fixed": 1, "context_vectors_repaired": 1, "embeddings_refreshed": 1,
        "orphans_removed": 4, "code_orphans_removed": 2, "stale_links_flagged": 1,
    }  # fmt: skip
    assert {k: getattr(st, k) for k in expected} == expected
    assert st.dangling_edges_removed == 2  # the ghost's edge and the one to the deleted memory
    # The dry run predicted the same counts.
    assert {k: getattr(dry.stats, k) for k in expected} == expected

    # Exact duplicates: the older survives with the younger's tags, metadata, edge and vote.
    survivor, absorbed = record(s, ids["exact_old"]), record(s, ids["exact_new"])
    assert survivor.is_active and not absorbed.is_active
    assert absorbed.content == EXACT and absorbed.metadata["merged_into"] == survivor.id
    assert [m["id"] for m in survivor.metadata["merged_from"]] == [ids["exact_new"]]
    assert survivor.metadata["merged_from"][0]["content_hash"] == content_hash(EXACT)
    assert set(survivor.tags) == {"db", "tenancy"} and survivor.metadata["rationale"] == "isolation"
    edges = {(e.type, e.source_id, e.target_id) for e in s.stores.graph.edges_of(MEMORY_LABEL, survivor.id)}
    assert ("RELATES_TO", survivor.id, ids["req"]) in edges
    assert ("DEPENDS_ON", ids["near_a"], survivor.id) in edges  # near_b's edge, moved to near_a
    assert ids["exact_new"] not in s.stores.graph.node_ids(MEMORY_LABEL)
    assert [r.type for r in absorbed.removed_relationships] == ["RELATES_TO"]
    assert s.stores.votes.of([survivor.id]) == {survivor.id: [1.0]}
    assert s.stores.votes.of([absorbed.id]) == {absorbed.id: [1.0]}  # kept where it was cast too
    ops = {e.operation for e in s.stores.audit.list(entity_id=absorbed.id)}
    assert "merged_into" in ops and "merge" in {
        e.operation for e in s.stores.audit.list(entity_id=survivor.id)
    }
    assert record(s, ids["other_type"]).is_active  # same content, another type: apart
    assert record(s, ids["near_a"]).metadata["merged_from"][0]["match"] == "near"
    assert not record(s, ids["near_b"]).is_active
    assert record(s, ids["pg"]).is_active and record(s, ids["mysql"]).is_active
    assert record(s, ids["fact_old"]).is_active and record(s, ids["fact_new"]).is_active

    # Repairs.
    no_node = {(e.type, e.target_id) for e in s.stores.graph.edges_of(MEMORY_LABEL, ids["no_node"])}
    assert ("SOLVES", ids["problem"]) in no_node
    assert s.stores.vectors.context_ids(MEMORIES, [ids["turn"]]) == {ids["turn"]}
    assert record(s, ids["old_model"]).embedding_model == s.stores.embedder.model_name
    fixed = record(s, ids["bad_hash"])
    assert fixed.content_hash == content_hash(fixed.content)
    # Orphans gone; the deleted memory's record is still there.
    memory_nodes = set(s.stores.graph.node_ids(MEMORY_LABEL))
    assert ids["ghost"] not in memory_nodes and ids["deleted"] not in memory_nodes
    assert record(s, ids["deleted"]).content == "A decision that was withdrawn."
    assert s.stores.graph.node_ids("File") == ["shop.py"]
    cites = record(s, ids["cites"])
    assert cites.stale is not None and cites.stale.code_ids == ["charge"]

    again = normalize(s)
    nothing = {k: v for k, v in again.stats.model_dump().items() if isinstance(v, int) and v}
    assert nothing == {"memories_processed": again.stats.memories_processed}, nothing


def test_skip_options_leave_their_phase_alone(services: Services) -> None:
    s = services
    ids = {k: add(s, "design", EXACT) for k in ("a", "b")}
    ghost = str(uuid.uuid4())
    s.stores.graph.upsert_nodes([GraphNode(MEMORY_LABEL, ghost)])
    status = normalize(s, skip_deduplication=True, skip_orphan_cleanup=True)
    assert status.stats.duplicates_merged == 0 and status.stats.orphans_removed == 0
    assert all(record(s, i).is_active for i in ids.values()) and ghost in s.stores.graph.node_ids(
        MEMORY_LABEL
    )


def test_status_refuses_unknown_and_foreign_jobs(services: Services) -> None:
    from memory_service.core.code.schemas import IndexDirectoryInput
    from memory_service.core.errors import NotFoundError, ValidationError

    with pytest.raises(NotFoundError) as info:
        services.normalize.status(NormalizeStatusInput(job_id=str(uuid.uuid4())))
    assert info.value.code == "NF_JOB"
    index_job = services.index.start_directory(IndexDirectoryInput(directory_path="."))
    with pytest.raises(NotFoundError) as info:
        services.normalize.status(NormalizeStatusInput(job_id=index_job.job_id))
    assert "not a normalization job" in info.value.message and info.value.details["kind"] == "index_directory"
    with pytest.raises(ValidationError):
        services.normalize.status(NormalizeStatusInput(job_id="not-a-uuid"))
