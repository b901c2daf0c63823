"""The write journal on the real stores: what a crash leaves is finished or dropped at start.

Each test leaves the stores as a crash at one point of the write path would (an intent kept, then
only part of its store writes done), closes the services and opens them again, as a restart
does; ``open_services`` replays the journal before anything is served.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from memory_service.app import Services
from memory_service.core.code import records as cr
from memory_service.core.context_vectors import ContextPoint
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.models import MemoryRecord, Scope, content_hash, utcnow
from memory_service.core.ports import AuditEvent, GraphEdge, GraphNode, IndexedFile, SparseVector
from memory_service.core.records import GRAPH_SYNC_TOPIC, MEMORIES, MEMORY_LABEL, to_payload
from memory_service.core.write.graph_sync import op_upsert_edges, op_upsert_nodes
from memory_service.core.write.journal import code_body, records_body
from memory_service.stores.local.audit import LocalAuditLog
from memory_service.stores.local.db import LocalDB
from memory_service.stores.local.journal import LocalWriteJournal
from memory_service.stores.local.queue import LocalQueue
from tests.integration.conftest import reopened

pytestmark = pytest.mark.usefixtures("profile_servers")


def _opened(data: Path) -> AbstractContextManager[Services]:
    return reopened(data, "journal")


def _record(content: str, **metadata: object) -> MemoryRecord:
    now = utcnow()
    return MemoryRecord(
        id=str(uuid.uuid4()),
        type="session",
        content=content,
        metadata=dict(metadata),
        scope=Scope(project="journal"),
        content_hash=content_hash(content),
        created_at=now,
        updated_at=now,
    )


def _point(services: Services, record: MemoryRecord) -> ContextPoint:
    """The record's point as the writer makes it, without a context pair."""
    text = record.embedding_text()
    dense = services.stores.embedder.embed_documents([text])[0]
    sparse = services.stores.sparse.encode_documents([text])[0]
    return ContextPoint(record.id, to_payload(record), dense=dense, sparse=sparse)


def test_a_batch_cut_short_keeps_the_derived_writes_of_what_landed_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    landed, lost = _record("Landed before the crash."), _record("Never reached the vector store.")
    with _opened(data) as services:
        nodes = [GraphNode(MEMORY_LABEL, r.id, {"name": r.content}) for r in (landed, lost)]
        edges = [GraphEdge("RELATES_TO", MEMORY_LABEL, landed.id, MEMORY_LABEL, lost.id)]
        edges.append(GraphEdge("RELATES_TO", MEMORY_LABEL, landed.id, "Requirement", "REQ-1"))
        audit = [AuditEvent("create", "memory", r.id, "test") for r in (landed, lost)]
        assert services.stores.journal is not None
        services.stores.journal.begin(
            records_body([landed, lost], None, [op_upsert_nodes(nodes), op_upsert_edges(edges)], audit)
        )
        services.stores.vectors.upsert(MEMORIES, [_point(services, landed)])  # then the crash
    with _opened(data) as services:
        assert services.stores.journal is not None and services.stores.journal.pending() == []
        graph = services.stores.graph
        assert set(graph.node_ids(MEMORY_LABEL)) == {landed.id}
        assert [(e.target_label, e.target_id) for e in graph.edges_of(MEMORY_LABEL, landed.id)] == [
            ("Requirement", "REQ-1")
        ]
        assert services.stores.audit.count(landed.id) == 1 and services.stores.audit.count(lost.id) == 0
        assert services.sync.pending()["pending"] == 0


def test_a_memory_that_lost_its_context_pair_gets_it_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    earlier = _record("The turn before it, stored long ago.", session_id="s-1")
    record = _record("Thread turn written just before the crash.", session_id="s-1")
    assert earlier.created_at < record.created_at  # a thread's first memory has no pair to lose
    with _opened(data) as services:
        assert services.stores.journal is not None
        services.stores.vectors.upsert(MEMORIES, [_point(services, earlier)])
        planned = _point(services, record)
        planned.context_sparse = SparseVector(indices=[1], values=[1.0])  # the writer gave it a pair
        services.stores.journal.begin(records_body([record], [planned], [], []))
        services.stores.vectors.upsert(MEMORIES, [_point(services, record)])  # the pair never written
        assert services.stores.vectors.context_ids(MEMORIES, [record.id]) == set()
    with _opened(data) as services:
        assert services.stores.vectors.context_ids(MEMORIES, [record.id]) == {record.id}


def test_an_index_batch_cut_short_is_redone_by_the_next_pass(tmp_path: Path) -> None:
    data = tmp_path / "data"
    unit_point = cr.point_id("a.py::f")
    row = IndexedFile("a.py", ".", "python", "h1", "2026-01-01T00:00:00", 1, 0, {"content_hash": "h1"})
    ops = [op_upsert_nodes([GraphNode(cr.FILE_LABEL, "a.py", {"name": "a.py"})])]
    with _opened(data) as services:
        assert services.stores.journal is not None
        services.stores.journal.begin(
            code_body(ops, upsert_points={cr.FUNCTIONS: [(unit_point, "b1", 1)]}, state_put=[row])
        )
    with _opened(data) as services:
        kept = services.stores.index_state.get("a.py")
        assert kept is not None and kept.content_hash == "" and kept.data == {"content_hash": ""}
        assert services.stores.graph.node_ids(cr.FILE_LABEL) == ["a.py"]


def test_commit_is_one_transaction_on_the_embedded_queue(tmp_path: Path) -> None:
    db = LocalDB(tmp_path / "local.sqlite3")
    queue, audit = LocalQueue(db), LocalAuditLog(db)
    journal = LocalWriteJournal(db, queue, audit)
    entry = journal.begin({"kind": "records", "records": []})

    def boom() -> None:
        raise ServiceUnavailableError("index state down", code="SVC_TEST")

    with pytest.raises(ServiceUnavailableError):
        journal.commit(
            entry, GRAPH_SYNC_TOPIC, [{"op": "delete_node", "label": "X", "id": "1"}], [], also=boom
        )
    event = AuditEvent("create", "memory", "m1", "test")
    assert [e.id for e in journal.pending()] == [entry]
    assert queue.counts(GRAPH_SYNC_TOPIC)["pending"] == 0 and audit.count() == 0
    journal.commit(entry, GRAPH_SYNC_TOPIC, [{"op": "delete_node", "label": "X", "id": "1"}], [event])
    assert journal.pending() == [] and queue.counts(GRAPH_SYNC_TOPIC)["pending"] == 1 and audit.count() == 1
    for store in (journal, queue, audit):
        store.close()
