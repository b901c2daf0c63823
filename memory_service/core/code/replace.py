"""Replacing indexed files in the stores (core/code/index.py's write step): a batch of parsed files
gets its units embedded and stored as points and graph nodes, its edges, and its index-state
rows, through the index's write path (:mod:`.write`); a forgotten file loses them. Memory links
to code that changed or vanished are handed to the stale hook (:mod:`.stale`)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from indexer import CodeUnit, FileIndex
from memory_service.core.code import records as cr
from memory_service.core.code.links import is_index_link, unit_links
from memory_service.core.code.paths import PathPolicy
from memory_service.core.code.stale import code_changes
from memory_service.core.code.write import IndexWrites
from memory_service.core.models import utcnow
from memory_service.core.ports import GraphEdge, IndexedFile, IndexState, VectorPoint
from memory_service.core.records import MEMORY_LABEL, Stores
from memory_service.core.write.graph_sync import op_delete_nodes, op_upsert_edges, op_upsert_nodes
from memory_service.core.write.journal import code_body
from memory_service.core.write.linking import MemoryCatalog

# Told, after the indexer stored a change, which memory links touch code that changed or vanished
# ({code id: change in words}); returns how many memories it flagged (core/code/stale.py StaleMarker).
CodeChangeHook = Callable[[list[GraphEdge], dict[str, str]], int]

# Units embedded per call while an index pass reports progress: the bar moves within a large
# file, and each call still fills the embedder's batches.
EMBED_CHUNK = 256


class FileReplacer:
    """Stores and forgets files' units for the indexer, under its lock; ``project`` gives the
    indexer's parses of every indexed file (by path), which this keeps up to date."""

    def __init__(
        self,
        stores: Stores,
        state: IndexState,
        paths: PathPolicy,
        project_name: str | None,
        writes: IndexWrites,
        project: Callable[[], dict[str, FileIndex]],
        on_code_change: CodeChangeHook | None,
    ) -> None:
        self._stores = stores
        self._state = state
        self._paths = paths
        self._project_name = project_name
        self._writes = writes
        self._project = project
        self._on_code_change = on_code_change

    def store(
        self, files: list[FileIndex], stats: dict[str, Any], embedded: Callable[[float], None] | None = None
    ) -> None:
        """Replace these files' units (points and graph nodes) and remember their parse;
        ``embedded`` hears which fraction of the units has its dense vector so far."""
        if not files:
            return
        units = [u for fi in files for u in fi.units]
        t0 = time.perf_counter()
        dense = self._embed([cr.dense_text(u) for u in units], embedded)
        sparse = self._stores.sparse.encode_documents([cr.sparse_text(u) for u in units])
        stats["embed_seconds"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        project = self._project()
        previous = {fi.path: project.get(fi.path) for fi in files}
        old = [u for prev in previous.values() if prev for u in prev.units]
        links = self._memory_links(old, [path for path, prev in previous.items() if prev])
        new_ids = {u.id for u in units}
        by_collection: dict[str, list[VectorPoint]] = defaultdict(list)
        for i, unit in enumerate(units):
            by_collection[cr.collection_of(unit)].append(
                VectorPoint(
                    cr.point_id(unit.id),
                    cr.payload(unit, self._project_name),
                    dense=dense[i] if dense else None,
                    sparse=sparse[i],
                )
            )
        stale = {
            name: [cr.point_id(u.id) for u in old if cr.collection_of(u) == name and u.id not in new_ids]
            for name in cr.CODE_COLLECTIONS
        }
        ops = [
            op_delete_nodes(label, ids)
            for label in ("Function", "Class")
            if (ids := [u.id for u in old if cr.label_of(u) == label])
        ]
        ops.append(op_upsert_nodes([cr.file_node(fi) for fi in files] + [cr.unit_node(u) for u in units]))
        labels = cr.labels_for(files)
        # Replacing a unit's node dropped its edges: memories citing a unit still there keep citing it.
        relink = [e for e in links if _code_end(e) in new_ids]
        # Units naming requirements or components link to their memories (core/code/links.py).
        named = unit_links(units, MemoryCatalog.load(self._stores.vectors)) if units else []
        edges = cr.graph_edges([r for fi in files for r in fi.relations], labels) + relink + named
        if edges:
            ops.append(op_upsert_edges(edges))
        stats["memory_links"] += len(named)
        now = utcnow().isoformat()
        rows = [
            IndexedFile(
                fi.path,
                self._paths.root_of(fi.path),
                fi.language,
                fi.content_hash,
                now,
                len(fi.units),
                fi.parse_errors,
                fi.model_dump(mode="json"),
            )
            for fi in files
        ]
        # The state rows say "indexed" only in the commit that queues the graph ops (journal).
        landed = {
            name: [(p.id, p.payload["body_hash"], p.payload["start_line"]) for p in points]
            for name, points in by_collection.items()
        }
        body = code_body(ops, delete_points=stale, upsert_points=landed, state_put=rows)
        self._writes.apply(body, stale, by_collection, lambda: self._state.put(rows))
        for fi in files:
            project[fi.path] = fi
        stats["files_indexed"] += len(files)
        stats["store_seconds"] += time.perf_counter() - t0
        changes = {k: v for fi in files for k, v in code_changes(previous[fi.path], fi).items()}
        stats["memories_marked_stale"] += self._report(links, changes)

    def _embed(
        self, texts: list[str], embedded: Callable[[float], None] | None = None
    ) -> list[list[float]] | None:
        """Dense vectors of ``texts`` (None without a model), in chunks when someone follows."""
        embedder = self._stores.embedder
        if not texts or not embedder.wait_ready(60):
            return None
        if embedded is None:
            return embedder.embed_documents(texts)
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBED_CHUNK):
            vectors += embedder.embed_documents(texts[start : start + EMBED_CHUNK])
            embedded(len(vectors) / len(texts))
        return vectors

    def forget(self, keys: list[str]) -> None:
        if not keys:
            return
        project = self._project()
        units = [u for k in keys if (fi := project.get(k)) for u in fi.units]
        links = self._memory_links(units, [k for k in keys if k in project])
        changes = {k: v for key in keys for k, v in code_changes(project.get(key), None).items()}
        points = {
            name: [cr.point_id(u.id) for u in units if cr.collection_of(u) == name]
            for name in cr.CODE_COLLECTIONS
        }
        ops = [
            op_delete_nodes(label, ids)
            for label in ("Function", "Class")
            if (ids := [u.id for u in units if cr.label_of(u) == label])
        ]
        ops.append(op_delete_nodes(cr.FILE_LABEL, keys))
        body = code_body(ops, delete_points=points, state_delete=keys)
        self._writes.apply(body, points, {}, lambda: self._state.delete(keys))
        for k in keys:
            project.pop(k, None)
        self._report(links, changes)

    def _memory_links(self, units: list[CodeUnit], files: list[str]) -> list[GraphEdge]:
        """Edges between memories and these units and files (one read), before they are replaced."""
        if self._on_code_change is None or not (units or files):
            return []
        ids: dict[str, list[str]] = {"Function": [], "Class": [], cr.FILE_LABEL: files}
        for unit in units:
            ids[cr.label_of(unit)].append(unit.id)
        # The indexer's own links (core/code/links.py) are rewritten from the new parse instead.
        return [e for e in self._stores.graph.edges_between(MEMORY_LABEL, ids) if not is_index_link(e)]

    def _report(self, links: list[GraphEdge], changes: dict[str, str]) -> int:
        """Hand what changed to the hook; returns how many memories it flagged."""
        hits = [e for e in links if _code_end(e) in changes]
        if self._on_code_change is None or not hits:
            return 0
        return self._on_code_change(hits, changes)


def _code_end(edge: GraphEdge) -> str:
    """The id at the code end of an edge between a memory and a code node."""
    return edge.target_id if edge.source_label == MEMORY_LABEL else edge.source_id
