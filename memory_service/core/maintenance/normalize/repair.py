"""normalize_memory's repairs: close the gaps a crash (or an older version) leaves between stores.

A write stores the record first, then queues its graph changes, then its context vectors come
with the next embedding; a crash in between leaves an active memory without its graph node, a
memory of a thread without its context pair, or (a bug, a hand edit) a content hash that is not
the content's. Each repair re-reads the record under its write lock and goes through the
RecordWriter with an audit event, so a repair never overwrites a newer write.

A lost node's edges are rebuilt from what the records say: the references they make (and those
made to them), cited code, the problem link and the supersede chain. Relationships given only at
memory_add live only in the graph: those of a node that never reached it cannot be recovered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.code.citations import CODE_REFS, code_ref_edges
from memory_service.core.errors import NotFoundError, ServiceUnavailableError, ValidationError
from memory_service.core.maintenance.normalize.run import Run, batches
from memory_service.core.memory.service import MemoryService, memory_node
from memory_service.core.memory.supersede import INTRODUCES, SUPERSEDES
from memory_service.core.models import MemoryRecord, content_hash
from memory_service.core.ports import AuditEvent, GraphEdge
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores, from_payload, thread_of
from memory_service.core.write.graph_sync import op_upsert_edges, op_upsert_nodes
from memory_service.core.write.kinds import PROBLEM_EDGE
from memory_service.core.write.linking import ReferenceLinker
from memory_service.core.write.references import extract
from memory_service.core.write.writer import RecordWriter


class Repairer:
    def __init__(
        self,
        stores: Stores,
        writer: RecordWriter,
        memory: MemoryService,
        actor: str,
        *,
        context_turns: int,
        model_wait_seconds: float,
    ) -> None:
        self._stores = stores
        self._writer = writer
        self._memory = memory
        self._actor = actor
        self._context_turns = context_turns
        self._model_wait = model_wait_seconds
        self._linker = ReferenceLinker(stores.vectors, stores.graph)

    # ------------------------------------------------------------------ finding gaps

    def bad_hashes(self, records: Sequence[MemoryRecord]) -> list[str]:
        return [r.id for r in records if r.is_active and r.content_hash != content_hash(r.content)]

    def missing_nodes(self, records: Sequence[MemoryRecord]) -> list[str]:
        nodes = set(self._stores.graph.node_ids(MEMORY_LABEL))
        return [r.id for r in records if r.is_active and r.id not in nodes]

    def missing_context(self, records: Sequence[MemoryRecord]) -> list[str]:
        """Embedded memories of a thread, after its first, without their context pair (pending
        ones get theirs when they are embedded; a thread's first memory has none, writer.py).
        ``records`` are all the memories, so each thread's first is among them."""
        if self._context_turns <= 0 or not self._stores.vectors.has_context(MEMORIES):
            return []
        threaded = [(r, t) for r in records if r.is_active and (t := thread_of(r))]
        first: dict[tuple[str, str | None], float] = {}
        for r, t in threaded:
            key, at = (t, r.scope.project), r.created_at.timestamp()
            first[key] = min(first.get(key, at), at)
        wanted = [  # a tie with the first counts as first: a missing pair is never made up
            r.id
            for r, t in threaded
            if not r.embedding_pending and r.created_at.timestamp() > first[(t, r.scope.project)]
        ]
        have: set[str] = set()
        for batch in batches(wanted, 256):
            have |= self._stores.vectors.context_ids(MEMORIES, batch)
        return [i for i in wanted if i not in have]

    def stale_embeddings(self, records: Sequence[MemoryRecord]) -> dict[str, str]:
        """Active memories to embed again, with why: pending, or embedded by another model."""
        model = self._stores.embedder.model_name
        out: dict[str, str] = {}
        for r in records:
            if not r.is_active:
                continue
            if r.embedding_pending:
                out[r.id] = "embedding pending"
            elif r.embedding_model != model:
                out[r.id] = f"embedded by {r.embedding_model or 'an unknown model'}, not {model}"
        return out

    # ------------------------------------------------------------------ fixing them

    def reembed(self, run: Run, reasons: dict[str, str], stat: str, phase: str) -> int:
        """Embed these memories again (dense, sparse and context) through the RecordWriter; with
        ``content_hash`` fixed when it was wrong (the text changed under it)."""
        ids = sorted(reasons)
        if not ids:
            return 0
        if run.dry_run:
            for i in ids:
                run.plan("reembed", memory_id=i, reason=reasons[i])
            run.count(stat, len(ids))
            return len(ids)
        if not self._stores.embedder.wait_ready(self._model_wait):
            run.warn(f"{len(ids)} memories not re-embedded: no embedding model is loaded")
            return 0
        done = 0
        for batch in batches(ids):
            with self._memory.locks.hold(batch):
                records = self._reload(batch)
                audit = []
                for r in records:
                    details: dict[str, Any] = {
                        "reason": reasons[r.id],
                        "model": self._stores.embedder.model_name,
                    }
                    if r.content_hash != (fixed := content_hash(r.content)):
                        details["content_hash"] = {"was": r.content_hash, "now": fixed}
                        r.content_hash = fixed
                    audit.append(audit_event("reembed", "memory", r.id, self._actor, details))
                if records:
                    self._writer.write(records, audit=audit)
            done += len(records)
            run.count(stat, len(records))
            run.progress(phase, done, len(ids))
        return done

    def restore_nodes(self, run: Run, ids: list[str], records: Sequence[MemoryRecord], phase: str) -> int:
        """Queue the node and the derivable edges of each memory missing from the graph."""
        if run.dry_run:
            for i in ids:
                run.plan("restore_graph_node", memory_id=i)
            run.count("graph_nodes_repaired", len(ids))
            return len(ids)
        known = {r.id: r for r in records}
        done = 0
        for batch in batches(ids):
            with self._memory.locks.hold(batch):
                found = self._reload(batch)
                if found:
                    ops = [op_upsert_nodes([memory_node(r) for r in found])]
                    if edges := self._edges(found, known):
                        ops.append(op_upsert_edges(edges))
                    audit = [self._restored(r.id, edges) for r in found]
                    self._writer.write([], graph_ops=ops, audit=audit)
            done += len(found)
            run.count("graph_nodes_repaired", len(found))
            run.progress(phase, done, len(ids))
        return done

    def _restored(self, memory_id: str, edges: list[GraphEdge]) -> AuditEvent:
        n = sum(memory_id in (e.source_id, e.target_id) for e in edges)
        return audit_event("repair", "memory", memory_id, self._actor, {"restored": "graph node", "edges": n})

    def _reload(self, ids: list[str]) -> list[MemoryRecord]:
        """The records as they are now (inside their locks); deleted ones are left out."""
        current = self._stores.vectors.retrieve(MEMORIES, ids)
        return [r for p in current if (r := from_payload(p.payload)).is_active]

    def _edges(self, found: list[MemoryRecord], known: dict[str, MemoryRecord]) -> list[GraphEdge]:
        """Edges the records imply, for and to the restored ones, between existing memories."""
        restored = {r.id for r in found}
        active = {i for i, r in known.items() if r.is_active} | restored
        edges = self._linker.edges(found)
        catalogued = [r for r in found if r.type in ("requirements", "component")]
        if catalogued:  # references other memories make to a restored requirement or component
            citing = [
                r for r in known.values()
                if r.is_active and r.id not in restored and _refers(r)
            ]  # fmt: skip
            edges += [e for e in self._linker.edges(citing) if {e.source_id, e.target_id} & restored]
        for r in found:
            refs = r.metadata.get(CODE_REFS)
            for ref in refs if isinstance(refs, list) else []:
                # One ref at a time: code that is gone (the stale-link check flags the memory)
                # must not cost the links to the code that is still there.
                with contextlib.suppress(NotFoundError, ValidationError, ServiceUnavailableError):
                    edges += code_ref_edges(self._stores.graph, r.id, {CODE_REFS: [ref]}, field="metadata")
            problem = r.metadata.get("problem_id")
            if r.type in PROBLEM_EDGE and isinstance(problem, str) and problem in active:
                edges.append(GraphEdge(PROBLEM_EDGE[r.type], MEMORY_LABEL, r.id, MEMORY_LABEL, problem))
        edges += [e for e in chain_edges(known.values()) if {e.source_id, e.target_id} & restored]
        return [
            e for e in edges
            if (e.source_label != MEMORY_LABEL or e.source_id in active)
            and (e.target_label != MEMORY_LABEL or e.target_id in active)
        ]  # fmt: skip


def _refers(record: MemoryRecord) -> bool:
    refs = extract(record.type, record.content, record.metadata)
    return bool(refs.requirements or refs.components)


def chain_edges(records: Sequence[MemoryRecord] | Any) -> list[GraphEdge]:
    """The SUPERSEDES / INTRODUCES edges the superseded facts' metadata describe (memory_supersede
    writes both; the edges' rationale lives on in the audit log's supersede event)."""
    edges = []
    for old in records:
        if not old.metadata.get("superseded"):
            continue
        new, change = old.metadata.get("superseded_by"), old.metadata.get("superseded_by_change")
        if isinstance(new, str):
            edges.append(GraphEdge(SUPERSEDES, MEMORY_LABEL, new, MEMORY_LABEL, old.id))
        if isinstance(change, str):
            edges.append(GraphEdge(SUPERSEDES, MEMORY_LABEL, change, MEMORY_LABEL, old.id))
            if isinstance(new, str):
                edges.append(GraphEdge(INTRODUCES, MEMORY_LABEL, change, MEMORY_LABEL, new))
    return edges
