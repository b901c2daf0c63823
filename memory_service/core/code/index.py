"""Code indexing: files → code units in the vector store, structure in the graph (seed 001 §4.2.3).

One pass over a set of files: hash each file and skip it when its content hash is unchanged;
parse the rest with tree-sitter; embed the units (embeddings are cached by text, so unchanged
units in a changed file cost nothing); replace the file's points and graph nodes; remember the
parse; finally resolve calls and inheritance across files for what changed. Removed files lose
their units and edges. Everything is timed by phase so the benchmark can say where time goes.
Storing and forgetting files is :mod:`.replace`'s work; the passes, reading, parsing and linking
are here.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from indexer import (
    FileIndex,
    iter_source_files,
    language_for_path,
    parse_source,
    resolve_relations,
)
from indexer.safe_read import RefusedFile
from indexer.walker import skip_reason
from memory_service.core.code import records as cr
from memory_service.core.code.paths import PathPolicy
from memory_service.core.code.progress import UNIT, IndexProgress
from memory_service.core.code.replace import CodeChangeHook, FileReplacer
from memory_service.core.code.schemas import IndexFileInput, IndexFileOutput
from memory_service.core.code.write import IndexWrites
from memory_service.core.errors import ValidationError
from memory_service.core.jobs import JobContext
from memory_service.core.ports import IndexState
from memory_service.core.records import Stores
from memory_service.core.write.graph_sync import GraphSync, op_upsert_edges
from memory_service.core.write.journal import code_body

logger = logging.getLogger(__name__)


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
        self._state = state
        self._paths = paths
        self._batch_units = batch_units
        self._lock = threading.RLock()
        self._files: dict[str, FileIndex] | None = None  # every indexed file's parse, loaded lazily
        self._writes = IndexWrites(stores, sync)  # journal → vectors → outbox + state, then drain
        # Stores and forgets files; on_code_change flags memories citing what changed (stale.py).
        self._replacer = FileReplacer(
            stores, state, paths, project, self._writes, self._project, on_code_change
        )

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
            self._replacer.store([fi], stats)
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
                    self._replacer.store(batch, stats, meter.embedded)
                    meter.stored()
                    batch, batch_units = [], 0
            self._replacer.store(batch, stats, meter.embedded)
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

    def _remove_missing(self, directory: Path, seen: set[str]) -> int:
        """Forget files under ``directory`` that were indexed before but are gone (or now excluded)."""
        prefix = self._paths.key(directory)
        gone = [k for k in self._project() if k not in seen and _under(k, prefix)]
        self.forget(gone)
        return len(gone)

    def forget(self, keys: list[str]) -> None:
        """Forget these files: their units, nodes, edges and index-state rows."""
        self._replacer.forget(keys)

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


def _under(key: str, prefix: str) -> bool:
    return prefix in ("", ".") or key == prefix or key.startswith(prefix.rstrip("/") + "/")


def unsupported_language(language: str, supported: list[str]) -> ValidationError:
    return ValidationError(
        f"Unsupported language '{language}'",
        code="VAL_UNSUPPORTED_LANGUAGE",
        details={"field": "language", "provided": language, "allowed": supported},
        suggestion=f"Use one of: {', '.join(supported)} (or leave 'language' out to search all).",
    )
