"""normalize_memory's deduplication: find exact and near duplicates, merge each group into one.

A group is one survivor (the oldest memory: it was there first and is most likely cited) and the
memories it absorbs: same type, same project and branch, and either the same content hash or a
dense cosine at or above the threshold *with the survivor itself* (a star, never a chain A~B~C
where A and C differ), and for near ones the same statement in words too (``statement_match``:
a memory and its negation embed as near twins). Memories in a supersede chain never merge: the
chain is history.

A merge loses nothing: the survivor records each absorbed memory (``metadata.merged_from``) and
gains its tags, missing metadata, edges (re-pointed, never overwriting the survivor's own) and
utility votes; each absorbed memory is soft-deleted with ``metadata.merged_into`` and keeps its
content and its former edges (``removed_relationships``), as memory_delete leaves them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory_service.core.audit_event import audit_event
from memory_service.core.code.citations import CODE_REFS, MAX_CODE_REFS
from memory_service.core.errors import ValidationError
from memory_service.core.guards import check_metadata
from memory_service.core.maintenance.normalize.statement_match import same_statement
from memory_service.core.memory.service import MemoryService, memory_node
from memory_service.core.models import MemoryRecord, MemoryStatus, Relationship, utcnow
from memory_service.core.ports import AuditEvent, GraphEdge, Vote
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores, from_payload
from memory_service.core.write.graph_sync import op_delete_node, op_upsert_edges, op_upsert_nodes
from memory_service.core.write.rules import CHAIN_KEYS, rule_of
from memory_service.core.write.writer import RecordWriter

MERGED_FROM = "merged_from"
MERGED_INTO = "merged_into"
# Not carried over from an absorbed memory: the chain, merge bookkeeping, the thread (it would
# move the survivor into another session) and what its title is derived from.
_KEEP_OWN = {*CHAIN_KEYS, MERGED_FROM, MERGED_INTO, "session_id", "tags", CODE_REFS}
_KEEP_OWN |= {"title", "name", "pattern_name", "test_name", "component_name", "key"}
_BLOCK = 512  # rows of the similarity matrix computed at a time


@dataclass
class DuplicateGroup:
    survivor: MemoryRecord
    absorbed: list[tuple[MemoryRecord, float, str]] = field(default_factory=list)  # (record, cosine, kind)


def chained(records: Sequence[MemoryRecord]) -> set[str]:
    """Ids of memories in a supersede chain: those carrying a chain key and those named by one."""
    out: set[str] = set()
    for r in records:
        if any(r.metadata.get(k) for k in CHAIN_KEYS):
            out.add(r.id)
            out.update(
                str(r.metadata[k]) for k in ("superseded_by", "superseded_by_change") if r.metadata.get(k)
            )
    return out


def find_groups(
    records: Sequence[MemoryRecord], vectors: Mapping[str, Sequence[float]], threshold: float
) -> list[DuplicateGroup]:
    """Duplicate groups among active, unchained records; ``vectors`` (by id) enable near matches.
    Records a kind's rules keep whole (seed 002's, write_rules.KIND_RULES) are never merged:
    absorbing one would delete it and rewrite its survivor."""
    skip = chained(records)
    by_scope: dict[tuple[str, str | None, str | None], list[MemoryRecord]] = defaultdict(list)
    for r in records:
        if r.is_active and r.id not in skip and rule_of(r).deletable:
            by_scope[(r.type, r.scope.project, r.scope.branch)].append(r)
    groups: list[DuplicateGroup] = []
    for key in sorted(by_scope, key=str):
        groups += _groups_of(sorted(by_scope[key], key=lambda r: (r.created_at, r.id)), vectors, threshold)
    return groups


def _groups_of(
    members: list[MemoryRecord], vectors: Mapping[str, Sequence[float]], threshold: float
) -> list[DuplicateGroup]:
    rows = [i for i, r in enumerate(members) if r.id in vectors]
    row_of = {i: n for n, i in enumerate(rows)}
    matrix = np.zeros((0, 0), dtype=np.float32)
    if rows:  # no model (or nothing embedded yet): exact matches only
        matrix = np.array([vectors[members[i].id] for i in rows], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    taken: set[int] = set()
    block_start, block = -2 * _BLOCK, np.zeros((0, 0), dtype=np.float32)  # none computed yet
    groups = []
    for i, record in enumerate(members):
        if i in taken:
            continue
        sims: dict[int, float] = {}
        if i in row_of:
            n = row_of[i]
            if not block_start <= n < block_start + _BLOCK:
                block_start, block = n, matrix[n : n + _BLOCK] @ matrix.T
            near = block[n - block_start]
            sims = {rows[m]: float(near[m]) for m in np.nonzero(near >= threshold)[0] if rows[m] > i}
        group = DuplicateGroup(record)
        for j in range(i + 1, len(members)):
            if j in taken:
                continue
            if members[j].content_hash == record.content_hash:
                group.absorbed.append((members[j], 1.0, "exact"))
            elif j in sims and same_statement(members[j].content, record.content):
                group.absorbed.append((members[j], round(min(sims[j], 1.0), 4), "near"))
            else:
                continue
            taken.add(j)
        if group.absorbed:
            groups.append(group)
    return groups


def repoint(
    edges: Sequence[GraphEdge], absorbed: set[str], survivor: str, own: Sequence[GraphEdge] = ()
) -> list[GraphEdge]:
    """The absorbed memories' edges moved onto the survivor: no self-loops, nothing the survivor
    already has (its own edge and properties win), each edge once."""
    have = {_key(e) for e in own}
    out: dict[tuple[str, str, str, str, str], GraphEdge] = {}

    def end(label: str, node: str) -> str:
        return survivor if label == MEMORY_LABEL and node in absorbed else node

    for e in edges:
        moved = GraphEdge(
            e.type, e.source_label, end(e.source_label, e.source_id), e.target_label,
            end(e.target_label, e.target_id), dict(e.properties),
        )  # fmt: skip
        self_loop = (moved.source_label, moved.source_id) == (moved.target_label, moved.target_id)
        if not self_loop and _key(moved) not in have:
            out.setdefault(_key(moved), moved)
    return list(out.values())


def _key(e: GraphEdge) -> tuple[str, str, str, str, str]:
    return (e.type, e.source_label, e.source_id, e.target_label, e.target_id)


def merged_metadata(
    survivor: MemoryRecord, absorbed: Sequence[tuple[MemoryRecord, float, str]]
) -> dict[str, Any]:
    """The survivor's metadata plus what it absorbed: missing keys, tags, code refs, merged_from."""
    meta = dict(survivor.metadata)
    for record, _, _ in absorbed:
        for k, v in record.metadata.items():
            if k not in _KEEP_OWN and k not in meta:
                meta[k] = v
    for key, cap in (("tags", 32), (CODE_REFS, MAX_CODE_REFS)):
        lists = [m.get(key) for m in (survivor.metadata, *(r.metadata for r, _, _ in absorbed))]
        if any(isinstance(v, list) for v in lists):
            meta[key] = list(dict.fromkeys(x for v in lists if isinstance(v, list) for x in v))[:cap]
    entries = [
        {
            "id": r.id,
            "content_hash": r.content_hash,
            "title": (r.title or "")[:120],
            "similarity": s,
            "match": kind,
        }
        for r, s, kind in absorbed
    ]
    meta[MERGED_FROM] = [*list(survivor.metadata.get(MERGED_FROM) or []), *entries]
    return meta


