"""normalize_memory's cleanup: graph nodes nothing stands behind, and links to code that is gone.

* A Memory node whose record is deleted (or missing) is an orphan; its edges dangle from a memory
  nobody can read. Both go, through the graph-sync outbox, each with an audit event saying how
  many edges went (the deleted record keeps its own ``removed_relationships``).
* A File, Function or Class node whose file is no longer in the code index is left over from an
  interrupted (re)index. Module nodes (import targets) are not the index's to judge.
* A memory whose ``metadata.code_refs`` names code that no longer exists is flagged stale, as the
  indexer flags it when it sees the code change (:mod:`.stale`).

Candidates are re-checked under the records' locks right before a write: a memory added while the
job ran is never taken for an orphan.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_service.core.audit_event import audit_event
from memory_service.core.code import records as cr
from memory_service.core.code.citations import CITES, CODE_LABELS, CODE_REFS
from memory_service.core.code.stale import StaleMarker
from memory_service.core.maintenance.normalize.run import Run
from memory_service.core.models import MemoryRecord, MemoryStatus
from memory_service.core.ports import GraphEdge
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores
from memory_service.core.write.graph_sync import op_delete_node
from memory_service.core.write.locks import KeyedLocks
from memory_service.core.write.writer import RecordWriter

UNIT_LABELS = ("Function", "Class")


# Statuses whose graph node is not an orphan.
ALIVE = (MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value)


class Cleaner:
    def __init__(
        self, stores: Stores, writer: RecordWriter, locks: KeyedLocks, stale: StaleMarker, actor: str
    ) -> None:
        self._stores = stores
        self._writer = writer
        self._locks = locks
        self._stale = stale
        self._actor = actor

    def memory_orphans(self, records: Sequence[MemoryRecord]) -> list[str]:
        alive = {r.id for r in records if r.status in ALIVE}  # an archived memory keeps its node
        return sorted(set(self._stores.graph.node_ids(MEMORY_LABEL)) - alive)

    def code_orphans(self) -> list[tuple[str, str]]:
        """(label, id) of code nodes whose file left the index (nodes read before the index)."""
        graph = self._stores.graph
        nodes = [(label, i) for label in (cr.FILE_LABEL, *UNIT_LABELS) for i in graph.node_ids(label)]
        indexed = {f.path for f in self._stores.index_state.list()}
        return [
            (label, i) for label, i in nodes
            if (i if label == cr.FILE_LABEL else i.split("::", 1)[0]) not in indexed
            and (label == cr.FILE_LABEL or "::" in i)
        ]  # fmt: skip

    def remove(self, run: Run, nodes: list[tuple[str, str]], stat: str, phase: str) -> int:
        """Delete these nodes and their edges; Memory nodes only while their record is not alive
        (active or archived: a restore brings an archived memory back with its edges)."""
        done = 0
        for start in range(0, len(nodes), 64):
            batch = nodes[start : start + 64]
            memory_ids = [i for label, i in batch if label == MEMORY_LABEL]
            with self._locks.hold(memory_ids):
                alive = {
                    p.id
                    for p in self._stores.vectors.retrieve(MEMORIES, memory_ids)
                    if p.payload.get("status") in ALIVE
                }
                batch = [(label, i) for label, i in batch if not (label == MEMORY_LABEL and i in alive)]
                edges = {(label, i): len(self._stores.graph.edges_of(label, i)) for label, i in batch}
                run.count("dangling_edges_removed", sum(edges.values()))
                run.count(stat, len(batch))
                for (label, i), n in edges.items():
                    run.plan("remove_orphan_node", label=label, node_id=i, edges=n)
                if batch and not run.dry_run:
                    self._writer.write(
                        [],
                        graph_ops=[op_delete_node(label, i) for label, i in batch],
                        audit=[
                            audit_event(
                                "remove_orphan", "graph_node", i, self._actor, {"label": label, "edges": n}
                            )
                            for (label, i), n in edges.items()
                        ],
                    )
            done += len(batch)
            run.progress(phase, min(start + 64, len(nodes)), len(nodes))
        return done

    def stale_links(self, run: Run, records: Sequence[MemoryRecord], phase: str) -> int:
        """Flag active memories citing code that no longer resolves (once per missing ref)."""
        citing = [r for r in records if r.is_active and isinstance(r.metadata.get(CODE_REFS), list)]
        flagged = 0
        for n, record in enumerate(citing, 1):
            refs = [str(x).strip() for x in record.metadata[CODE_REFS] if str(x).strip()]
            known = set(record.stale.code_ids) if record.stale is not None else set()
            gone = [ref for ref in dict.fromkeys(refs) if ref not in known and not self._resolves(ref)]
            if gone:
                run.plan("flag_stale", memory_id=record.id, code_refs=gone)
                if run.dry_run:
                    flagged += 1
                else:
                    links = [GraphEdge(CITES, MEMORY_LABEL, record.id, cr.FILE_LABEL, ref) for ref in gone]
                    changes = {ref: f"cited code {ref} is no longer in the code index" for ref in gone}
                    flagged += self._stale.mark(links, changes)
            run.progress(phase, n, len(citing))
        run.count("stale_links_flagged", flagged)
        return flagged

    def _resolves(self, ref: str) -> bool:
        return bool(self._stores.graph.find_nodes(CODE_LABELS, ref, limit=1))
