"""Which stores this data directory has held (``data_dir/stores.json``), so a loss is not a fresh start.

Why: every engine creates what is missing when it opens, so a removed vector collection, graph
or ``local.sqlite3`` used to come back empty without a word (issue 12). The record is written at
every start once the stores are open: what exists and how many memories there were. At the next
start, what the record says existed but is gone is a loss:

* the memories collection (the primary store): the server refuses to start (``SVC_STORE_MISSING``)
  until a backup is restored or ``memory-cli repair --accept-empty`` records the consent;
* the graph (derived): recreated empty, with an alarm until ``memory-cli repair`` rebuilds it;
* ``local.sqlite3`` (audit log, graph-sync queue, index state): recreated empty, with an alarm
  until ``memory-cli repair`` re-derives what it can and acknowledges the loss;
* the code collections (derived): the index state is cleared, so the next index run is a full one,
  with an alarm until code is indexed again.

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

from memory_service.core import code_records
from memory_service.core.errors import MemoryServiceError, ServiceUnavailableError
from memory_service.core.models import utcnow
from memory_service.core.ports import ComponentHealth, PayloadFilter
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores
from memory_service.settings import Settings
from memory_service.stores.graph_salvage import GraphRepair, graph_path
from memory_service.stores.local_db import DB_FILENAME

logger = logging.getLogger(__name__)
RECORD_FILENAME = "stores.json"
GRAPH_LOST, LOCAL_DB_LOST, CODE_INDEX_LOST = "graph_lost", "local_db_lost", "code_index_lost"
REPAIR = "Stop the server and run `memory-cli repair`"


class StorePresence:
    """The record of one data directory, its checks and the alarms they raise."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.path = settings.resolved_data_dir / RECORD_FILENAME
        self._data: dict[str, Any] = self._load()
        self._stores: Stores | None = None
        self.graph_repair: GraphRepair | None = None  # what memory-cli repair did to the graph files

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

    def raise_alarm(self, key: str, store: str, message: str, suggestion: str) -> None:
        logger.error("%s. %s", message, suggestion)
        alarms = self._data.setdefault("alarms", {})
        alarms[key] = {"store": store, "message": message, "suggestion": suggestion, "since": _now()}

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
        if self.seen("local_db") and not (data_dir / DB_FILENAME).exists():
            self.raise_alarm(
                LOCAL_DB_LOST, "local_db",
                f"{DB_FILENAME} was missing at start-up and was recreated empty: the audit log history, "
                "graph changes still queued and the code index state are lost",
                f"{REPAIR} (it restores graph nodes the lost queue held and acknowledges the loss), then "
                "index the code again; or restore the data directory from a backup.",
            )  # fmt: skip
        if self.seen("graph") and settings.graph.backend == "embedded" and not graph_path(settings).exists():
            self._graph_lost(f"the graph database {graph_path(settings)} was missing at start-up")

    def _graph_lost(self, why: str) -> None:
        self.raise_alarm(
            GRAPH_LOST, "graph",
            f"{why}: the graph was recreated empty, so the relationships of existing memories are "
            "missing (get_related, traces and ranking by links see none)",
            f"{REPAIR}: it rebuilds the Memory nodes and every relationship the records describe.",
        )  # fmt: skip

    def _memories_missing(self, why: str) -> ServiceUnavailableError:
        recorded = (self._seen(MEMORIES) or {}).get("count", 0)
        return ServiceUnavailableError(
            f"The memories vector collection, the primary store of memory records, is missing: {why} "
            f"(this data directory held {recorded} memories at its last start). "
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

    def check_graph(self, stores: Stores, pending: int) -> None:
        """After the outbox drained: memories exist but the graph holds no Memory node."""
        if pending or GRAPH_LOST in self.alarms:
            return
        try:
            active = stores.vectors.count(MEMORIES, PayloadFilter(equals={"status": "active"}))
            nodes = stores.graph.count_nodes_by_label().get(MEMORY_LABEL, 0) if active else 0
        except MemoryServiceError:  # unavailable (damaged or down): its own health says why
            return
        if active and not nodes:
            self._graph_lost(f"the graph holds no Memory node for the {active} memories")

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
            seen["local_db"] = {"exists": True}
        if self._settings.graph.backend == "embedded" and graph_path(self._settings).exists():
            seen["graph"] = {"exists": True}
        self._data["stores"] = seen
        self._data["recorded_at"] = _now()
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