class Merger:
    """Applies one group under the locks of every record it rewrites, re-read inside them."""

    def __init__(self, stores: Stores, writer: RecordWriter, memory: MemoryService, actor: str) -> None:
        self._stores = stores
        self._writer = writer
        self._memory = memory
        self._actor = actor

    def merge(self, group: DuplicateGroup) -> list[str]:
        """Merge the group; returns the match kind of each memory absorbed (none when the group
        changed since it was found: a memory deleted, edited or chained meanwhile)."""
        ids = [group.survivor.id, *(r.id for r, _, _ in group.absorbed)]
        with self._memory.writing(*[(i, "memory_id") for i in ids]):
            now = {p.id: from_payload(p.payload) for p in self._stores.vectors.retrieve(MEMORIES, ids)}
            survivor = now.get(group.survivor.id)
            if survivor is None or not survivor.is_active or chained([survivor]):
                return []
            absorbed = [
                (now[r.id], s, kind)
                for r, s, kind in group.absorbed
                if r.id in now and now[r.id].is_active and now[r.id].content_hash == r.content_hash
                and not chained([now[r.id]]) and now[r.id].type == survivor.type
            ]  # fmt: skip
            if absorbed:
                self._apply(survivor, absorbed)
            return [kind for _, _, kind in absorbed]

    def _apply(self, survivor: MemoryRecord, absorbed: list[tuple[MemoryRecord, float, str]]) -> None:
        graph = self._stores.graph
        gone = {r.id for r, _, _ in absorbed}
        their_edges = {r.id: graph.edges_of(MEMORY_LABEL, r.id) for r, _, _ in absorbed}
        moved = repoint(
            [e for edges in their_edges.values() for e in edges], gone, survivor.id,
            graph.edges_of(MEMORY_LABEL, survivor.id),
        )  # fmt: skip
        when = utcnow()
        new = survivor.model_copy(deep=True)
        meta = merged_metadata(survivor, absorbed)
        try:
            new.metadata = check_metadata(new.type, meta, field="metadata")
        except ValidationError:  # too large or odd together: keep the survivor's own, plus the record
            new.metadata = {**survivor.metadata, MERGED_FROM: meta[MERGED_FROM]}
        tags = new.metadata.get("tags")
        new.tags = [str(t) for t in tags][:32] if isinstance(tags, list) else new.tags
        new.version += 1
        new.updated_at = when
        records = [new]
        audit = [self._event("merge", new, {"absorbed": sorted(gone), "edges_moved": len(moved)})]
        for record, similarity, kind in absorbed:
            old = record.model_copy(deep=True)
            old.metadata = {**old.metadata, MERGED_INTO: survivor.id}
            old.status, old.deleted_at, old.updated_at = MemoryStatus.DELETED, when, when
            old.version += 1
            old.removed_relationships = [
                Relationship(
                    type=e.type, source_id=e.source_id, target_id=e.target_id, properties=e.properties
                )
                for e in their_edges[record.id]
            ]
            records.append(old)
            details = {"merged_into": survivor.id, "similarity": similarity, "match": kind}
            audit.append(self._event("merged_into", old, details))
        ops = [op_upsert_nodes([memory_node(new)])]
        if moved:
            ops.append(op_upsert_edges(moved))
        ops += [op_delete_node(MEMORY_LABEL, i) for i in sorted(gone)]
        self._writer.write(records, graph_ops=ops, audit=audit, reembed=False)
        votes = self._stores.votes.all_of(sorted(gone))
        if votes:  # copies: the absorbed memories keep theirs
            self._stores.votes.add([Vote(new.id, v.problem_id, v.vote, v.actor, v.timestamp) for v in votes])

    def _event(self, operation: str, record: MemoryRecord, extra: dict[str, Any]) -> AuditEvent:
        details = {"type": record.type, "content_hash": record.content_hash, "version": record.version}
        return audit_event(operation, "memory", record.id, self._actor, {**details, **extra})
