"""``memory-cli repair``'s file work on the embedded vector collections: set damaged files aside.

Why: a collection whose WAL or segment cannot be read stops the engine from loading it, so the
server refused to start and repair with it. The damaged part is moved (never deleted) to
``damaged-vectors-<collection>-<time>/`` beside ``vectors/``, and the collection is loaded again
from what is left: a damaged WAL -> the segments (everything up to their last flush); a damaged
segment -> the other segments and the WAL replayed over them; else a fresh collection. What the
moved files held and no other store does is then reported by the stores' cross-check, by id.
Checked on qdrant-edge: an emptied WAL file -> "invalid segment capacity: 0"; a zeroed one ->
"Illegal segment header"; a damaged ``segment.json`` -> "Failed to deserialize ...segment.json".
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memory_service.core.code import records as code_records
from memory_service.core.context_vectors import context_vectors
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.ports import CollectionSpec
from memory_service.core.records import CONTEXT_COLLECTIONS, memories_collection
from memory_service.settings import Settings
from memory_service.stores.graph.salvage import permission_problem

_SEGMENT = re.compile(r"/segments/([0-9a-f-]{36})/")


def collection_specs(dim: int) -> list[CollectionSpec]:
    """Every collection the server opens (the memories' context sibling loads with them)."""
    return [memories_collection(dim)] + [
        code_records.code_collection(name, dim) for name in code_records.CODE_COLLECTIONS
    ]


@dataclass
class VectorRepair:
    moved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _failure(root: Path, spec: CollectionSpec) -> ServiceUnavailableError | None:
    from memory_service.stores.qdrant.edge import EdgeVectorStore

    store = context_vectors(EdgeVectorStore(root), CONTEXT_COLLECTIONS)  # the memories' sibling too
    try:
        store.ensure_collection(spec)
    except ServiceUnavailableError as exc:
        return exc
    finally:
        with contextlib.suppress(ServiceUnavailableError):
            store.close()
    return None


def prepare(settings: Settings) -> VectorRepair:
    """Make every embedded collection loadable, moving aside what stops it (see the module doc)."""
    report = VectorRepair()
    root = settings.resolved_data_dir / "vectors"
    if settings.qdrant.backend != "edge" or not root.is_dir():
        return report
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    for spec in collection_specs(settings.embedding.dim):
        for _attempt in range(4):  # WAL, a segment or two, then the whole collection
            failure = _failure(root, spec)
            if failure is None:
                break
            if permission_problem(failure):
                raise ServiceUnavailableError(
                    f"The vector files cannot be opened for writing: {failure.message}",
                    code="SVC_VECTOR_PERMISSIONS",
                    details={"path": str(root)},
                    suggestion="Nothing is damaged: give the server's user write access to the files "
                    f"under {root} (chmod -R u+w; for an immutable file, chattr -i) and run it again.",
                )
            name = str(failure.details.get("collection") or spec.name)
            aside = root.parent / f"damaged-vectors-{name}-{stamp}"
            report.moved.append(_move_aside(root / name, failure.message, aside, report))
        else:
            raise ServiceUnavailableError(
                f"The vector collection '{spec.name}' does not load even with its damaged files set aside",
                code="SVC_VECTOR_STORE",
                details={"moved": report.moved},
                suggestion="Restore the data directory from a backup (memory-cli restore).",
            )
    return report


def _move_aside(collection: Path, message: str, aside: Path, report: VectorRepair) -> str:
    """Move the part the engine's message names: the WAL, one segment, else the whole collection."""
    aside.mkdir(parents=True, exist_ok=True)
    segment = _SEGMENT.search(message)
    if "WAL" in message and (collection / "wal").exists():
        part = collection / "wal"
    elif segment and (collection / "segments" / segment.group(1)).exists():
        part = collection / "segments" / segment.group(1)
    else:
        part = collection
    target = aside / part.name
    part.rename(target)
    if part.name == "segments":
        part.mkdir()
    report.notes.append(f"moved the damaged {part.relative_to(collection.parent.parent)} to {target}")
    return str(target)
