"""Memories that cite code go stale when it changes (issue 10, item 8).

The indexer reports, for each file it replaces or removes, which cited units and files changed
(body hash / content hash) or vanished (:func:`code_changes`) and the ``CITES`` (or any other)
edges from Memory nodes into them. :class:`StaleMarker` then flags each citing memory through the
normal write path, under its record lock, with an audit event: ``stale`` on the record (shown by
memory_get and memory_search) and on its graph node (get_related). memory_update clears it.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from indexer import CodeUnit, FileIndex
from memory_service.core.audit_event import audit_event
from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.memory.service import MemoryService, memory_node
from memory_service.core.models import StaleMark, utcnow
from memory_service.core.ports import GraphEdge
from memory_service.core.records import MEMORY_LABEL
from memory_service.core.write.graph_sync import op_upsert_nodes
from memory_service.core.write.writer import RecordWriter

logger = logging.getLogger(__name__)
MAX_REASON_CHARS = 1000
MAX_CODE_IDS = 20


def code_changes(old: FileIndex | None, new: FileIndex | None) -> dict[str, str]:
    """What happened to a file and its units between two parses: ``{code id: change in words}``;
    units and files whose hash is the same are left out (a moved but unchanged unit too)."""
    if old is None:
        return {}
    kept = {u.id: u for u in new.units} if new is not None else {}
    out: dict[str, str] = {}
    for unit in old.units:
        now = kept.get(unit.id)
        if now is None:
            out[unit.id] = f"{_what(unit)} removed"
        elif now.body_hash != unit.body_hash:
            out[unit.id] = f"{_what(unit)} changed (body hash {unit.body_hash[:8]}→{now.body_hash[:8]})"
    if new is None:
        out[old.path] = f"file {old.path} removed"
    elif new.content_hash != old.content_hash:
        out[old.path] = (
            f"file {old.path} changed (content hash {old.content_hash[:8]}→{new.content_hash[:8]})"
        )
    return out


def _what(unit: CodeUnit) -> str:
    return f"{unit.subkind or unit.kind.value} {unit.qualified_name} ({unit.file_path})"


class StaleMarker:
    """Flags the memories citing changed code; called by the indexer after it stored the change."""

    def __init__(self, memory: MemoryService, writer: RecordWriter, actor: str) -> None:
        self._memory = memory
        self._writer = writer
        self._actor = actor

    def mark(self, links: list[GraphEdge], changes: dict[str, str]) -> int:
        """Flag the memories at one end of ``links`` whose other end is in ``changes`` (an edge
        either way counts: reference links may point from the code to the memory); returns how
        many were flagged."""
        hits: dict[str, list[str]] = defaultdict(list)
        for edge in links:
            memory, code = (
                (edge.source_id, edge.target_id)
                if edge.source_label == MEMORY_LABEL
                else (edge.target_id, edge.source_id)
            )
            if code in changes and code not in hits[memory]:
                hits[memory].append(code)
        return sum(
            self._flag(memory_id, code_ids, "; ".join(changes[c] for c in code_ids))
            for memory_id, code_ids in hits.items()
        )

    def _flag(self, memory_id: str, code_ids: list[str], reason: str) -> int:
        try:
            with self._memory.writing((memory_id, "memory_id")):
                record = self._memory.load(memory_id)
                now = utcnow()
                reason = f"{reason} on {now.date().isoformat()}"
                if record.stale is not None:  # still unconfirmed: keep what was found before too
                    code_ids = list(dict.fromkeys([*record.stale.code_ids, *code_ids]))
                    reason = f"{record.stale.reason}; {reason}"
                new = record.model_copy(deep=True)
                new.stale = StaleMark(reason=_clip(reason), code_ids=code_ids[:MAX_CODE_IDS], at=now)
                new.version += 1
                details = {"version": new.version, "code_ids": new.stale.code_ids, "reason": new.stale.reason}
                self._writer.write(
                    [new],
                    graph_ops=[op_upsert_nodes([memory_node(new)])],
                    audit=[audit_event("mark_stale", "memory", new.id, self._actor, details)],
                    reembed=False,
                )
        except (NotFoundError, ValidationError):  # deleted since (or a node that is not a memory)
            logger.info("not flagging %s stale: no such active memory", memory_id)
            return 0
        return 1


def _clip(reason: str) -> str:
    return reason if len(reason) <= MAX_REASON_CHARS else "…" + reason[-(MAX_REASON_CHARS - 1) :]
