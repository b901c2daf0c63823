"""``memory-cli repair``: rebuild the derived stores from the memory records after damage.

The graph (Memory nodes and the relationships the records describe) and the thread-context
vectors are derived from the records; normalize's repair phase already knows how to restore them
(:mod:`.normalize_repair`), so this runs a normalize job with only that phase, after putting back
in the queue the graph changes that gave up while the graph was unusable (dead letters: the
relationships given at ``memory_add``, which no record describes). The code index is derived from
the source files: it is reported, and rebuilt by indexing again.

Moving a damaged graph aside happens before the stores open (stores/graph_salvage.py); this
service works on whatever graph opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_service.core import code_records
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.jobs import JobManager, JobState
from memory_service.core.normalize_schemas import NormalizeMemoryInput, NormalizeOptions
from memory_service.core.ports import AuditEvent
from memory_service.core.records import GRAPH_SYNC_TOPIC, MEMORIES, MEMORY_LABEL, Stores
from memory_service.core.services.graph_sync import GraphSync
from memory_service.core.services.normalize import NormalizeService

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
        outcome: dict[str, Any] = {
            "status": state.status,
            "error": state.error,
            "dead_graph_changes_replayed": replayed,
            "queued_graph_changes_applied": applied,
            "graph_nodes_repaired": stats.get("graph_nodes_repaired", 0),
            "context_vectors_repaired": stats.get("context_vectors_repaired", 0),
            "content_hashes_fixed": stats.get("content_hashes_fixed", 0),
            "warnings": list(stats.get("warnings", [])),
            "sync": self._sync.pending(),
            "graph": self._graph_counts(),
            "code_index": self._code_index(),
        }
        if state.status == "completed":
            details = {k: v for k, v in outcome.items() if isinstance(v, int) and v}
            self._stores.audit.append([AuditEvent("repair", "job", state.job_id, self._actor, details)])
        return outcome

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
