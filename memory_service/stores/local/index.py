"""IndexState on the local SQLite database: one row per indexed source file.

The parse of each file is kept (zlib-compressed JSON) so that an incremental reindex can
resolve calls across files without re-reading the unchanged ones.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from memory_service.core.ports import IndexedFile
from memory_service.stores.local.db import LocalDB, _chunks, _marks, _Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS index_files (
    path TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    language TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    indexed_at TEXT NOT NULL,
    units INTEGER NOT NULL DEFAULT 0,
    parse_errors INTEGER NOT NULL DEFAULT 0,
    data BLOB
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS index_files_root ON index_files(root);
"""
_COLUMNS = "path, root, language, content_hash, indexed_at, units, parse_errors"


class LocalIndexState(_Store):
    def __init__(self, db: LocalDB) -> None:
        super().__init__(db)
        with db.cursor("index schema") as conn:
            conn.executescript(_SCHEMA)

    def get(self, path: str) -> IndexedFile | None:
        with self._db.cursor("index get") as conn:
            row = conn.execute(f"SELECT {_COLUMNS}, data FROM index_files WHERE path = ?", (path,)).fetchone()
        return _row(row, with_data=True) if row else None

    def list(self, root: str | None = None, *, with_data: bool = False) -> list[IndexedFile]:
        columns = f"{_COLUMNS}, data" if with_data else _COLUMNS
        sql = f"SELECT {columns} FROM index_files"
        args: tuple[Any, ...] = ()
        if root is not None:
            sql += " WHERE root = ?"
            args = (root,)
        with self._db.cursor("index list") as conn:
            rows = conn.execute(sql + " ORDER BY path", args).fetchall()
        return [_row(r, with_data=with_data) for r in rows]

    def put(self, files: Sequence[IndexedFile]) -> None:
        rows = [
            (
                f.path,
                f.root,
                f.language,
                f.content_hash,
                f.indexed_at,
                f.units,
                f.parse_errors,
                zlib.compress(json.dumps(f.data).encode(), 1) if f.data is not None else None,
            )
            for f in files
        ]
        with self._db.transaction("index put") as conn:
            conn.executemany(
                f"INSERT OR REPLACE INTO index_files ({_COLUMNS}, data) VALUES (?,?,?,?,?,?,?,?)", rows
            )

    def delete(self, paths: Sequence[str]) -> None:
        with self._db.transaction("index delete") as conn:
            for chunk in _chunks(list(paths)):
                conn.execute(f"DELETE FROM index_files WHERE path IN ({_marks(len(chunk))})", tuple(chunk))

    def totals(self) -> dict[str, Any]:
        with self._db.cursor("index totals") as conn:
            langs = conn.execute("SELECT language, COUNT(*) FROM index_files GROUP BY language").fetchall()
            last = conn.execute("SELECT MAX(indexed_at) FROM index_files").fetchone()[0]
        languages = {lang: n for lang, n in langs}
        return {"files": sum(languages.values()), "languages": languages, "last_indexed": last}


def _row(row: Sequence[Any], *, with_data: bool) -> IndexedFile:
    data = None
    if with_data and row[7] is not None:
        data = json.loads(zlib.decompress(row[7]))
    path, root, language, content_hash, indexed_at, units, parse_errors = row[:7]
    return IndexedFile(path, root, language, content_hash, indexed_at, units, parse_errors, data)
