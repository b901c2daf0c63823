"""Which stores this data directory has held (``data_dir/stores.json``), so a loss is not a fresh start.

Why: every engine creates what is missing when it opens, so a removed vector collection, graph
or ``local.sqlite3`` used to come back empty without a word (issue 12). The record is written at
every start once the stores are open (what exists, how many memories and audit events, and a
"running" mark) and again at a clean stop (the counts then, the mark cleared): a start that finds
the mark follows a crash. At the next start, what the record says existed but is gone is a loss:

* the memories collection (the primary store): the server refuses to start (``SVC_STORE_MISSING``)
  until a backup is restored or ``memory-cli repair --accept-empty`` records the consent;
* the graph (derived): recreated empty, with an alarm until ``memory-cli repair`` rebuilds it;
* ``local.sqlite3`` (audit log, graph-sync queue, index state): recreated empty, with an alarm
  until ``memory-cli repair`` re-derives what it can and acknowledges the loss; a damaged one
  (emptied, cut, overwritten) is moved aside first and treated the same (:mod:`.local_salvage`);
* the code collections (derived): the index state is cleared, so the next index run is a full one,
  with an alarm until code is indexed again.

Then the stores are compared against each other (core/maintenance/cross_check.py): memories the
audit log or the graph know of without a record are named by id; active records without their
graph node and records without audit history are alarms too.

Alarms are kept in the record, so they survive restarts; health reports them as the ``stores``
component. A directory without a record (new, or written by an older version) starts normally.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memory_service.core.code import records as code_records
from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError
from memory_service.core.maintenance.cross_check import StoreGaps, counts, cross_check
from memory_service.core.models import utcnow
from memory_service.core.ports import ComponentHealth
from memory_service.core.records import MEMORIES, Stores
from memory_service.settings import Settings
from memory_service.stores.graph.salvage import GraphRepair, graph_path
from memory_service.stores.local import salvage as local_salvage
from memory_service.stores.local.db import DB_FILENAME
from memory_service.stores.qdrant.salvage import VectorRepair

logger = logging.getLogger(__name__)
RECORD_FILENAME = "stores.json"
GRAPH_LOST, LOCAL_DB_LOST, CODE_INDEX_LOST = "graph_lost", "local_db_lost", "code_index_lost"
MEMORIES_MISSING, AUDIT_LOST = "memories_missing", "audit_lost"
_LISTED = 20  # ids named in an alarm's message (all of them are in its ``ids``)
REPAIR = "Stop the server and run `memory-cli repair`"


class StorePresence:
    """The record of one data directory, its checks and the alarms they raise."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.path = settings.resolved_data_dir / RECORD_FILENAME
        self._data: dict[str, Any] = self._load()
        self._stores: Stores | None = None
        self.graph_repair: GraphRepair | None = None  # what memory-cli repair did to the graph files
        self.vector_repair: VectorRepair | None = None  # and to the vector files

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            logger.warning("store record %s unreadable (%s): starting without it", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def _seen(self, name: str) -> dict[str, Any] | None:
        """What the record says of a store at the last start, or None when it did not exist."""
        entry = self._data.get("stores", {}).get(name)
        return entry if isinstance(entry, dict) else None

    def seen(self, name: str) -> bool:
        return self._seen(name) is not None

    @property
    def alarms(self) -> dict[str, dict[str, str]]:
        return dict(self._data.get("alarms", {}))

    def raise_alarm(self, key: str, store: str, message: str, suggestion: str, **extra: Any) -> None:
        logger.error("%s. %s", message, suggestion)
        alarms = self._data.setdefault("alarms", {})
        since = alarms.get(key, {}).get("since") or _now()
        alarms[key] = {"store": store, "message": message, "suggestion": suggestion, "since": since, **extra}

    def clear(self, keys: Iterable[str]) -> list[str]:
        alarms = self._data.setdefault("alarms", {})
        return [key for key in keys if alarms.pop(key, None) is not None]

    # ------------------------------------------------------------------ checks

    def check_files(self, *, accept_empty: bool) -> None:
        """Before the engines open (they would create what is missing): embedded files only."""
        settings, data_dir = self._settings, self._settings.resolved_data_dir
        shard = data_dir / "vectors" / MEMORIES / "edge_config.json"
        if (
            self.seen(MEMORIES)
            and settings.qdrant.backend == "edge"
            and not accept_empty
            and not shard.exists()
        ):
            raise self._memories_missing(f"{data_dir / 'vectors' / MEMORIES} is gone")
        db = data_dir / DB_FILENAME
        why = "was missing at start-up" if not db.exists() else None
        if why is None and self.seen("local_db") and (damage := local_salvage.damage(db)) is not None:
            why = f"{damage}; it was moved to {local_salvage.move_aside(db)}"
        if self.seen("local_db") and why is not None:
            self.raise_alarm(
                LOCAL_DB_LOST, "local_db",
                f"{DB_FILENAME} {why} and was recreated empty: the audit log history, "
                "graph changes still queued and the code index state are lost",
                f"{REPAIR} (it restores graph nodes the lost queue held and acknowledges the loss), then "
                "index the code again; or restore the data directory from a backup.",
            )  # fmt: skip
        if self.seen("graph") and settings.graph.backend == "embedded" and not graph_path(settings).exists():
            path = graph_path(settings)
            self._graph_lost(f"the graph database {path} was missing at start-up and was recreated empty")

    def _graph_lost(self, why: str) -> None:
        self.raise_alarm(
            GRAPH_LOST, "graph",
            f"{why}: the relationships of those memories are missing from the graph (get_related, "
            "traces and ranking by links see none)",
            f"{REPAIR}: it rebuilds the Memory nodes and every relationship the records describe.",
        )  # fmt: skip

    def _memories_missing(self, why: str) -> ServiceUnavailableError:
        recorded = (self._seen(MEMORIES) or {}).get("count", 0)
        when = "when it was last stopped" if self._data.get("stopped_at") else "at its last start"
        return ServiceUnavailableError(
            f"The memories vector collection, the primary store of memory records, is missing: {why} "
            f"(this data directory held {recorded} memories {when}). "
            "The server does not start empty in its place",
            code="SVC_STORE_MISSING",
            details={"store": MEMORIES, "data_dir": str(self._settings.resolved_data_dir),
                     "recorded_memories": recorded},
            suggestion="Restore the data directory from a backup (memory-cli restore), or, to start "
            "with no memories on purpose, run `memory-cli repair --accept-empty`.",
        )  # fmt: skip

    def check_vectors(self, stores: Stores, *, accept_empty: bool) -> None:
        """Once the collections are open: a memory count fallen to 0 (any backend); code
        collections emptied while the index state lists files."""
        recorded = (self._seen(MEMORIES) or {}).get("count", 0)
        if recorded and not accept_empty and stores.vectors.count(MEMORIES) == 0:
            raise self._memories_missing(f"it now holds 0 points, not {recorded}")
        listed = stores.index_state.list()
        files = len(listed)
        if sum(f.units for f in listed) and self._code_points(stores) == 0:
            stores.index_state.delete([f.path for f in listed])
            self.raise_alarm(
                CODE_INDEX_LOST, "code",
                f"the code collections were missing or empty while {files} files were recorded as "
                "indexed: the code index is lost (search_code and code links find nothing)",
                "Index the code again (memory-cli index <dir>, or index_directory); the index state "
                "was cleared so that every file is indexed.",
            )  # fmt: skip

    def check_graph(self, pending: int, gaps: StoreGaps) -> None:
        """After the outbox drained: active memories without their graph node."""
        if pending or GRAPH_LOST in self.alarms or not gaps.graph_readable or not gaps.nodes_missing:
            return
        self._graph_lost(f"the graph holds no Memory node for {gaps.nodes_missing} active memories")

    def check_records(self, stores: Stores, *, full: bool = False) -> StoreGaps:
        """Once crash recovery ran: the stores compared (core/maintenance/cross_check.py), id by id
        after an unclean stop. Raises (or clears) the alarms of missing records and lost audit."""
        stopped = self._data.get("stopped_counts") if self._data.get("stopped_at") else None
        gaps = cross_check(stores, full=full or bool(self._data.get("running")), recorded=stopped)
        if gaps.missing_records:
            ids = gaps.missing_records
            more = f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else ""
            named = ", ".join(ids[:_LISTED]) + more
            self.raise_alarm(
                MEMORIES_MISSING, MEMORIES,
                f"{len(ids)} memories known to the audit log or the graph have no record in the vector "
                f"store (memory_get answers NF_MEMORY): {named}",
                "No other store holds their content. Stop the server and restore the data directory "
                "from a backup (memory-cli restore); `memory-cli repair` first sets damaged vector files "
                "aside and reports them; `memory-cli repair --accept-loss` writes them off (audited).",
                ids=ids,
            )  # fmt: skip
        elif gaps.compared_ids:
            self.clear([MEMORIES_MISSING])
        recorded = (self._seen("local_db") or {}).get("audit_rows", 0)
        rows = stores.audit.count()
        if rows < recorded or gaps.unaudited:
            lost = f"{gaps.unaudited} memories have no event in the audit log"
            if rows < recorded:
                lost = f"the audit log holds {rows} events where it held {recorded}"
            self.raise_alarm(
                AUDIT_LOST, "local_db",
                f"{lost}: its history was lost",
                "Restore the data directory from a backup to get it back; `memory-cli repair` "
                "records an event for each memory from its record and acknowledges the loss.",
            )  # fmt: skip
        return gaps

    def _code_points(self, stores: Stores) -> int:
        return sum(stores.vectors.count(name) for name in code_records.CODE_COLLECTIONS)

    # ------------------------------------------------------------------ record and report

    def record(self, stores: Stores) -> None:
        """What exists now (the next start compares against it), with the alarms; atomic."""
        self._stores = stores
        data_dir = self._settings.resolved_data_dir
        try:
            seen: dict[str, Any] = {MEMORIES: {"count": stores.vectors.count(MEMORIES)}}
        except MemoryServiceError as exc:
            logger.warning("store record not updated: %s", exc.message)
            return
        if (data_dir / DB_FILENAME).exists():
            seen["local_db"] = {"exists": True, "audit_rows": stores.audit.count()}
        if self._settings.graph.backend == "embedded" and graph_path(self._settings).exists():
            seen["graph"] = {"exists": True}
        self._data["stores"] = seen
        self._data["recorded_at"] = _now()
        self._data["running"] = True  # until record_stop: a start that finds it set follows a crash
        self._data.pop("stopped_at", None)
        self._data.pop("stopped_counts", None)
        self.save()

    def record_stop(self) -> None:
        """At a clean stop: the counts as they are now (a refusal names what was lost)."""
        if self._stores is None:
            return
        try:
            now = counts(self._stores)
        except MemoryServiceError as exc:
            logger.warning("store record not updated at stop: %s", exc.message)
            return
        stores = self._data.setdefault("stores", {})
        stores[MEMORIES] = {"count": now["memories"]}
        if "local_db" in stores:
            stores["local_db"]["audit_rows"] = now["audit_rows"]
        self._data["stopped_counts"] = now
        self._data["running"] = False
        self._data["stopped_at"] = _now()
        self.save()

    def save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as out:
                json.dump(self._data, out, indent=2, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:  # a read-only directory: the alarms are still in memory
            logger.warning("cannot write the store record %s: %s", self.path, exc)

    def health(self) -> ComponentHealth:
        alarms = self.alarms
        if CODE_INDEX_LOST in alarms and self._stores is not None and self._code_points(self._stores):
            self.clear([CODE_INDEX_LOST])  # indexed again since
            self.save()
            alarms.pop(CODE_INDEX_LOST)
        if not alarms:
            return ComponentHealth("stores", "ok", "data-dir", detail=str(self.path))
        detail = " | ".join(
            f"{a['message']} (since {a['since']}). {a['suggestion']}" for a in alarms.values()
        )
        return ComponentHealth("stores", "degraded", "data-dir", detail=detail, extra={"alarms": alarms})


def _now() -> str:
    return utcnow().isoformat()


def record_path(data_dir: Path) -> Path:
    return Path(data_dir) / RECORD_FILENAME
