"""``memory-cli repair``: rebuild the derived stores from the surviving ones after damage.

The graph (Memory nodes and the relationships the records describe) and the thread-context
vectors are derived from the records; normalize's repair phase already knows how to restore them
(:mod:`.normalize_repair`), so this runs a normalize job with only that phase, after putting back
in the queue the graph changes that gave up while the graph was unusable (dead letters: the
relationships given at ``memory_add``, which no record describes). The code index is derived from
the source files: it is reported, and rebuilt by indexing again. The edges memories were created
with are put back from their audit ``create`` events (:mod:`..audit_edges`), and a record the audit
log has no event of gets one from the record.

Moving a damaged graph aside happens before the stores open (stores/graph/salvage.py); this
service works on whatever graph opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.code import records as code_records
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.jobs import JobManager, JobState
from memory_service.core.maintenance.normalize.schemas import NormalizeMemoryInput, NormalizeOptions
from memory_service.core.maintenance.normalize.service import NormalizeService
from memory_service.core.memory.audit_edges import created_edges
from memory_service.core.ports import AuditEvent
from memory_service.core.records import GRAPH_SYNC_TOPIC, MEMORIES, MEMORY_LABEL, Stores
from memory_service.core.write.graph_sync import GraphSync, op_upsert_edges

REPAIR_ONLY = NormalizeOptions(
    skip_deduplication=True, skip_orphan_cleanup=True, skip_embedding_refresh=True, skip_stale_links=True
)


class RepairService:
    def __init__(
        self, stores: Stores, sync: GraphSync, normalize: NormalizeService, jobs: JobManager, actor: str
    ) -> None:
        self._stores = stores
        self._sync = sync
        self._normalize = normalize
        self._jobs = jobs
        self._actor = actor

    def run(self, listen: Callable[[JobState], None] | None = None) -> dict[str, Any]:
        """Replay dead graph changes, restore missing graph nodes and edges and context vectors;
        returns figures and what is left for the user (the code index)."""
        graph = self._stores.graph.health()
        if graph.state == "unavailable":
            raise ServiceUnavailableError(
                f"The graph store is unavailable, nothing can be rebuilt into it: {graph.detail}",
                code="SVC_GRAPH_STORE",
                details={"backend": graph.backend},
                suggestion="Fix what the message says (a server graph must be reachable; embedded graph "
                "files must be writable), then run memory-cli repair again.",
            )
        replayed = self._stores.queue.replay_dead(GRAPH_SYNC_TOPIC)
        applied = self._sync.drain()
        started = self._normalize.start(NormalizeMemoryInput(options=REPAIR_ONLY))
        unsubscribe = self._jobs.listen(started.job_id, lambda s, _d, _t: listen(s)) if listen else None
        self._jobs.wait(started.job_id)
        if unsubscribe:
            unsubscribe()
        state = self._jobs.get(started.job_id)
        assert state is not None
        stats = state.stats
        edges_restored = self._edges_from_audit() if state.status == "completed" else 0
        audit_restored = self._audit_from_records() if state.status == "completed" else 0
        outcome: dict[str, Any] = {
            "status": state.status,
            "error": state.error,
            "dead_graph_changes_replayed": replayed,
            "queued_graph_changes_applied": applied,
            "graph_nodes_repaired": stats.get("graph_nodes_repaired", 0),
            "graph_edges_restored_from_audit": edges_restored,
            "audit_events_restored": audit_restored,
            "context_vectors_repaired": stats.get("context_vectors_repaired", 0),
            "content_hashes_fixed": stats.get("content_hashes_fixed", 0),
            "warnings": list(stats.get("warnings", [])),
            "sync": self._sync.pending(),
            "graph": self._graph_counts(),
            "code_index": self._code_index(),
        }
        if state.status == "completed":
            details = {k: v for k, v in outcome.items() if isinstance(v, int) and v}
            self._stores.audit.append([audit_event("repair", "job", state.job_id, self._actor, details)])
        return outcome

    def _edges_from_audit(self) -> int:
        """Put back the edges memories were created with (their create events keep them: the graph
        was their only other copy) between records that are still active; returns how many edges
        the graph gained. Upserting an edge that exists changes nothing."""
        wanted = [
            edge
            for memory_id, details in self._stores.audit.created_with_edges()
            for edge in created_edges(memory_id, details)
            if edge.target_label == MEMORY_LABEL  # code nodes come back with indexing
        ]
        if not wanted:
            return 0
        ids = sorted({e.source_id for e in wanted} | {e.target_id for e in wanted})
        active = {
            p.id
            for start in range(0, len(ids), 256)
            for p in self._stores.vectors.retrieve(MEMORIES, ids[start : start + 256])
            if p.payload.get("status") == "active"
        }
        edges = [e for e in wanted if e.source_id in active and e.target_id in active]
        before = sum(self._stores.graph.count_edges_by_type().values())
        for start in range(0, len(edges), 500):
            self._sync.enqueue([op_upsert_edges(edges[start : start + 500])])
        self._sync.drain()
        return max(0, sum(self._stores.graph.count_edges_by_type().values()) - before)

    def _audit_from_records(self) -> int:
        """One ``audit_restored`` event, from its record, for each memory the audit log has no
        event of (the log lost its history); returns how many."""
        audited = self._stores.audit.memory_ids()
        events: list[AuditEvent] = []
        offset: str | None = None
        while True:
            points, offset = self._stores.vectors.scroll(MEMORIES, None, limit=256, offset=offset)
            events += [
                audit_event("audit_restored", "memory", p.id, self._actor, _restored(p.payload))
                for p in points
                if p.id not in audited
            ]
            if offset is None:
                break
        for start in range(0, len(events), 500):
            self._stores.audit.append(events[start : start + 500])
        return len(events)

    def _graph_counts(self) -> dict[str, int]:
        nodes = self._stores.graph.count_nodes_by_label()
        return {
            "memory_nodes": nodes.get(MEMORY_LABEL, 0),
            "relationships": sum(self._stores.graph.count_edges_by_type().values()),
            "memories": self._stores.vectors.count(MEMORIES),
        }

    def _code_index(self) -> dict[str, Any]:
        """What the code index holds; indexing again is the user's call (it reads their files)."""
        files = self._stores.index_state.list()
        points = sum(self._stores.vectors.count(name) for name in code_records.CODE_COLLECTIONS)
        roots = sorted({f.root for f in files})
        file_nodes = self._stores.graph.count_nodes_by_label().get(code_records.FILE_LABEL, 0)
        full = f"run memory-cli index <dir> --full for each of: {', '.join(roots)}"
        if files and not file_nodes:
            hint = (
                f"The code graph is gone (the graph was rebuilt) while files are recorded as indexed: {full}."
            )
        elif files and not points:
            hint = f"Code files are recorded but no code unit is stored: {full}."
        elif files:
            hint = "The code index is intact."
        else:
            hint = (
                "No code is indexed: if this project's code was indexed before, index it again "
                "(memory-cli index <dir>, or the index_directory tool)."
            )
        return {
            "files": len(files),
            "code_units": points,
            "file_nodes": file_nodes,
            "roots": roots,
            "hint": hint,
        }


def _restored(payload: dict[str, Any]) -> dict[str, Any]:
    keys = ("type", "status", "content_hash", "version", "created_at", "updated_at")
    details = {k: payload[k] for k in keys if k in payload}
    details["note"] = "the audit log had lost this memory's history; recorded from the record by repair"
    return details
