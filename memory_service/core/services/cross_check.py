"""Compare the stores against each other: which memories the audit log or the graph know of but
no record holds, and how many active records have no graph node.

Why: each store only knows itself, so a vector store that lost records (a WAL removed after a
crash, a segment moved aside by repair) opened "ok" while the graph and the audit log still named
them. The record is the only copy of a memory's content, so what is missing is reported by id
rather than rebuilt. Cheap path first: counts (SQL and engine counters); the id-by-id look runs
when the counts disagree or when asked (after an unclean stop, by ``memory-cli repair``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_service.core.errors import MemoryServiceError
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores

_CHUNK = 256


@dataclass
class StoreGaps:
    missing_records: list[str] = field(default_factory=list)  # known elsewhere, no record
    nodes_missing: int = 0  # active records without their Memory node
    unaudited: int = 0  # records the audit log has no event of (its history was lost)
    graph_readable: bool = True
    compared_ids: bool = False  # the id-by-id look ran


def cross_check(stores: Stores, *, full: bool = False) -> StoreGaps:
    gaps = StoreGaps()
    try:
        graph_ids = set(stores.graph.node_ids(MEMORY_LABEL))
    except MemoryServiceError:  # unavailable: its own health says why
        graph_ids, gaps.graph_readable = set(), False
    audited = stores.audit.memory_ids()
    known = audited | graph_ids
    total = stores.vectors.count(MEMORIES)
    active = stores.vectors.count(MEMORIES, PayloadFilter(equals={"status": "active"}))
    if gaps.graph_readable:
        gaps.nodes_missing = max(0, active - len(graph_ids))
    if not (full or total < len(known)):
        return gaps
    gaps.compared_ids = True
    wanted = sorted(known)
    present: set[str] = set()
    for start in range(0, len(wanted), _CHUNK):
        present.update(p.id for p in stores.vectors.retrieve(MEMORIES, wanted[start : start + _CHUNK]))
    gaps.missing_records = [i for i in wanted if i not in present]
    gaps.unaudited = max(0, total - len(present & audited))
    if gaps.graph_readable:
        gaps.nodes_missing = max(0, active - len(graph_ids & present))
    return gaps
