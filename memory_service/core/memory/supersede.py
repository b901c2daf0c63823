"""memory_supersede: the fact-update chain of seed 002 (write change, write new fact, link them).

Records stay immutable in meaning: the old fact keeps its content and gains only
``metadata.superseded`` / ``superseded_by`` (so default searches skip it), while the graph holds
the chain: ``new_fact -SUPERSEDES-> old_fact``, ``change -SUPERSEDES-> old_fact`` and
``change -INTRODUCES-> new_fact``. memory_get with include_relationships walks it both ways.

A chain keeps exactly one live (not superseded) fact and never loops: the old fact and the new one
must both be live, which two facts of one chain never are, and a graph walk refuses a new fact
that the old one already (transitively) supersedes, in case metadata and edges ever disagree. All
checks run before the dry-run preview, so a dry run refuses exactly what a commit would, and the
whole call holds the locks of every memory it names (it rewrites the old fact's metadata).

A committed call makes one write per memory it creates, then the old fact's rewrite. Re-sent with
the same request key (core/write/request_key.py), it makes the same ids and skips the writes done; when
the rewrite was done, it answers as the first attempt did (the old fact is superseded by then).
"""

from __future__ import annotations

from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.errors import ConflictError, MemoryServiceError, ValidationError
from memory_service.core.memory.feedback_schemas import (
    MemorySupersedeInput,
    MemorySupersedeOutput,
    PlannedEdge,
)
from memory_service.core.memory.schemas import MemoryAddInput, RelationshipInput
from memory_service.core.memory.service import MemoryService
from memory_service.core.models import MemoryRecord, MemoryType, utcnow
from memory_service.core.ports import GraphEdge
from memory_service.core.records import MEMORY_LABEL, Stores
from memory_service.core.write.graph_sync import op_upsert_edges
from memory_service.core.write.writer import RecordWriter, answered

SUPERSEDES = "SUPERSEDES"
INTRODUCES = "INTRODUCES"
NEW = "<new fact>"
CHANGE = "<new change>"
MAX_CHAIN = 5


