"""The graph's reach into a search's pool: one hop of expansion (deep mode, ambient reads) and the
linked memories of a linked read (memory_search include_problem_links /
include_fact_update_links), which join the pool as ``link_only`` candidates listed on their
anchor's ``linked`` (:func:`.results.attach_links` puts them after their anchors)."""

from __future__ import annotations

from collections.abc import Mapping

from memory_service.core.models import MemoryRecord
from memory_service.core.ports import GraphEdge, PayloadFilter
from memory_service.core.records import MEMORIES, Stores, from_payload
from memory_service.core.search.candidates import Candidate
from memory_service.core.search.filter import passes
from memory_service.core.search.signals import MAX_LINKED, GraphSignals, edge_family


class GraphReach:
    """What the ranker asks of the graph for its pool, reading linked memories by id."""

    def __init__(self, stores: Stores, signals: GraphSignals) -> None:
        self._stores = stores
        self._signals = signals

    def expand(self, found: dict[str, Candidate], flt: PayloadFilter, skip: frozenset[str]) -> None:
        """Add memories one hop away in the graph (deep mode, ambient reads) that pass the same
        filter; with ``skip``, not those reached only by edges of these link families."""
        if not skip:
            linked = self._signals.neighbours_outside(list(found))
            for point in self._stores.vectors.retrieve(MEMORIES, linked) if linked else []:
                if passes(point.payload, flt):
                    found.setdefault(point.id, Candidate(record=from_payload(point.payload)))
            return
        edges, outside = self._outside(found, flt)
        kinds = _kinds(found, outside)
        for edge in edges:
            if edge_family(edge, kinds) in skip:
                continue
            for end in (edge.source_id, edge.target_id):
                if end in outside:
                    found.setdefault(end, Candidate(record=outside[end]))

    def link(self, found: dict[str, Candidate], flt: PayloadFilter, families: frozenset[str]) -> None:
        """List on each candidate the memories ``families`` link to it (signals.edge_family); the
        ones not in the pool join it as ``link_only`` candidates when they pass ``flt``."""
        edges, outside = self._outside(found, flt)
        kinds = _kinds(found, outside)
        for edge in edges:
            family = edge_family(edge, kinds)
            if family not in families:
                continue
            for anchor, other in ((edge.target_id, edge.source_id), (edge.source_id, edge.target_id)):
                if anchor not in found:
                    continue
                if other in outside:
                    found.setdefault(other, Candidate(record=outside[other], link_only=True))
                if other in found and other not in found[anchor].linked:
                    found[anchor].linked.append(other)

    def _outside(
        self, found: Mapping[str, Candidate], flt: PayloadFilter
    ) -> tuple[list[GraphEdge], dict[str, MemoryRecord]]:
        """The pool's memory-to-memory edges, and the memories at their far ends outside the pool
        that pass ``flt`` (at most MAX_LINKED are read)."""
        edges = self._signals.edges(list(found)) or []
        ends = (end for edge in edges for end in (edge.source_id, edge.target_id))
        far = list(dict.fromkeys(end for end in ends if end not in found))[:MAX_LINKED]
        points = self._stores.vectors.retrieve(MEMORIES, far) if far else []
        return edges, {p.id: from_payload(p.payload) for p in points if passes(p.payload, flt)}


def _kinds(found: Mapping[str, Candidate], outside: Mapping[str, MemoryRecord]) -> dict[str, str]:
    """Memory id -> type, for the pool and the memories next to it (signals.edge_family)."""
    kinds = {cid: str(c.record.type) for cid, c in found.items()}
    kinds.update((rid, str(r.type)) for rid, r in outside.items())
    return kinds
