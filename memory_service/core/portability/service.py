"""export_memory / import_memory (seed 001 §4.2.5): memories to and from a JSONL file, losslessly.

This module decides where files may be and how they are written; the format is
:mod:`.portability_format`, the two directions :mod:`.portability_export` and
:mod:`.portability_import`. Through MCP (``trusted_path=False``) a path must be inside the project
root, an allowed root or the data directory (a missing directory there is created); the CLI and
backup pass ``trusted_path=True`` (the operator's shell may name any path, in a directory that
exists). An export never replaces an existing file unless asked to
(``overwrite``: the CLI's ``--force``); it is written to a temporary file beside the target and
moved into place at the end, so a failed export leaves no partial file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory_service.core.code.paths import PathPolicy, echo
from memory_service.core.errors import ConflictError, MemoryServiceError, NotFoundError, ValidationError
from memory_service.core.memory.service import MemoryService
from memory_service.core.models import utcnow
from memory_service.core.portability.export import Exporter
from memory_service.core.portability.format import FORMAT_VERSION, sha256_file
from memory_service.core.portability.importer import Importer
from memory_service.core.portability.reader import validate_file
from memory_service.core.portability.schemas import (
    ExportMemoryInput,
    ExportMemoryOutput,
    ImportMemoryInput,
    ImportMemoryOutput,
)
from memory_service.core.records import Stores
from memory_service.core.write.graph_sync import GraphSync
from memory_service.core.write.writer import RecordWriter

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PortabilityConfig:
    data_dir: Path
    project_root: Path
    allowed_roots: list[Path]
    actor: str
    dim: int
    service_version: str


class PortabilityService:
    def __init__(
        self,
        stores: Stores,
        sync: GraphSync,
        writer: RecordWriter,
        memory: MemoryService,
        config: PortabilityConfig,
    ) -> None:
        self._config = config
        self._data_dir = config.data_dir.expanduser().resolve()
        self._exporter = Exporter(stores, sync, dim=config.dim, service_version=config.service_version)
        self._importer = Importer(stores, writer, memory, config.actor)
        # Where MCP callers may read and write: the indexer's roots and the data directory.
        self._paths = PathPolicy(config.project_root, [*config.allowed_roots, self._data_dir])

    # ------------------------------------------------------------------ export

    def export(
        self,
        req: ExportMemoryInput,
        progress: Progress | None = None,
        *,
        trusted_path: bool = False,
        overwrite: bool = False,
    ) -> ExportMemoryOutput:
        """Write the selected memories to a new file (``overwrite``: replace an existing one)."""
        target = self._export_target(req.output_path, trusted_path)
        if not overwrite and os.path.lexists(target):
            raise ConflictError(
                f"'{echo(str(target))}' already exists; an export never replaces a file",
                code="CON_EXPORT_FILE_EXISTS",
                details={"field": "output_path", "provided": echo(str(target))},
                suggestion="Give an output_path that does not exist yet, or leave it out for a new "
                "timestamped file under the data directory's exports/; from a shell, memory-cli "
                "export --force replaces the file.",
            )
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                counts = self._exporter.write(req, out, progress)
                out.flush()
                os.fsync(out.fileno())
            _move_into_place(Path(tmp), target, overwrite=overwrite)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return ExportMemoryOutput(
            file_path=str(target),
            memories_exported=counts.memories,
            file_size_bytes=target.stat().st_size,
            relationships_exported=counts.relationships,
            votes_exported=counts.votes,
            embeddings_exported=counts.embeddings,
            sha256=sha256_file(target),
            format_version=FORMAT_VERSION,
        )

    def _export_target(self, raw: str | None, trusted: bool) -> Path:
        if raw is None:
            exports = self._data_dir / "exports"
            exports.mkdir(parents=True, exist_ok=True)
            stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
            target, n = exports / f"memories-{stamp}.jsonl", 1
            while os.path.lexists(target):
                n += 1
                target = exports / f"memories-{stamp}-{n}.jsonl"
            return target
        if trusted:
            path = Path(raw).expanduser().absolute()
            if not path.parent.is_dir():
                raise _no_directory(raw, str(path.parent))
            return path.parent.resolve() / path.name
        name = Path(raw).name
        if not name or name in (".", "..") or "\x00" in raw:
            raise ValidationError(
                f"'{echo(raw)}' does not name a file",
                code="VAL_INVALID_PATH",
                details={"field": "output_path", "provided": echo(raw)},
                suggestion="Give a file path such as exports/memories.jsonl (relative to the project root).",
            )
        candidate = Path(raw).expanduser()
        parent = str(candidate.parent) if str(candidate.parent) else "."
        try:
            try:
                directory = self._paths.resolve(parent, field="output_path", want="dir")
            except NotFoundError:  # made here, inside the roots, like the default exports/ folder
                directory = self._paths.make_dir(parent, field="output_path")
        except ValidationError as exc:
            raise self._explained(exc) from None
        if (directory / name).is_dir():
            raise ValidationError(
                f"'{echo(raw)}' is a directory",
                code="VAL_NOT_A_FILE",
                details={"field": "output_path", "provided": echo(raw)},
                suggestion="Name a file inside it, e.g. memories.jsonl.",
            )
        return directory / name

    # ------------------------------------------------------------------ import

    def import_file(
        self, req: ImportMemoryInput, progress: Progress | None = None, *, trusted_path: bool = False
    ) -> ImportMemoryOutput:
        """Validate the whole file, then write it (or, with dry_run, only count what would change)."""
        source = self._import_source(req.file_path, trusted_path)
        copies = self._data_dir / "imports"
        try:
            validated = validate_file(source, copies, source.name)
        except OSError as exc:
            raise ValidationError(
                f"'{echo(req.file_path)}' could not be read: {exc.strerror or exc}",
                code="VAL_IMPORT_UNREADABLE",
                details={"field": "file_path", "provided": echo(req.file_path)},
                suggestion="Check that the file exists and is readable by the server's user, and that "
                "the data directory has room for a working copy of it.",
            ) from None
        try:
            out = self._importer.run(
                validated,
                req.conflict_resolution,
                dry_run=req.dry_run,
                source=source.name,
                progress=progress,
            )
        finally:
            with contextlib.suppress(OSError):
                validated.copy_path.unlink()
        out.file_path = str(source)
        return out

    def _import_source(self, raw: str, trusted: bool) -> Path:
        if not trusted:
            try:
                return self._paths.resolve(raw, field="file_path", want="file")
            except MemoryServiceError as exc:
                raise self._explained(exc) from None
        path = Path(raw).expanduser().absolute()
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(
                f"Path '{echo(raw)}' does not exist",
                code="NF_PATH",
                details={"field": "file_path", "provided": echo(raw)},
                suggestion="Check the spelling; relative paths are taken from the current directory.",
            ) from None
        if not stat.S_ISREG(mode):
            raise ValidationError(
                f"'{echo(raw)}' is not a regular file",
                code="VAL_NOT_A_FILE",
                details={"field": "file_path", "provided": echo(raw)},
                suggestion="Give the path of a .jsonl file written by export_memory or memory-cli export.",
            )
        return path.resolve()

    def _explained(self, exc: MemoryServiceError) -> MemoryServiceError:
        """The path policy's errors, with suggestions about export files rather than indexing."""
        roots = ", ".join(str(r) for r in self._paths.roots)
        if exc.code == "VAL_PATH_OUTSIDE_ROOTS":
            exc.suggestion = (
                f"Export and import files must be inside the project root, MEMORY_INDEXER__ALLOWED_ROOTS "
                f"or the data directory ({roots}); leave output_path out to write under "
                f"{self._data_dir / 'exports'}, or use memory-cli export/import, which take any path."
            )
        elif exc.code == "VAL_NOT_A_DIRECTORY":
            exc.suggestion = "The directory part of output_path names a file: put the export in a directory."
        elif exc.code in ("VAL_NOT_A_FILE", "VAL_NOT_REGULAR_FILE"):
            exc.suggestion = "Give the path of a .jsonl file written by export_memory or memory-cli export."
        elif exc.code == "NF_PATH":
            exc.suggestion = (
                "Check the spelling; relative paths are taken from the project root "
                f"({self._paths.project_root}). Exports made without output_path are under "
                f"{self._data_dir / 'exports'}."
            )
        return exc


def _no_directory(raw: str, parent: str) -> NotFoundError:
    return NotFoundError(
        f"The directory of '{echo(raw)}' does not exist",
        code="NF_PATH",
        details={"field": "output_path", "provided": echo(raw), "directory": echo(parent)},
        suggestion="Create the directory first, or leave output_path out to write under the data "
        "directory's exports/.",
    )


def _move_into_place(tmp: Path, target: Path, *, overwrite: bool) -> None:
    """Rename the finished file to its name; without ``overwrite``, never over an existing file."""
    if overwrite:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)  # fails if the name was taken meanwhile, unlike rename
    except FileExistsError:
        raise ConflictError(
            f"'{echo(str(target))}' appeared while the export was written; it was left alone",
            code="CON_EXPORT_FILE_EXISTS",
            details={"field": "output_path", "provided": echo(str(target))},
            suggestion="Export again to another output_path.",
        ) from None
    except OSError:  # a file system without hard links
        if os.path.lexists(target):
            raise
        os.rename(tmp, target)
        return
    os.unlink(tmp)
