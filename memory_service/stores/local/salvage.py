"""Tell a damaged ``local.sqlite3`` at start-up and move it aside (never delete it).

Why: SQLite opens an emptied file as a new database and silently drops WAL frames it cannot
match, so an emptied ``local.sqlite3`` started "ok" with its audit history gone, while a zeroed
one ("file is not a database") refused to start and repair alike, and a deleted one started
degraded. Every way the file can break now gets the deleted one's treatment: the files are moved
to ``damaged-local-<time>/`` beside it, a new one is created, and the loss is an alarm until
``memory-cli repair``. A file that is only read-only is not damaged: it is left as it is (the
open reports the permission problem).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

_COMPANIONS = ("-wal", "-shm", "-journal")
_PERMISSION = ("readonly", "read-only", "unable to open", "Permission denied", "Operation not permitted")


def damage(path: Path) -> str | None:
    """Why the database at ``path`` (known to exist) is unusable, or None when it is fine."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
        try:
            check = conn.execute("PRAGMA quick_check").fetchone()
            tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'audit'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        if any(text in str(exc) for text in _PERMISSION):
            return None
        return f"could not be read ({exc})"
    if not check or check[0] != "ok":
        return f"failed SQLite's integrity check ({check[0] if check else 'no answer'})"
    if not tables or not tables[0]:
        return "held no tables (emptied)"
    return None


def move_aside(path: Path) -> Path:
    """Move the database and its companion files to ``damaged-local-<time>/``; returns it."""
    aside = path.parent / f"damaged-local-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    aside.mkdir(parents=True, exist_ok=True)
    for file in [path, *(path.with_name(path.name + s) for s in _COMPANIONS)]:
        if file.exists():
            file.rename(aside / file.name)
    return aside
