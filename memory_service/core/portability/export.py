"""export_memory's writing side: the selected memories, with their edges and votes, as JSONL.

Memories are written oldest first (creation time, then id), so an import replays them in the
order they were made (a thread's context is built from the memories before it). Every graph
edge touching an exported memory is written once: on its source's line when the source is an
exported memory, else on its target's (an edge from code, or from a memory left out by the filters).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.models import MemoryRecord, MemoryStatus, utcnow
from memory_service.core.portability.format import (
    FORMAT,
    FORMAT_VERSION,
    EdgeLine,
    dumps,
    float32_text,
)
from memory_service.core.portability.schemas import ExportMemoryInput
from memory_service.core.ports import GraphEdge, PayloadFilter, Vote
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores, from_payload
from memory_service.core.search.filter import search_filter
from memory_service.core.write.graph_sync import GraphSync

BATCH = 256
Progress = Callable[[int, int], None]


@dataclass
class ExportCounts:
    memories: int = 0
    relationships: int = 0
    votes: int = 0
    embeddings: int = 0


def export_filter(req: ExportMemoryInput) -> PayloadFilter:
    """The request's filters on the indexed payload fields (types checked as memory_search does)."""
    any_of = dict(search_filter(req.memory_types).any_of)
    equals: dict[str, Any] = {} if req.include_deleted else {"status": MemoryStatus.ACTIVE.value}
    if req.project is not None:
        equals["project"] = req.project
    if req.branch is not None:
        equals["branch"] = req.branch
    # Expired memories are not exported (they are gone for every read), deleted ones on request.
    ranges = {} if req.include_deleted else dict(search_filter(req.memory_types).ranges)
    if req.since is not None or req.until is not None:
        ranges["updated_at_ts"] = (
            req.since.timestamp() if req.since else None,
            req.until.timestamp() if req.until else None,
        )
    return PayloadFilter(equals=equals, any_of=any_of, ranges=ranges)


class Exporter:
    def __init__(self, stores: Stores, sync: GraphSync, *, dim: int, service_version: str) -> None:
        self._stores = stores
        self._sync = sync
        self._dim = dim
        self._service_version = service_version

    def write(self, req: ExportMemoryInput, out: IO[bytes], progress: Progress | None) -> ExportCounts:
        """Write header, memory lines and trailer to ``out``; returns what was written."""
        self._graph_current()
        ids = self._selected(export_filter(req))
        exported = set(ids)
        labels = sorted(self._stores.graph.count_nodes_by_label())
        digest = hashlib.sha256()
        counts = ExportCounts()

        def emit(value: Any) -> None:
            data = (dumps(value) + "\n").encode("utf-8")
            digest.update(data)
            out.write(data)

        emit(self._header(req))
        for start in range(0, len(ids), BATCH):
            batch = ids[start : start + BATCH]
            for line in self._lines(batch, exported, labels, req.include_embeddings):
                emit(line)
                counts.memories += 1
                counts.relationships += len(line["relationships"])
                counts.votes += len(line["votes"])
                counts.embeddings += "embedding" in line
            if progress is not None:
                progress(counts.memories, len(ids))
        trailer: dict[str, Any] = {"end": True, "count": counts.memories, "votes": counts.votes}
        trailer |= {"relationships": counts.relationships, "sha256": digest.hexdigest()}
        out.write((dumps(trailer) + "\n").encode("utf-8"))
        if progress is not None and not ids:
            progress(0, 0)
        return counts

    def _graph_current(self) -> None:
        """Edges still in the outbox would be missing from the file: apply them first."""
        self._sync.drain()
        waiting = self._sync.pending()
        queued = waiting.get("pending", 0) + waiting.get("inflight", 0)
        if queued:
            raise ServiceUnavailableError(
                f"The graph has {queued} queued changes not applied yet, so relationships would be missing",
                code="SVC_GRAPH_SYNC_PENDING",
                details={"sync": waiting},
                suggestion="Check the graph store (memory-cli health) and export again once "
                "memory_statistics shows sync.pending = 0.",
            )

    def _selected(self, flt: PayloadFilter) -> list[str]:
        """Ids of the matching memories, oldest first (ties by id): a stable order."""
        keys: list[tuple[float, str]] = []
        offset: str | None = None
        while True:
            points, offset = self._stores.vectors.scroll(MEMORIES, flt, limit=512, offset=offset)
            keys.extend((float(p.payload.get("created_at_ts", 0.0)), p.id) for p in points)
            if offset is None:
                break
        return [mid for _, mid in sorted(keys)]

    def _header(self, req: ExportMemoryInput) -> dict[str, Any]:
        filters = req.model_dump(mode="json", exclude={"output_path"}, exclude_none=True)
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "model": self._stores.embedder.model_name,
            "dim": self._dim,
            "exported_at": utcnow().isoformat(),
            "filters": filters,
            "service_version": self._service_version,
            "include_embeddings": req.include_embeddings,
        }

    def _lines(
        self, batch: Sequence[str], exported: set[str], labels: Sequence[str], embeddings: bool
    ) -> list[dict[str, Any]]:
        points = self._stores.vectors.retrieve(MEMORIES, batch, with_dense=embeddings)
        edges = self._edges(batch, exported, labels)
        votes: dict[str, list[Vote]] = {}
        for vote in self._stores.votes.all_of(batch):
            votes.setdefault(vote.memory_id, []).append(vote)
        lines = []
        for point in points:
            record: MemoryRecord = from_payload(point.payload)
            line: dict[str, Any] = {
                "memory": record.model_dump(mode="json"),
                "relationships": [EdgeLine.of(e) for e in sorted(edges.get(record.id, []), key=_edge_key)],
                "votes": [
                    {"problem_id": v.problem_id, "vote": v.vote, "actor": v.actor, "timestamp": v.timestamp}
                    for v in votes.get(record.id, [])
                ],
            }
            if embeddings and point.dense is not None:
                line["embedding"] = float32_text(list(point.dense))
            lines.append(line)
        return lines

    def _edges(
        self, batch: Sequence[str], exported: set[str], labels: Sequence[str]
    ) -> dict[str, list[GraphEdge]]:
        """The edges each memory of the batch carries in the file (each edge on one line only)."""
        mine = set(batch)
        found: dict[tuple[str, str, str, str, str], GraphEdge] = {}
        for label in labels:
            for edge in self._stores.graph.edges_between(label, {MEMORY_LABEL: list(batch)}):
                found.setdefault(_edge_key(edge), edge)
        out: dict[str, list[GraphEdge]] = {}
        for edge in found.values():
            owner = edge.source_id
            if edge.source_label != MEMORY_LABEL or edge.source_id not in exported:
                owner = edge.target_id
            if owner in mine:
                out.setdefault(owner, []).append(edge)
        return out


def _edge_key(edge: GraphEdge) -> tuple[str, str, str, str, str]:
    return (edge.type, edge.source_label, edge.source_id, edge.target_label, edge.target_id)
