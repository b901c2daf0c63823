"""Code indexing: files → code units in the vector store, structure in the graph (seed 001 §4.2.3).

One pass over a set of files: hash each file and skip it when its content hash is unchanged;
parse the rest with tree-sitter; embed the units (embeddings are cached by text, so unchanged
units in a changed file cost nothing); replace the file's points and graph nodes; remember the
parse; finally resolve calls and inheritance across files for what changed. Removed files lose
their units and edges. Everything is timed by phase so the benchmark can say where time goes.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from indexer import (
    CodeUnit,
    FileIndex,
    iter_source_files,
    language_for_path,
    parse_source,
    resolve_relations,
)
from indexer.safe_read import RefusedFile
from indexer.walker import skip_reason
from memory_service.core.code import records as cr
from memory_service.core.code.links import is_index_link, unit_links
from memory_service.core.code.paths import PathPolicy
from memory_service.core.code.progress import UNIT, IndexProgress
from memory_service.core.code.schemas import IndexFileInput, IndexFileOutput
from memory_service.core.code.stale import code_changes
from memory_service.core.code.write import IndexWrites
from memory_service.core.errors import ValidationError
from memory_service.core.jobs import JobContext
from memory_service.core.models import utcnow
from memory_service.core.ports import GraphEdge, IndexedFile, IndexState, VectorPoint
from memory_service.core.records import MEMORY_LABEL, Stores
from memory_service.core.write.graph_sync import (
    GraphSync,
    op_delete_nodes,
    op_upsert_edges,
    op_upsert_nodes,
)
from memory_service.core.write.journal import code_body
from memory_service.core.write.linking import MemoryCatalog

# Told, after the indexer stored a change, which memory links touch code that changed or vanished
# ({code id: change in words}); returns how many memories it flagged (services.stale.StaleMarker).
CodeChangeHook = Callable[[list[GraphEdge], dict[str, str]], int]

logger = logging.getLogger(__name__)

# Units embedded per call while an index pass reports progress: the bar moves within a large
# file, and each call still fills the embedder's batches.
EMBED_CHUNK = 256


class CodeIndexer:
    """Indexes files into the stores; one indexing pass at a time (a lock serialises them)."""

    def __init__(
        self,
        stores: Stores,
        state: IndexState,
        paths: PathPolicy,
        project: str | None,
        batch_units: int = 512,
        on_code_change: CodeChangeHook | None = None,
        *,
        sync: GraphSync | None = None,
    ) -> None:
        self._stores = stores
        self._state = state
        self._paths = paths
        self._project_name = project
        self._batch_units = batch_units
        self._lock = threading.RLock()
        self._files: dict[str, FileIndex] | None = None  # every indexed file's parse, loaded lazily
        self._on_code_change = on_code_change  # flags memories citing what changed (services.stale)
        self._writes = IndexWrites(stores, sync)  # journal → vectors → outbox + state, then drain

    # ------------------------------------------------------------------ entry points

    def index_file(self, req: IndexFileInput) -> IndexFileOutput:
        path = self._paths.resolve(req.file_path, field="file_path", want="file")
        key = self._paths.key(path)
        language = language_for_path(path)
        if language is None:
            return IndexFileOutput(
                status="unsupported",
                functions=0,
                classes=0,
                relationships=0,
                file_path=key,
                message=f"No grammar for '{path.suffix or path.name}' files; supported: "
                "python, javascript, typescript, tsx, go, rust, java, c, cpp.",
            )
        try:
            raw = self._paths.read_input(path, req.file_path, field="file_path")
        except OSError as exc:
            raise _unreadable(key, f"unreadable: {exc.strerror or exc}") from None
        stats: dict[str, Any] = defaultdict(float)
        with self._lock:
            fi = self._parse_one(key, raw, language, force=req.force, stats=stats)
            if stats.get("failures"):
                raise _unreadable(key, stats["failures"][0]["error"])
            if fi is None:
                return IndexFileOutput(
                    status="skipped",
                    functions=0,
                    classes=0,
                    relationships=0,
                    file_path=key,
                    language=language,
                    message="Unchanged since it was last indexed (same content hash); force=true re-indexes.",
                )
            marker, relink_all = self._writes.begin_pass()
            self._store([fi], stats)
            linked = self._link(set(self._project()) if relink_all else {key}, stats)
            self._writes.end_pass(marker, relink_all)
        functions = sum(1 for u in fi.units if cr.collection_of(u) == cr.FUNCTIONS)
        contains = sum(1 for r in fi.relations if r.type.value in ("CONTAINS", "IMPORTS"))
        return IndexFileOutput(
            status="indexed",
            functions=functions,
            classes=len(fi.units) - functions,
            relationships=contains + linked,
            file_path=key,
            language=language,
            parse_errors=fi.parse_errors,
        )

    def index_directory(
        self,
        ctx: JobContext,
        directory: Path,
        include: list[str] | None,
        exclude: list[str] | None,
        *,
        force: bool,
        remove_missing: bool,
    ) -> dict[str, Any]:
        """The body of index_directory and reindex jobs; returns the job's stats."""
        started = time.perf_counter()
        stats: dict[str, Any] = defaultdict(float)
        skipped: Counter[str] = Counter()
        todo: list[tuple[Path, str]] = []
        walk = iter_source_files(
            directory, include, exclude, self._paths.max_file_bytes, roots=self._paths.roots
        )
        for entry in walk:
            if entry.skipped is None and entry.language:
                todo.append((entry.path, entry.language))
            else:
                skipped[str(entry.skipped)] += 1
        stats["walk_seconds"] = time.perf_counter() - started
        meter = IndexProgress(
            [_size(path) for path, _ in todo],
            lambda done, total, phase: ctx.progress(done, total, phase, unit=UNIT),
        )
        with self._lock:
            marker, relink_all = self._writes.begin_pass()
            seen: set[str] = set()
            changed: set[str] = set()
            batch: list[FileIndex] = []
            batch_units = 0
            for i, (path, language) in enumerate(todo):
                key = self._paths.key(path)
                raw = self._read_walked(path, key, seen, skipped, stats)
                fi = None if raw is None else self._parse_one(key, raw, language, force=force, stats=stats)
                if fi is not None:
                    batch.append(fi)
                    changed.add(fi.path)
                    batch_units += len(fi.units)
                meter.looked_at(i, batched=fi is not None)
                if batch_units >= self._batch_units:
                    self._store(batch, stats, meter.embedded)
                    meter.stored()
                    batch, batch_units = [], 0
            self._store(batch, stats, meter.embedded)
            removed = self._remove_missing(directory, seen) if remove_missing else 0
            meter.linking()
            self._link(set(self._project()) if relink_all else changed, stats, removed=removed > 0)
            self._writes.end_pass(marker, relink_all)
        stats.update(
            files_seen=len(todo),
            files_removed=removed,
            skipped_by_reason=dict(skipped),
            total_seconds=round(time.perf_counter() - started, 3),
        )
        for key in (
            "files_indexed",
            "files_unchanged",
            "files_failed",
            "files_with_parse_errors",
            "memories_marked_stale",
            "memory_links",
            "units",
            "lines",
        ):
            stats[key] = int(stats.get(key, 0))
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in stats.items()}

    # ------------------------------------------------------------------ steps

    def _read_walked(
        self, path: Path, key: str, seen: set[str], skipped: Counter[str], stats: dict[str, Any]
    ) -> bytes | None:
        """A walked file's bytes, or None: skipped when it has become what the walk skips since
        it was walked (a symlink on the way, a FIFO, too large), a failure when unreadable."""
        try:
            raw = self._paths.read(path)
        except RefusedFile as exc:
            skipped[skip_reason(exc)] += 1
            return None
        except OSError as exc:
            self._failure(stats, key, f"unreadable: {exc.strerror or exc}")
            raw = None
        seen.add(key)  # an unreadable file keeps what was indexed of it: the error may pass
        return raw

    def _parse_one(
        self, key: str, raw: bytes, language: str, *, force: bool, stats: dict[str, Any]
    ) -> FileIndex | None:
        """The file's parse, or None when it is unchanged (same content hash) or could not be parsed."""
        known = self._project().get(key)
        if not force and known is not None and known.content_hash == hashlib.sha256(raw).hexdigest():
            stats["files_unchanged"] += 1
            return None
        t0 = time.perf_counter()
        try:
            fi = parse_source(raw, language, key)
        except Exception as exc:  # a grammar crash on odd input must not stop the job
            logger.exception("parse failed for %s", key)
            self._failure(stats, key, f"parse failed: {type(exc).__name__}: {exc}")
            return None
        stats["parse_seconds"] += time.perf_counter() - t0
        if fi.parse_errors:
            stats["files_with_parse_errors"] += 1
        stats["units"] += len(fi.units)
        stats["lines"] += fi.line_count
        return fi

    def _failure(self, stats: dict[str, Any], key: str, reason: str) -> None:
        stats["files_failed"] += 1
        failures = stats.setdefault("failures", [])
        if len(failures) < 20:
            failures.append({"file": key, "error": reason})

    def _store(
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
        # Units naming requirements or components link to their memories (services.index_links).
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

    def _remove_missing(self, directory: Path, seen: set[str]) -> int:
        """Forget files under ``directory`` that were indexed before but are gone (or now excluded)."""
        prefix = self._paths.key(directory)
        gone = [k for k in self._project() if k not in seen and _under(k, prefix)]
        self.forget(gone)
        return len(gone)

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
        # The indexer's own links (services.index_links) are rewritten from the new parse instead.
        return [e for e in self._stores.graph.edges_between(MEMORY_LABEL, ids) if not is_index_link(e)]

    def _report(self, links: list[GraphEdge], changes: dict[str, str]) -> int:
        """Hand what changed to the hook; returns how many memories it flagged."""
        hits = [e for e in links if _code_end(e) in changes]
        if self._on_code_change is None or not hits:
            return 0
        return self._on_code_change(hits, changes)

    def _link(self, changed: set[str], stats: dict[str, Any], *, removed: bool = False) -> int:
        """Resolve CALLS/INHERITS for changed files and for the files that refer to their names."""
        if not changed and not removed:
            return 0
        t0 = time.perf_counter()
        files = list(self._project().values())
        names = {u.name for k in changed if (fi := self._project().get(k)) for u in fi.units}
        callers = {
            fi.path
            for fi in files
            if any(r.target_name and r.target_name.rsplit(".", 1)[-1] in names for r in fi.relations)
        }
        only = changed | callers
        relations = resolve_relations(files, only)
        edges = cr.graph_edges(relations, cr.labels_for(files))
        if edges:  # no vector write: straight into the outbox
            self._writes.apply(code_body([op_upsert_edges(edges)]), {}, {}, None, journaled=False)
        stats["link_seconds"] += time.perf_counter() - t0
        stats["relationships_linked"] = stats.get("relationships_linked", 0) + len(edges)
        return len(edges)

    def _project(self) -> dict[str, FileIndex]:
        if self._files is None:
            self._files = {
                f.path: FileIndex.model_validate(f.data) for f in self._state.list(with_data=True) if f.data
            }
        return self._files

    def totals(self) -> dict[str, Any]:
        return self._state.totals()


def _unreadable(key: str, reason: str) -> ValidationError:
    return ValidationError(
        f"Could not index '{key}': {reason}",
        code="VAL_FILE_UNREADABLE",
        details={"field": "file_path", "provided": key, "reason": reason},
        suggestion="Check that the file is readable source code; other files are not affected.",
    )


def _size(path: Path) -> int:
    """A walked file's size (0 when it vanished since: the read will say so)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _code_end(edge: GraphEdge) -> str:
    """The id at the code end of an edge between a memory and a code node."""
    return edge.target_id if edge.source_label == MEMORY_LABEL else edge.source_id


def _under(key: str, prefix: str) -> bool:
    return prefix in ("", ".") or key == prefix or key.startswith(prefix.rstrip("/") + "/")


def unsupported_language(language: str, supported: list[str]) -> ValidationError:
    return ValidationError(
        f"Unsupported language '{language}'",
        code="VAL_UNSUPPORTED_LANGUAGE",
        details={"field": "language", "provided": language, "allowed": supported},
        suggestion=f"Use one of: {', '.join(supported)} (or leave 'language' out to search all).",
    )
