"""Durable markers in the data directory's SQLite file (:class:`~memory_service.core.ports.Flags`).

Their table keeps the name it had when the markers rode on the write journal (``journal_flags``),
so a data directory keeps its flags.
"""

from __future__ import annotations

from memory_service.stores.local.db import LocalDB, _Store

_SCHEMA = """CREATE TABLE IF NOT EXISTS journal_flags (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
)"""


class LocalFlags(_Store):
    """Named yes/no markers, one row each (errors name the operations as they were named on the
    journal: ``journal.flag``, ``journal.set_flag``)."""

    def __init__(self, db: LocalDB) -> None:
        super().__init__(db)
        with db.transaction("flags schema") as conn:
            conn.execute(_SCHEMA)

    def get(self, name: str) -> bool | None:
        with self._db.cursor("journal.flag") as conn:
            row = conn.execute("SELECT value FROM journal_flags WHERE name = ?", (name,)).fetchone()
        return None if row is None else bool(row[0])

    def set(self, name: str, value: bool) -> None:
        with self._db.transaction("journal.set_flag") as conn:
            conn.execute(
                "INSERT INTO journal_flags(name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (name, int(value)),
            )
