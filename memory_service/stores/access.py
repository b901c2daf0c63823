"""Refuse to start on store files the server cannot write, before any engine opens them.

Why: an unwritable file (``chattr +i``, ``chmod a-w``, another owner, a read-only mount) is not
damage, and each engine told it differently: qdrant-edge opened the collection and printed a
traceback at close ("Failed to flush segment state: Operation not permitted"), SQLite refused
with "attempt to write a readonly database" and no hint of permissions, and LadybugDB left the
server running without its graph. One check at start-up now names the files and says to restore
write access; nothing is moved or changed, and ``memory-cli repair`` refuses the same way (there
is nothing to repair). Only the embedded stores under the data directory are walked: the SQLite
file and its companions, the graph database and its companions (embedded graph), every file and
folder of ``vectors/`` (qdrant-edge), the presence record, and the folders holding them.
"""

from __future__ import annotations

import os
from pathlib import Path

from memory_service.core.errors import ServiceUnavailableError
from memory_service.settings import Settings
from memory_service.stores.graph.ladybug_files import graph_files
from memory_service.stores.graph.salvage import graph_path
from memory_service.stores.local.db import DB_FILENAME
from memory_service.stores.presence import RECORD_FILENAME

_NAMED = 5  # paths named in the message (all of them are in the details)
_SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def store_paths(settings: Settings) -> list[Path]:
    """The embedded stores' files and the folders holding them, as far as they exist."""
    data = settings.resolved_data_dir
    db = data / DB_FILENAME
    paths = [data, data / RECORD_FILENAME, db, *(db.with_name(db.name + s) for s in _SQLITE_COMPANIONS)]
    if settings.graph.backend == "embedded":
        graph = graph_path(settings)
        paths += [graph.parent, *graph_files(graph)]
    vectors = data / "vectors"
    if settings.qdrant.backend == "edge" and vectors.is_dir():
        paths.append(vectors)
        for folder, dirs, files in os.walk(vectors):
            paths += [Path(folder, name) for name in sorted(dirs) + sorted(files)]
    return list(dict.fromkeys(p for p in paths if p.exists()))


def check_writable(settings: Settings) -> None:
    """Raise ``SVC_STORE_READONLY`` naming the store files and folders this user cannot write."""
    locked = [p for p in store_paths(settings) if not os.access(p, os.W_OK)]
    if not locked:
        return
    named = ", ".join(str(p) for p in locked[:_NAMED])
    more = f" and {len(locked) - _NAMED} more" if len(locked) > _NAMED else ""
    raise ServiceUnavailableError(
        f"The store file {named}{more} cannot be written (immutable, read-only, owned by another "
        "user or on a read-only mount): the server does not start on a store it cannot write",
        code="SVC_STORE_READONLY",
        details={"paths": [str(p) for p in locked]},
        suggestion="Nothing is damaged and nothing was changed: give the server's user write access "
        "again (`chattr -i` for an immutable file, `chmod u+w`, or `chown` to that user) and start "
        "again; `memory-cli repair` has nothing to repair here.",
    )
