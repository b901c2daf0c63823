"""VoteStore on the local SQLite database: one row per utility vote, indexed by memory.

Votes used to be read back from the audit log on every search. They now have their own table;
the audit log keeps recording each vote as a mutation. A data directory written before the table
existed gets its votes copied over from the audit log once, when the table is created.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from memory_service.core.ports import Vote
from memory_service.stores.local.db import LocalDB, _chunks, _marks, _Store

UTILITY_VOTE = "utility_vote"  # the audit operation memory_feedback writes (core/search/signals.py)

_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'votes'"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS votes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    problem_id TEXT NOT NULL,
    vote REAL NOT NULL,
    actor TEXT NOT NULL,
    timestamp TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS votes_memory ON votes(memory_id, seq);
"""
# Votes recorded before this table existed, in the order they were cast.
_FROM_AUDIT = (
    "INSERT INTO votes(memory_id, problem_id, vote, actor, timestamp) "
    "SELECT entity_id, COALESCE(json_extract(details, '$.problem_id'), ''), "
    "json_extract(details, '$.vote'), actor, timestamp FROM audit "
    "WHERE operation = ? AND json_type(details, '$.vote') IN ('integer', 'real') ORDER BY seq"
)


class LocalVoteStore(_Store):
    def __init__(self, db: LocalDB) -> None:
        super().__init__(db)
        with db.cursor("votes schema") as conn:
            existed = conn.execute(_EXISTS).fetchone() is not None
            conn.executescript(_SCHEMA)
        if not existed:
            with db.transaction("votes from audit") as conn:
                conn.execute(_FROM_AUDIT, (UTILITY_VOTE,))

    def add(self, votes: Sequence[Vote]) -> None:
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        rows = [(v.memory_id, v.problem_id, float(v.vote), v.actor, v.timestamp or now) for v in votes]
        with self._db.transaction("votes.add") as conn:
            conn.executemany(
                "INSERT INTO votes(memory_id, problem_id, vote, actor, timestamp) VALUES (?, ?, ?, ?, ?)",
                rows,
            )

    def of(self, memory_ids: Sequence[str], *, latest: int = 500) -> dict[str, list[float]]:
        ids = list(dict.fromkeys(memory_ids))
        out: dict[str, list[float]] = {}
        with self._db.cursor("votes.of") as conn:
            for chunk in _chunks(ids):
                rows = conn.execute(
                    f"SELECT memory_id, vote FROM votes WHERE memory_id IN ({_marks(len(chunk))})"
                    " ORDER BY seq",
                    chunk,
                )
                for memory_id, vote in rows:
                    out.setdefault(memory_id, []).append(float(vote))
        return {mid: votes[-latest:] for mid, votes in out.items()}

    def all_of(self, memory_ids: Sequence[str]) -> list[Vote]:
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, list[Vote]] = {}
        with self._db.cursor("votes.all_of") as conn:
            for chunk in _chunks(ids):
                rows = conn.execute(
                    "SELECT memory_id, problem_id, vote, actor, timestamp FROM votes "
                    f"WHERE memory_id IN ({_marks(len(chunk))}) ORDER BY seq",
                    chunk,
                )
                for memory_id, problem_id, vote, actor, timestamp in rows:
                    found.setdefault(memory_id, []).append(
                        Vote(memory_id, problem_id, float(vote), actor, timestamp)
                    )
        return [vote for mid in ids for vote in found.get(mid, [])]
