"""Compare the stores against each other: which memories the audit log or the graph know of but
no record holds, and how many active records have no graph node.

Why: each store only knows itself, so a vector store that lost records (a WAL removed after a
crash, a segment moved aside by repair) opened "ok" while the graph and the audit log still named
them. The record is the only copy of a memory's content, so what is missing is reported by id
rather than rebuilt. Cheap path first: counts (SQL and engine counters) against those a clean stop
recorded; the id-by-id look runs when they differ, after an unclean stop, and in ``memory-cli
repair``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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
    counts: dict[str, int] = field(default_factory=dict)  # memories, audit_rows, memory_nodes


def counts(stores: Stores) -> dict[str, int]:
    """The cheap figures (engine and SQL counters) a clean stop records and a start compares."""
    out = {"memories": stores.vectors.count(MEMORIES), "audit_rows": stores.audit.count()}
    with contextlib.suppress(MemoryServiceError):  # an unavailable graph: its own health says why
        out["memory_nodes"] = stores.graph.count_nodes_by_label().get(MEMORY_LABEL, 0)
    return out


def cross_check(
    stores: Stores, *, full: bool = False, recorded: Mapping[str, Any] | None = None
) -> StoreGaps:
    """``recorded``: the counts at the last clean stop; when they still hold, nothing changed
    since, and the id-by-id look (a second or so at 100k memories) is skipped unless ``full``."""
    gaps = StoreGaps(counts=counts(stores))
    active = stores.vectors.count(MEMORIES, PayloadFilter(equals={"status": "active"}))
    gaps.graph_readable = "memory_nodes" in gaps.counts
    if gaps.graph_readable:
        gaps.nodes_missing = max(0, active - gaps.counts["memory_nodes"])
    if not full and recorded is not None and all(recorded.get(k) == v for k, v in gaps.counts.items()):
        return gaps
    graph_ids = set(stores.graph.node_ids(MEMORY_LABEL)) if gaps.graph_readable else set()
    audited = stores.audit.memory_ids()
    known = audited | graph_ids
    gaps.compared_ids = True
    wanted = sorted(known)
    present: set[str] = set()
    for start in range(0, len(wanted), _CHUNK):
        present.update(p.id for p in stores.vectors.retrieve(MEMORIES, wanted[start : start + _CHUNK]))
    gaps.missing_records = [i for i in wanted if i not in present]
    gaps.unaudited = max(0, gaps.counts["memories"] - len(present & audited))
    if gaps.graph_readable:
        gaps.nodes_missing = max(0, active - len(graph_ids & present))
    return gaps
