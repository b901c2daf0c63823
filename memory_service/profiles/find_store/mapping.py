"""Seed 004 ("cortex-find-store"): memory.find and memory.store as a thin mapping onto the services.

Nothing here stores, ranks or governs on its own. A knowledge item becomes one memory (a long
section: several) whose type is its kind (a ``decision`` is a ``design`` memory with
``metadata.design_type`` ADR, so the accepted-ADR rule and every design tool apply to it), whose
content is the item's data written out as text (what search embeds and matches) and whose
metadata is the data itself (what TTLs, staleness and governance read: ``status``, ``merged_at``,
``last_verified_at``). MemoryService.add stores it (scope, dedupe, audit); a repeat under the same
idempotency key with other data goes through MemoryService.update (versions, governance, audit).
memory.find is SearchService.search with the seed's names, ranked by the seed's formula (FR-024:
0.4 relevance + 0.3 recency + 0.2 scope proximity + 0.1 citations, whatever the server's ranking
settings), read back as hits of the nine kinds.

Errors keep our precise codes in ``details.code`` and carry the seed's five (FR-054) as
``error_code``: see :func:`seed_errors.seed_code`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_service.core.errors import ConflictError, MemoryServiceError, ValidationError
from memory_service.core.limits import clip_text
from memory_service.core.memory.schemas import MemoryAddInput, MemoryUpdateInput
from memory_service.core.memory.service import MemoryService
from memory_service.core.models import MemoryRecord, MemoryStatus, Scope
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import MEMORIES, Stores, from_payload
from memory_service.core.redaction.sanitize import scrub_text, scrub_value
from memory_service.core.search.schemas import MemorySearchInput, TimeRange
from memory_service.core.search.service import SearchService
from memory_service.core.validation import validate_input
from memory_service.core.write.dedupe import dedupe_key
from memory_service.core.write.rules import CHAIN_KEYS, check_governed_update, is_locked_spec
from memory_service.profiles.chunking import MAX_SECTION_CHARS
from memory_service.profiles.find_store.hits import STRATEGY, citations, hit_title, snippet, suggestion_text
from memory_service.profiles.find_store.items import Draft, check_data, drafts_for, kind_of, memory_type_of
from memory_service.profiles.find_store.schemas import (
    FindDebug,
    FindInput,
    FindOutput,
    Hit,
    StoredItem,
    StoreError,
    StoreItem,
    StoreOutput,
    StoreRequest,
)
from memory_service.profiles.find_store.seed_errors import seed_error
from memory_service.profiles.services import ProfileServices
from memory_service.settings import RANKING_PROFILES

# Called with a record's previous version once an update of it went through.
Refresh = Callable[[MemoryRecord], None]


# --------------------------------------------------------------------------- the two operations


class FindStore:
    """memory.find and memory.store over the shared services (built per call from the services)."""

    def __init__(
        self, memory: MemoryService, search: SearchService, stores: Stores, project: str | None
    ) -> None:
        self._memory = memory
        self._search = search
        self._stores = stores
        self._project = project  # the caller's (an item's scope may name another)

    @classmethod
    def of(cls, services: ProfileServices) -> FindStore:
        return cls(services.memory, services.search, services.stores, services.settings.project)

    # ------------------------------------------------------------------ memory.find

    def find(self, req: FindInput) -> FindOutput:
        """SearchService.search under the seed's names; hits are read back as the nine kinds."""
        # Without `types`: every memory in scope, whichever profile stored it (FR-028 filters only).
        types = list(dict.fromkeys(memory_type_of(k) for k in req.types)) if req.types else None
        time_range = (
            TimeRange(start=req.time_range.since, end=req.time_range.until) if req.time_range else None
        )
        out = self._search.search(
            MemorySearchInput(
                query=req.query,
                memory_types=types,
                scope=req.scope,
                time_range=time_range,
                limit=req.top_k,
                mode=req.mode,
            ),
            weights=RANKING_PROFILES["seed004"],  # FR-024, this profile's ranking (not a setting)
        )
        records = self._records([r.memory_id for r in out.results])
        hits = []
        for result in out.results:
            kind = kind_of(result.type)
            record = records.get(result.memory_id)
            metadata = result.metadata
            hits.append(
                Hit(
                    kind=kind,
                    id=result.memory_id,
                    snippet=snippet(result.content, req.query),
                    score=result.relevance_score,
                    title=hit_title(result.title, metadata),
                    tags=[str(t) for t in metadata.get("tags") or [] if isinstance(t, str)],
                    last_verified=_last_verified(metadata, record, result.created_at),
                    route_used=result.route_used,
                    confidence=result.confidence,
                    citations=citations(metadata),
                    scope=record.scope.model_dump(exclude_none=True) if record else {},
                    stale=result.stale,
                )
            )
        suggestions = [suggestion_text(s) for s in out.suggestions]
        if out.suggestions and not _widened(req):
            suggestions.append(
                "Widen the scope: scope {'branch': '*'} searches every branch of the project, "
                "{'branch': 'main'} the main branch"
            )
        debug = FindDebug(
            mode=out.mode,
            route=out.route,
            strategy=STRATEGY.get(out.route, out.route),
            query_time_ms=out.query_time_ms,
            total=len(hits),
            search_mode=out.search_mode,
            model_status=out.model_status,
            cached=out.cached,
            warnings=out.warnings,
        )
        return FindOutput(hits=hits, suggestions=list(dict.fromkeys(suggestions)), debug=debug)

    def _records(self, ids: list[str]) -> dict[str, MemoryRecord]:
        """The found records by id, for what a search result does not carry (scope, updated_at)."""
        if not ids:
            return {}
        points = self._stores.vectors.retrieve(MEMORIES, ids)
        return {p.id: from_payload(p.payload) for p in points}

    # ------------------------------------------------------------------ memory.store

    def store(self, request: StoreRequest) -> StoreOutput:
        """Each item validated and stored on its own (partial success): a bad item is reported in
        ``errors`` with its index, the others are stored."""
        stored: list[StoredItem] = []
        errors: list[StoreError] = []
        for index, raw in enumerate(request.items):
            try:
                stored.append(self._store_item(index, raw))
            except MemoryServiceError as exc:
                errors.append(StoreError(index=index, **seed_error(in_item(exc, f"items[{index}]"))))
        return StoreOutput(stored=stored, errors=errors)

    def _store_item(self, index: int, raw: Any) -> StoredItem:
        prefix = f"items[{index}]"
        if not isinstance(raw, dict):
            raise ValidationError(
                f"Item {prefix} must be an object",
                code="VAL_INVALID_FIELD_TYPE",
                details={"field": prefix, "expected": "object", "provided_type": type(raw).__name__},
                suggestion="Give each item as {kind, scope, data} plus optional tags, source, "
                "idempotency_key and ttl_policy.",
            )
        item = validate_input(StoreItem, raw, field_prefix=f"{prefix}.")
        data = check_data(item.kind, item.data, field=f"{prefix}.data")
        # Either body: a blank body_md makes body_text the one stored.
        bodies = (
            [getattr(data, b, None) or "" for b in ("body_md", "body_text")] if item.kind == "section" else []
        )
        body = max(bodies, key=len, default="")
        if len(body) > MAX_SECTION_CHARS:
            raise ValidationError(
                f"Section body is {len(body)} characters; one item takes at most {MAX_SECTION_CHARS}",
                code="VAL_TOO_LONG",
                details={"field": f"{prefix}.data", "max_length": MAX_SECTION_CHARS, "length": len(body)},
                suggestion="Store a long document as several section items (e.g. one per chapter).",
            )
        drafts = drafts_for(item, data)
        spec = self._spec_edited(item, drafts, prefix)
        if spec is not None:
            edited = self._refresh(spec.id, item, drafts[0], prefix, self._drop_chunks([]))
            record_id, status, expires = edited
            return StoredItem(index=index, id=record_id, kind=item.kind, status=status, expires_at=expires)
        if len(drafts) > 1:
            ids, status, expires = self._write_section(item, drafts, prefix)
            return StoredItem(
                index=index, id=ids[0], kind=item.kind, status=status, chunk_ids=ids, expires_at=expires
            )
        # A section stored whole may have been chunked before: its old chunks go once it is rewritten.
        drop = self._drop_chunks([]) if item.kind == "section" else None
        record_id, status, expires = self._write(item, drafts[0], prefix, on_refresh=drop)
        return StoredItem(index=index, id=record_id, kind=item.kind, status=status, expires_at=expires)

    def _write_section(
        self, item: StoreItem, drafts: list[Draft], prefix: str
    ) -> tuple[list[str], str, str | None]:
        """A chunked section: the later chunks first, then the first one, which lists the others'
        ids (``next_chunk_ids``); when a keyed section shrinks, chunks it no longer has are deleted.
        Every chunk's key is checked first: a key another kind holds would refuse the first chunk
        only after the others were written."""
        self._check_keys(item, drafts, prefix)
        results = [self._write(item, draft, prefix) for draft in reversed(drafts[1:])][::-1]
        following = [r[0] for r in results]
        first = drafts[0]
        first.metadata["next_chunk_ids"] = following
        drop = self._drop_chunks(following)
        head_id, head_status, expires = self._write(item, first, prefix, on_refresh=drop)
        statuses = {head_status, *(r[1] for r in results)}
        status = statuses.pop() if len(statuses) == 1 else "updated"
        return [head_id, *following], status, expires

    def _spec_edited(self, item: StoreItem, drafts: list[Draft], prefix: str) -> MemoryRecord | None:
        """The approved specification (FR-037) a section item edits without its idempotency key:
        the locked section of the same title in the item's scope, when the item's own key names no
        memory. Such an edit goes through MemoryService.update like a keyed one, so the write-lock
        holds whichever key the edit carries (none, or another): refused without a
        ``data.spec_version`` bump, the same content skipped. A new version long enough to be
        chunked is refused unless bumped; bumped, it is stored as a new section."""
        if item.kind != "section":
            return None
        scope = self._memory.write_scope(item.scope, drafts[0].memory_type, field=f"{prefix}.scope")
        key = drafts[0].idempotency_key
        if key is not None and self._memory.holder_of(dedupe_key(drafts[0].memory_type, scope, {}, "", key)):
            return None  # the item's key names its memory: the keyed path governs it
        title = str(drafts[0].metadata.get("title") or "").strip()[:200]  # as derive_title keeps it
        flt = PayloadFilter(
            equals={"status": MemoryStatus.ACTIVE.value, "type": drafts[0].memory_type, "title": title}
        )
        points, _ = self._stores.vectors.scroll(MEMORIES, flt, limit=50)
        specs = [from_payload(p.payload) for p in points]
        spec = next(
            (
                r
                for r in specs
                if r.scope == scope and is_locked_spec(r) and r.metadata.get("chunk_index") in (None, 0)
            ),
            None,
        )
        if spec is None or len(drafts) == 1:
            return spec
        draft = drafts[0]
        check_governed_update(spec, draft.content, {**draft.metadata})  # CON_SPEC_LOCKED unless bumped
        return None

    def _check_keys(self, item: StoreItem, drafts: list[Draft], prefix: str) -> None:
        """CON_IDEMPOTENCY_KEY if an active memory of another type holds one of the drafts' keys
        (what MemoryService.add would answer with, and _refresh refuse)."""
        given = item.scope.project if "project" in item.scope.model_fields_set else self._project
        project = given.strip() if given else None
        if not project:  # MemoryService.add refuses the first chunk, before anything is written
            return
        for draft in drafts:
            if draft.idempotency_key is None:
                continue
            key = dedupe_key(draft.memory_type, Scope(project=project), {}, "", draft.idempotency_key)
            holder = self._memory.holder_of(key)
            if holder is not None and holder.type != draft.memory_type:
                raise _key_conflict(holder, item, draft, prefix)

    def _drop_chunks(self, keep: list[str]) -> Refresh:
        """After the first chunk of a keyed section is rewritten: delete the chunks its previous
        version listed that this one no longer has (the section shrank)."""

        def drop(previous: MemoryRecord) -> None:
            listed = previous.metadata.get("next_chunk_ids")
            for old in listed if isinstance(listed, list) else []:
                if isinstance(old, str) and old not in keep:
                    try:
                        self._memory.delete(old)
                    except MemoryServiceError:  # gone already (deleted or expired): nothing to do
                        continue

        return drop

    def _write(
        self, item: StoreItem, draft: Draft, prefix: str, *, on_refresh: Refresh | None = None
    ) -> tuple[str, str, str | None]:
        """One memory through MemoryService.add: (id, inserted | updated | skipped_dedupe, expires)."""
        add = validate_input(
            MemoryAddInput,
            {
                "type": draft.memory_type,
                "content": draft.content,
                "metadata": draft.metadata,
                "scope": item.scope,
                "idempotency_key": draft.idempotency_key,
                "ttl_policy": item.ttl_policy,
            },
        )
        out = self._memory.add(add)
        if out.status == "created":
            return out.memory_id, "inserted", out.expires_at
        if draft.idempotency_key is None:
            return out.memory_id, "skipped_dedupe", _stamp(self._memory.load(out.memory_id))
        return self._refresh(out.memory_id, item, draft, prefix, on_refresh)

    def _refresh(
        self, memory_id: str, item: StoreItem, draft: Draft, prefix: str, on_refresh: Refresh | None
    ) -> tuple[str, str, str | None]:
        """The same idempotency key with other data: MemoryService.update, where governance applies
        (an accepted decision refuses: CON_IMMUTABLE_DECISION); the same data: skipped_dedupe."""
        record = self._memory.load(memory_id)
        if record.type != draft.memory_type:
            raise _key_conflict(record, item, draft, prefix)
        content = scrub_text(draft.content)[0]
        metadata = MemoryService.check_new_metadata(
            draft.memory_type, scrub_value(draft.metadata)[0], field=f"{prefix}.data"
        )
        changes = _metadata_changes(record.metadata, metadata)
        if content == record.content and not changes:
            return record.id, "skipped_dedupe", _stamp(record)
        update = MemoryUpdateInput(
            memory_id=record.id,
            content=content if content != record.content else None,
            metadata=changes or None,
        )
        out = self._memory.update(update)
        if on_refresh is not None:
            on_refresh(record)
        if not out.updated_fields:
            return record.id, "skipped_dedupe", _stamp(record)
        return record.id, "updated", _stamp(self._memory.load(record.id))


