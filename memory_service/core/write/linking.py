"""Turn a memory's references (:mod:`.references`) into graph edges at write time.

Requirement ids and component names are looked up among the active ``requirements`` and
``component`` memories (and the records of the same write, so one bulk add can hold a requirement
and what names it). Code references become edges to the code graph's File/Function/Class nodes,
only when such a node exists (an edge would otherwise create an empty node) and is the only match.
A reference that resolves to nothing is left out: a memory written before its target is linked
when it is next updated.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence

from memory_service.core.code.records import FILE_LABEL
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.models import MemoryRecord, MemoryType, utcnow
from memory_service.core.ports import GraphEdge, GraphNode, GraphStore, PayloadFilter, VectorStore
from memory_service.core.records import MEMORIES, MEMORY_LABEL, from_payload
from memory_service.core.ttl import EXPIRES_FIELD
from memory_service.core.write.references import CODE, COMPONENT, REQUIREMENT, edge_rule, extract

logger = logging.getLogger(__name__)
UNIT_LABELS = ("Function", "Class")


class MemoryCatalog:
    """Active requirement and component memories by their ids and names (case-insensitive)."""

    def __init__(self, records: Iterable[MemoryRecord]) -> None:
        self.records: dict[str, MemoryRecord] = {}
        self.requirements: dict[str, list[str]] = defaultdict(list)
        self.components: dict[str, list[str]] = defaultdict(list)
        for r in sorted(records, key=lambda r: (r.created_at, r.id)):
            if r.id in self.records or not r.is_active:
                continue
            self.records[r.id] = r
            if r.type == MemoryType.REQUIREMENTS and (rid := r.metadata.get("requirement_id")):
                self.requirements[str(rid).strip().upper()].append(r.id)
            if r.type == MemoryType.COMPONENT:
                for key in {r.metadata.get("component_id"), r.metadata.get("name")} - {None, ""}:
                    self.components[str(key).strip().lower()].append(r.id)

    @classmethod
    def load(cls, vectors: VectorStore, extra: Sequence[MemoryRecord] = ()) -> MemoryCatalog:
        """Scan the stored requirement and component memories (pages of 256), plus ``extra``."""
        flt = PayloadFilter(
            equals={"status": "active"},
            any_of={"type": [MemoryType.REQUIREMENTS.value, MemoryType.COMPONENT.value]},
            ranges={EXPIRES_FIELD: (utcnow().timestamp(), None)},  # expired ones are gone (TTL)
        )
        found: list[MemoryRecord] = list(extra)
        offset: str | None = None
        while True:
            points, offset = vectors.scroll(MEMORIES, flt, limit=256, offset=offset)
            found.extend(from_payload(p.payload) for p in points)
            if offset is None:
                return cls(found)

    def requirement(self, requirement_id: str) -> list[str]:
        return self.requirements.get(requirement_id.strip().upper(), [])

    def component(self, key: str) -> list[str]:
        return self.components.get(key.strip().lower(), [])


class ReferenceLinker:
    def __init__(self, vectors: VectorStore, graph: GraphStore) -> None:
        self._vectors = vectors
        self._graph = graph

    def edges(self, records: Sequence[MemoryRecord]) -> list[GraphEdge]:
        """The edges the references of these new or changed records make, deduplicated."""
        refs = {r.id: extract(r.type, r.content, r.metadata) for r in records}
        if not any(refs.values()):
            return []
        catalog = None
        if any(x.requirements or x.components for x in refs.values()):
            catalog = MemoryCatalog.load(self._vectors, records)
        edges: dict[tuple[str, str, str], GraphEdge] = {}
        for record in records:
            ref = refs[record.id]
            targets: list[tuple[str, str, str]] = []  # (kind, label, id)
            if catalog is not None:
                for r in ref.requirements:
                    targets += [(REQUIREMENT, MEMORY_LABEL, m) for m in catalog.requirement(r)]
                for c in ref.components:
                    targets += [(COMPONENT, MEMORY_LABEL, m) for m in catalog.component(c)]
            targets += [(CODE, n.label, n.id) for n in self._code_nodes(ref.files, ref.units)]
            for kind, label, target in targets:
                if target == record.id:
                    continue
                edge_type, back = edge_rule(record.type, kind)
                src, dst = ((label, target), (MEMORY_LABEL, record.id))
                if not back:
                    src, dst = dst, src
                edges.setdefault((edge_type, src[1], dst[1]), GraphEdge(edge_type, *src, *dst))
        return list(edges.values())

    def _code_nodes(self, files: Sequence[str], units: Sequence[str]) -> list[GraphNode]:
        """The code nodes these names denote, each only when it is the one match; none while the
        graph is unreachable (the memory is still written; its code links wait for an update)."""
        out: list[GraphNode] = []
        try:
            for path in files:
                out += _only(self._graph.find_nodes([FILE_LABEL], path, limit=2))
            for unit in units:
                path, _, name = unit.rpartition("::")
                found = self._graph.find_nodes(UNIT_LABELS, name, limit=10)
                if path:
                    found = [n for n in found if n.properties.get("file_path") == path]
                out += _only(found)
        except ServiceUnavailableError as exc:
            logger.warning("code references not linked (graph unavailable): %s", exc.message)
            return []
        return out


def _only(nodes: list[GraphNode]) -> list[GraphNode]:
    return nodes if len(nodes) == 1 else []
