"""The export half of a backup of server backends (``kind: export``), and its import on restore.

On servers the memories, their vectors and edges live in Qdrant and Neo4j, which a copy of the
data directory cannot reach; the data directory still holds the audit log, the votes and the
code index state. So a server backup is those local files plus ``memories.jsonl``, an export of
every memory (deleted ones and embeddings included) with its relationships and votes, and a
restore copies the files back and imports the export with ``conflict_resolution: overwrite``.

Three things need care, each handled here: the target servers must not already hold memories of
the project (an import would mix two histories); votes are both in the copied SQLite file and in
the export (the import adds a vote only when the store does not hold it, so none is doubled, and
the restore checks the votes table's row count); and the code index state would claim files are
indexed whose code vectors and graph are not on the new servers, so it is cleared.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from memory_service.core.context_vectors import context_vectors
from memory_service.core.errors import ConflictError, MemoryServiceError
from memory_service.core.portability.schemas import ExportMemoryInput, ImportMemoryInput, ImportMemoryOutput
from memory_service.core.records import CONTEXT_COLLECTIONS, MEMORIES, MEMORY_LABEL, memories_collection
from memory_service.settings import Settings

EXPORT_FILE = "memories.jsonl"
# (description, done, total), as backup.Progress
ProgressFn = Any


def local_skip(settings: Settings) -> set[str]:
    """Data-directory paths a server backup leaves out: a Qdrant local-mode folder inside it
    (that is the vector "server"; the export carries its memories)."""
    skip: set[str] = set()
    path = settings.qdrant.path
    if settings.qdrant.backend == "server" and path is not None:
        data_dir = settings.resolved_data_dir.resolve()
        folder = Path(path).expanduser().resolve()
        if folder.is_relative_to(data_dir) and folder != data_dir:
            skip.add(folder.relative_to(data_dir).as_posix())
    return skip


def export_into(services: Any, folder: Path, progress: ProgressFn) -> dict[str, Any]:
    """Write every memory (deleted ones too, with vectors, edges and votes) to folder/memories.jsonl."""
    out = services.portability.export(
        ExportMemoryInput(
            output_path=str(folder / EXPORT_FILE), include_embeddings=True, include_deleted=True
        ),
        lambda done, total: progress("exporting memories", done, total),
        trusted_path=True,
    )
    return {
        "file": EXPORT_FILE,
        "memories": out.memories_exported,
        "relationships": out.relationships_exported,
        "votes": out.votes_exported,
        "embeddings": out.embeddings_exported,
        "sha256": out.sha256,
    }


def servers_holdings(settings: Settings) -> dict[str, int]:
    """Memories the configured servers already hold for this project (collection prefix,
    graph namespace), read without opening the data directory."""
    from memory_service.stores import factory

    found: dict[str, int] = {}
    if settings.qdrant.backend == "server":
        server = factory.VECTORS["server"](settings, None)  # type: ignore[arg-type]
        vectors = context_vectors(server, CONTEXT_COLLECTIONS)  # opened as the service opens it
        try:
            vectors.ensure_collection(memories_collection(settings.embedding.dim))
            found["qdrant_memories"] = int(vectors.count(MEMORIES))
        finally:
            vectors.close()
    if settings.graph.backend == "neo4j":
        graph = factory.GRAPHS["neo4j"](settings, None)  # type: ignore[arg-type]
        try:
            found["neo4j_memory_nodes"] = int(graph.count_nodes_by_label().get(MEMORY_LABEL, 0))
        finally:
            graph.close()
    return found


def refuse_if_servers_hold_memories(settings: Settings) -> None:
    held = {k: n for k, n in servers_holdings(settings).items() if n}
    if not held:
        return
    where = []
    if "qdrant_memories" in held:
        q = settings.qdrant
        where.append(
            f"Qdrant local folder {q.path}"
            if q.path
            else f"Qdrant collections prefixed '{q.collection_prefix or ''}'"
        )
    if "neo4j_memory_nodes" in held:
        where.append(f"Neo4j namespace '{settings.graph.namespace}'")
    raise ConflictError(
        "The servers already hold memories for this project ("
        + ", ".join(f"{k}: {n}" for k, n in held.items())
        + "); restore never mixes a backup into existing memories",
        code="CON_SERVERS_NOT_EMPTY",
        details={"servers": held},
        suggestion="Restore into a fresh project on the servers (another MEMORY_QDRANT__COLLECTION_PREFIX "
        "and MEMORY_GRAPH__NAMESPACE, or new servers), or delete this project's data there first ("
        + "; ".join(where)
        + "). To add memories to a live project instead, use memory-cli import.",
    )


def clear_index_state(db_file: Path) -> int:
    """Forget which files were indexed (the code vectors and graph are not restored); rows removed."""
    conn = sqlite3.connect(db_file)
    try:
        with conn:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='index_files'")
            if exists.fetchone() is None:
                return 0
            removed = conn.execute("DELETE FROM index_files").rowcount
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(removed)
    finally:
        conn.close()


def import_from(services: Any, source: Path, progress: ProgressFn) -> ImportMemoryOutput:
    """Import the backup's export into the (empty) servers, replacing nothing but ourselves."""
    out: ImportMemoryOutput = services.portability.import_file(
        ImportMemoryInput(file_path=str(source), conflict_resolution="overwrite"),
        lambda done, total: progress("importing memories", done, total),
        trusted_path=True,
    )
    with contextlib.suppress(MemoryServiceError):  # left queued: the counts below show it
        services.sync.drain()
    return out


def import_problems(expected: dict[str, Any], got: ImportMemoryOutput, votes: tuple[int, int]) -> list[str]:
    """Where the import differs from the export it read; ``votes`` is (rows backed up, rows now)."""
    problems = []
    written = got.imported + got.updated
    if written != expected.get("memories"):
        problems.append(f"import.memories: expected {expected['memories']}, found {written}")
    if got.relationships_imported != expected.get("relationships"):
        problems.append(
            f"import.relationships: expected {expected['relationships']}, found {got.relationships_imported}"
        )
    if votes[0] != votes[1]:
        problems.append(f"sqlite_rows.votes: expected {votes[0]}, found {votes[1]}")
    return problems
