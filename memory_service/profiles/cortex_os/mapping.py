"""Seed 003 ("cortex-os") mapped onto the services: memory_store, memory_retrieve, memory_update,
memory_delete and memory_stats.

Nothing here stores, ranks or validates on its own: a store is ``MemoryService.add``, a retrieve
is ``SearchService.search``, an update ``MemoryService.update``, a delete ``MemoryService.delete``.
What is seed 003's own is the translation:

* kinds: a kind that is one of the memory types is stored as that type; any other (free-form,
  e.g. ``meeting-notes``) is stored as type ``note`` with the kind as the record's ``label``. Read
  back, a record's kind is its label, else its type.
* tags are the record's tags (``metadata.tags``, which the services index).
* seed 003's update *replaces* tags and metadata, where the services merge: the replacement is
  sent as a merge that sets the old keys the new metadata lacks to null (which removes them).
* ids are our UUIDs; any other id that passes the seed's pattern names no memory (not_found).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import pydantic

from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.memory.schemas import MemoryAddInput, MemoryUpdateInput
from memory_service.core.models import MemoryRecord, MemoryStatus, MemoryType, utcnow
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import FLOAT_FIELDS, KEYWORD_FIELDS, MEMORIES, from_payload
from memory_service.core.redaction.sanitize import preview
from memory_service.core.scopes import FACETS
from memory_service.core.search.schemas import MemorySearchInput, SearchResult
from memory_service.core.validation import translate
from memory_service.profiles.cortex_os.schemas import (
    MAX_LIMIT,
    TAGS_KEY,
    DeleteData,
    DeleteInput,
    RetrieveData,
    RetrieveFilters,
    RetrieveInput,
    RetrieveResult,
    StatsData,
    StatsDetails,
    StatsInput,
    StoreData,
    StoreInput,
    UpdateChanges,
    UpdateData,
    UpdateInput,
    UpdateSnapshot,
)
from memory_service.profiles.services import ProfileServices

M = TypeVar("M", bound=pydantic.BaseModel)

# The engine's indexed payload fields, by the names seed 003 gives them (memory_stats details);
# the text itself is indexed twice over (dense vectors and BM25).
SEED_FIELD_NAMES = {
    "type": "kind",
    FACETS: "tags",
    "created_at_ts": "createdAt",
    "updated_at_ts": "updatedAt",
}
TYPES = frozenset(t.value for t in MemoryType)
_SCROLL_PAGE = 512


def parse(model: type[M], arguments: dict[str, Any]) -> M:
    """The arguments validated by seed 003's rules; a ValidationError lists every problem found as
    ``field: problem`` in ``details.problems`` (the strings the seed's ``details`` array holds).

    Raises:
        ValidationError: any rule broken (code and message as the other tools give them).
        SecurityError: unsafe metadata keys (raised by the model before any other rule runs).
    """
    try:
        return model.model_validate(arguments)
    except pydantic.ValidationError as exc:
        ours = translate(exc, model)  # our code (VAL_*) and details for the first problem
        problems = [_problem(e) for e in exc.errors(include_url=False)]
        raise ValidationError(
            f"Invalid input provided: {problems[0]}",
            code=ours.code,
            details={**ours.details, "problems": problems},
            suggestion="Fix each problem listed in details and send the call again.",
        ) from None


def _problem(error: Any) -> str:
    path = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{path}: {message}" if path else message


def iso_ms(moment: datetime) -> str:
    """Seed 003's timestamps: ISO-8601 in UTC with milliseconds and a Z."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def split_kind(kind: str) -> tuple[str, str | None]:
    """(memory type, label) a kind is stored as: a type as itself, anything else as a labelled note."""
    return (kind, None) if kind in TYPES else (MemoryType.NOTE.value, kind)


def kind_of(record: MemoryRecord) -> str:
    return record.label or record.type


def user_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata a seed-003 caller gave: the record's metadata without its tags."""
    return {k: v for k, v in metadata.items() if k != TAGS_KEY}


def replacement(
    current: dict[str, Any], metadata: dict[str, Any] | None, tags: list[str] | None
) -> dict[str, Any]:
    """The merge-update (null removes a key) that makes the record's metadata and tags the ones
    given; a part not given (None) is left as it is."""
    updates: dict[str, Any] = {}
    if metadata is not None:
        updates.update({key: None for key in user_metadata(current) if key not in metadata})
        updates.update(metadata)
    if tags is not None:
        updates[TAGS_KEY] = tags or None
    return updates


class CortexOs:
    """Seed 003's five operations over one process's services (profile_services.ProfileServices)."""

    def __init__(self, services: ProfileServices) -> None:
        self._services = services
        self._memory = services.memory
        self._stores = services.stores

    # ------------------------------------------------------------------ writes

    def store(self, req: StoreInput) -> StoreData:
        memory_type, label = split_kind(req.kind)
        metadata = {**(req.metadata or {}), **({TAGS_KEY: req.tags} if req.tags else {})}
        added = self._memory.add(
            MemoryAddInput(type=memory_type, content=req.text, metadata=metadata or None), label=label
        )
        record = self._memory.load(added.memory_id)  # what is stored (an identical store: the first)
        return StoreData(
            stored=True,
            id=record.id,
            kind=kind_of(record),
            tags=record.tags,
            textLength=len(record.content),
            metadataKeys=len(user_metadata(record.metadata)),
            redactedPreview=added.redacted_preview or preview(record.content),
        )

    def update(self, req: UpdateInput) -> UpdateData:
        memory_id = self._known_id(req.id)
        with self._memory.writing((memory_id, "id")):  # the replacement is computed from this read
            before = self._load(memory_id)
            updates = replacement(before.metadata, req.metadata, req.tags)
            touches_metadata = req.metadata is not None or req.tags is not None
            out = self._memory.update(
                MemoryUpdateInput(
                    memory_id=memory_id, content=req.text, metadata=updates if touches_metadata else None
                )
            )
            after = self._load(memory_id)
        fields = set(out.updated_fields)
        return UpdateData(
            id=after.id,
            updated=bool(fields),
            changes=UpdateChanges(
                text="content" in fields,
                tags=f"metadata.{TAGS_KEY}" in fields,
                metadata=any(f.startswith("metadata.") and f != f"metadata.{TAGS_KEY}" for f in fields),
            ),
            data=UpdateSnapshot(
                textPreview=preview(after.content),
                textLength=len(after.content),
                metadataKeys=len(user_metadata(after.metadata)),
            ),
            updatedAt=iso_ms(after.updated_at),
        )

    def delete(self, req: DeleteInput) -> DeleteData:
        memory_id = self._known_id(req.id)
        try:
            self._memory.delete(memory_id)
        except NotFoundError:
            raise _not_found(req.id) from None
        gone = self._records([memory_id]).get(memory_id)
        deleted_at = gone.deleted_at if gone is not None else None
        return DeleteData(id=memory_id, deleted=True, deletedAt=iso_ms(deleted_at or utcnow()))

    # ------------------------------------------------------------------ reads

    def retrieve(self, req: RetrieveInput) -> RetrieveData:
        types, labels = self._kind_filter(req.kind)
        # Type ``note`` also holds the labelled kinds: ask for all the engine may give, keep the
        # unlabelled ones.
        unlabelled_only = req.kind == MemoryType.NOTE.value
        found = self._services.search.search(
            MemorySearchInput(
                query=req.query,
                limit=MAX_LIMIT if unlabelled_only else req.limit,
                tags=req.tags or None,
                memory_types=types,
            ),
            labels=labels,
        )
        records = self._records([hit.memory_id for hit in found.results])
        results = [
            _result(hit, records.get(hit.memory_id))
            for hit in found.results
            if not (unlabelled_only and _label(records.get(hit.memory_id)))
        ][: req.limit]
        return RetrieveData(
            query=req.query,
            filters=RetrieveFilters(kind=req.kind, tags=req.tags),
            results=results,
            totalFound=len(results),
        )

    def stats(self, req: StatsInput) -> StatsData:
        """Counts by kind and text size from one pass over the active memories; the latest write
        (a delete included) from the store's update-time index."""
        by_kind: dict[str, int] = {}
        total_size = 0
        for payload in self._active_payloads():
            kind = payload.get("label") or str(payload.get("type"))
            by_kind[kind] = by_kind.get(kind, 0) + 1
            total_size += len(str(payload.get("content", "")).encode("utf-8", "surrogatepass"))
        total = sum(by_kind.values())
        latest = self._stores.vectors.latest(MEMORIES, None, "updated_at_ts", 1)
        last = from_payload(latest[0].payload).updated_at if latest else None
        details = None
        if req.includeDetails:
            details = StatsDetails(
                storageBackend=self._stores.vectors.health().backend,
                indexedFields=indexed_fields(),
                averageItemSize=round(total_size / total, 2) if total else 0,
            )
        return StatsData(
            totalItems=total,
            totalSize=total_size,
            itemsByKind=dict(sorted(by_kind.items())),
            lastActivity=iso_ms(last) if last else None,
            details=details,
        )

    # ------------------------------------------------------------------ helpers

    def _kind_filter(self, kind: str | None) -> tuple[list[str] | None, list[str] | None]:
        """(memory_types, labels) that select one kind."""
        if kind is None:
            return None, None
        memory_type, label = split_kind(kind)
        return [memory_type], [label] if label else None

    def _known_id(self, value: str) -> str:
        """Our ids are UUIDs: any other id that passed the seed's pattern names no memory."""
        try:
            return parse_uuid(value, field="id")
        except ValidationError:
            raise _not_found(value) from None

    def _load(self, memory_id: str) -> MemoryRecord:
        try:
            return self._memory.load(memory_id, field="id")
        except NotFoundError:
            raise _not_found(memory_id) from None

    def _records(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The stored records of these ids, whatever their status (one read)."""
        if not ids:
            return {}
        return {p.id: from_payload(p.payload) for p in self._stores.vectors.retrieve(MEMORIES, list(ids))}

    def _active_payloads(self) -> Iterator[dict[str, Any]]:
        flt = PayloadFilter(equals={"status": MemoryStatus.ACTIVE.value})
        offset: str | None = None
        while True:
            points, offset = self._stores.vectors.scroll(MEMORIES, flt, limit=_SCROLL_PAGE, offset=offset)
            for point in points:
                yield point.payload
            if offset is None:
                return


def indexed_fields() -> list[str]:
    """The seed-003 fields the engine keeps an index on."""
    indexed = set(KEYWORD_FIELDS) | set(FLOAT_FIELDS)
    return [name for field, name in SEED_FIELD_NAMES.items() if field in indexed] + ["text"]


def _label(record: MemoryRecord | None) -> str | None:
    return record.label if record is not None else None


def _result(hit: SearchResult, record: MemoryRecord | None) -> RetrieveResult:
    tags = hit.metadata.get(TAGS_KEY)
    return RetrieveResult(
        id=hit.memory_id,
        kind=(_label(record) or hit.type),
        text=hit.content,
        score=hit.relevance_score,
        tags=[str(t) for t in tags] if isinstance(tags, list) else [],
        createdAt=iso_ms(
            record.created_at if record is not None else datetime.fromisoformat(str(hit.created_at))
        ),
    )


def _not_found(memory_id: str) -> NotFoundError:
    return NotFoundError(
        f"Memory with ID '{memory_id}' not found",
        code="NF_MEMORY",
        details={"field": "id", "provided": memory_id},
        suggestion="Use an id memory_store returned, or find the memory with memory_retrieve "
        "(deleted memories are gone).",
    )