class SupersedeService:
    def __init__(self, stores: Stores, writer: RecordWriter, memory: MemoryService, actor: str) -> None:
        self._stores = stores
        self._writer = writer
        self._memory = memory
        self._actor = actor

    def supersede(self, req: MemorySupersedeInput) -> MemorySupersedeOutput:
        named = {"old_fact_id": req.old_fact_id, "new_fact_id": req.new_fact_id, "change_id": req.change_id}
        with self._memory.writing(*[(mid, field) for field, mid in named.items() if mid is not None]):
            return self._supersede(req)

    def _supersede(self, req: MemorySupersedeInput) -> MemorySupersedeOutput:
        if req.mode == "commit":  # the old fact's rewrite comes after one write per memory created
            creates = (req.new_fact_id is None) + (req.change_id is None)
            if (done := self._writer.answered_before(MemorySupersedeOutput, ahead=creates)) is not None:
                return done
        old = self._memory.load(req.old_fact_id, field="old_fact_id")
        _expect(old, MemoryType.FACT, "old_fact_id")
        if old.metadata.get("superseded"):
            newest = old.metadata.get("superseded_by")
            raise ConflictError(
                f"Fact '{old.id}' is already superseded by '{newest}'",
                code="CON_ALREADY_SUPERSEDED",
                details={"field": "old_fact_id", "provided": old.id, "superseded_by": newest},
                suggestion="Call memory_supersede on the newest fact of the chain instead: pass its id "
                "as old_fact_id (follow superseded_by from this fact).",
            )
        new = self._existing(req.new_fact_id, MemoryType.FACT, "new_fact_id")
        new_id = new.id if new is not None else None
        change = self._existing(req.change_id, MemoryType.CHANGE, "change_id")
        change_id = change.id if change is not None else None
        if new_id == old.id:
            raise ValidationError(
                "A fact cannot supersede itself",
                code="VAL_SUPERSEDE_SELF",
                details={"field": "new_fact_id", "provided": req.new_fact_id},
                suggestion="Pass the replacement fact's id (or 'new_fact' to write it) as new_fact_id.",
            )
        if new is not None:
            self._check_new_fact_holds(new, old)
        for name, item in (("new_fact", req.new_fact), ("change", req.change)):
            if item is not None:  # validate now so a dry run catches what a commit would refuse
                kind = "fact" if name == "new_fact" else "change"
                self._memory.check_new_metadata(kind, item.metadata, field=f"{name}.metadata")
        if req.mode == "dry_run":
            return self._output("dry_run", old, new_id, change_id, req)
        props = {"rationale": req.rationale, "evidence_refs": list(dict.fromkeys(req.evidence_refs or []))}
        edges: list[GraphEdge] = []
        if new_id is None:
            assert req.new_fact is not None
            new_id = self._add("fact", req.new_fact.content, req.new_fact.metadata, [old.id])
        else:
            edges.append(GraphEdge(SUPERSEDES, MEMORY_LABEL, new_id, MEMORY_LABEL, old.id, props))
        if change_id is None:
            assert req.change is not None
            change_id = self._add("change", req.change.content, req.change.metadata, [old.id], new_id)
        else:
            edges.append(GraphEdge(SUPERSEDES, MEMORY_LABEL, change_id, MEMORY_LABEL, old.id, props))
            edges.append(GraphEdge(INTRODUCES, MEMORY_LABEL, change_id, MEMORY_LABEL, new_id, props))
        old.metadata = {
            **old.metadata,
            "superseded": True,
            "superseded_by": new_id,
            "superseded_by_change": change_id,
        }
        old.version += 1
        old.updated_at = utcnow()
        event = audit_event(
            "supersede",
            "memory",
            old.id,
            self._actor,
            {"new_fact_id": new_id, "change_id": change_id, **props},
        )
        out = self._output("committed", old, new_id, change_id, req)
        earlier = self._writer.write(
            [old],
            graph_ops=[op_upsert_edges(edges)] if edges else [],
            audit=[event],
            reembed=False,
            answer=out,
        )
        return answered(out, earlier)

    def _existing(self, memory_id: str | None, kind: MemoryType, field: str) -> MemoryRecord | None:
        if memory_id is None:
            return None
        record = self._memory.load(memory_id, field=field)
        _expect(record, kind, field)
        return record

    def _check_new_fact_holds(self, new: MemoryRecord, old: MemoryRecord) -> None:
        """The replacement must be live and must not be older than ``old`` in its chain."""
        if new.metadata.get("superseded"):
            newest = new.metadata.get("superseded_by")
            raise ConflictError(
                f"Fact '{new.id}' is itself superseded (by '{newest}'), so it cannot replace '{old.id}'",
                code="CON_ALREADY_SUPERSEDED",
                details={"field": "new_fact_id", "provided": new.id, "superseded_by": newest},
                suggestion="A superseded fact no longer holds: pass the newest fact of its chain as "
                "new_fact_id (follow superseded_by), or write the replacement in the same call with "
                "memory_supersede new_fact={'content': ...}.",
            )
        if new.id in self._history(old.id):
            raise ConflictError(
                f"Fact '{old.id}' already supersedes '{new.id}' (directly or through its chain); "
                "linking them the other way would make the chain loop",
                code="CON_SUPERSEDE_CYCLE",
                details={"field": "new_fact_id", "provided": new.id, "old_fact_id": old.id},
                suggestion=f"'{new.id}' is an older fact of the same chain. To state it again, "
                f"call memory_supersede with old_fact_id='{old.id}' and new_fact={{'content': ...}} "
                "(a new fact), not new_fact_id.",
            )

    def _history(self, fact_id: str) -> set[str]:
        """Every fact ``fact_id`` supersedes, directly or through older facts of its chain.

        A walk goes at most MAX_CHAIN hops (the graph's limit), so it restarts from the facts
        found at that distance: each fact on a longer path is at that distance from one of them.
        """
        seen: set[str] = set()
        walked: set[str] = set()
        frontier = {fact_id}
        while frontier:
            walked |= frontier
            deeper: set[str] = set()
            for start in frontier:
                try:
                    found = self._stores.graph.related(
                        MEMORY_LABEL, start, [SUPERSEDES], "OUTGOING", depth=MAX_CHAIN, limit=1000
                    )
                except MemoryServiceError:  # graph down: the live-fact rule above still holds
                    return seen
                facts = [e for e in found if e.properties.get("type") == MemoryType.FACT]
                seen.update(e.id for e in facts)
                deeper.update(e.id for e in facts if e.distance == MAX_CHAIN)
            frontier = deeper - walked
        return seen

    def _add(
        self, kind: str, content: str, metadata: dict[str, Any] | None, supersedes: list[str], new: str = ""
    ) -> str:
        rels = [RelationshipInput(type=SUPERSEDES, target_id=t) for t in supersedes]
        if new:
            rels.append(RelationshipInput(type=INTRODUCES, target_id=new))
        # A chain's records are its own: never deduplicated into another memory, never expiring
        # (a change memory outside a chain is branch work, BRANCH90d).
        item = MemoryAddInput(
            type=MemoryType(kind), content=content, metadata=metadata, relationships=rels, ttl_policy="NONE"
        )
        return self._memory.add(item, dedupe=False).memory_id

    def _output(
        self,
        status: str,
        old: MemoryRecord,
        new_id: str | None,
        change_id: str | None,
        req: MemorySupersedeInput,
    ) -> MemorySupersedeOutput:
        new_ref, change_ref = new_id or NEW, change_id or CHANGE
        edges = [
            PlannedEdge(type=SUPERSEDES, source_id=new_ref, target_id=old.id),
            PlannedEdge(type=SUPERSEDES, source_id=change_ref, target_id=old.id),
            PlannedEdge(type=INTRODUCES, source_id=change_ref, target_id=new_ref),
        ]
        chain = [*self._older(old.id), old.id, new_ref]
        verb = "is" if status == "committed" else "would be"
        effects = [
            f"fact {old.id} {verb} hidden from default memory_search results "
            "(include_superseded=true shows it)",
            f"memory_get {old.id} include_relationships=true {verb} showing the SUPERSEDES chain",
        ]
        return MemorySupersedeOutput(
            status=status,
            old_fact_id=old.id,
            new_fact_id=new_id,
            change_id=change_id,
            edges=edges,
            chain=chain,
            effects=effects,
        )

    def _older(self, fact_id: str) -> list[str]:
        """Facts this one superseded, oldest first (following fact-to-fact SUPERSEDES edges)."""
        try:
            found = self._stores.graph.related(
                MEMORY_LABEL, fact_id, [SUPERSEDES], "OUTGOING", depth=MAX_CHAIN, limit=50
            )
        except MemoryServiceError:
            return []
        facts = [r for r in found if r.properties.get("type") == MemoryType.FACT]
        return [r.id for r in sorted(facts, key=lambda r: -r.distance)]


def _expect(record: MemoryRecord, kind: MemoryType, field: str) -> None:
    if record.type != kind:
        raise ValidationError(
            f"Memory '{record.id}' is a '{record.type}' memory, not a {kind.value}",
            code="VAL_SUPERSEDE_KIND",
            details={
                "field": field,
                "provided": record.id,
                "found_type": record.type,
                "expected_type": kind.value,
            },
            suggestion=f"Pass the id of a '{kind.value}' memory as {field}"
            + (" (write facts with memory_add type='fact')." if kind == MemoryType.FACT else "."),
        )