def _key_conflict(record: MemoryRecord, item: StoreItem, draft: Draft, prefix: str) -> ConflictError:
    return ConflictError(
        f"Idempotency key '{clip_text(draft.idempotency_key or '', 80)}' already belongs to a "
        f"{kind_of(record.type) or record.type} item, not a {item.kind}",
        code="CON_IDEMPOTENCY_KEY",
        details={"field": f"{prefix}.idempotency_key", "memory_id": record.id, "type": record.type},
        suggestion="Use another idempotency_key for this item: a key names one item of one kind "
        "within the project.",
    )


def in_item(error: MemoryServiceError, prefix: str) -> MemoryServiceError:
    """The error with its field named as the caller wrote it (``items[2].data.status``): the
    services name the memory's fields (``content``, ``metadata.status``, ``scope.tenant``)."""
    found = error.details.get("field")
    if not isinstance(found, str) or found.startswith(prefix):
        return error
    head, _, rest = found.partition(".")
    if head == "content":
        named = f"{prefix}.data"
    elif head == "metadata" and rest.split(".")[0] in ("tags", "source"):
        named = f"{prefix}.{rest}"
    elif head == "metadata":
        named = f"{prefix}.data" + (f".{rest}" if rest else "")
    else:
        named = f"{prefix}.{found}"
    error.details = {**error.details, "field": named}
    return error


def _metadata_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The metadata update that turns ``old`` into ``new`` (None removes a key; the fact-chain
    keys, which only memory_supersede writes, are left alone)."""
    changes = {k: v for k, v in new.items() if old.get(k) != v}
    changes.update({k: None for k in old if k not in new and k not in CHAIN_KEYS})
    return changes


def _stamp(record: MemoryRecord) -> str | None:
    return record.expires_at.isoformat() if record.expires_at else None


def _last_verified(
    metadata: dict[str, Any], record: MemoryRecord | None, created_at: str | None
) -> str | None:
    """``last_verified_at`` when the item records one, else when it last changed."""
    verified = metadata.get("last_verified_at")
    if isinstance(verified, str) and verified.strip():
        return verified
    if record is not None:
        return record.updated_at.isoformat()
    return created_at


def _widened(req: FindInput) -> bool:
    """Whether the request already reads beyond the caller's branch."""
    given = req.scope.model_fields_set if req.scope is not None else set()
    return bool(given & {"branch", "project", "org"})
