"""normalize_memory and normalize_status (seed 001 §4.2.5, issue 11): a background job that puts
the stores back in order, and its progress.

Phases, in order (each can be skipped; a dry run performs the same scan and writes nothing):

1. scanning: drain the graph-sync outbox (so the graph is as current as it gets), read every record;
2. repairing (:mod:`.normalize_repair`): content hashes, lost graph nodes, lost context vectors;
3. refreshing_embeddings: memories pending a model or embedded by another model;
4. deduplicating (:mod:`.normalize_dedupe`): merge exact and near duplicates, losing nothing;
5. cleaning_orphans (:mod:`.normalize_cleanup`): nodes without a memory or an indexed file;
6. checking_links: flag memories citing code that is gone.

Each write goes through the RecordWriter with an audit event, under the records' locks, so the job
runs beside normal traffic; a second run right after finds nothing to do.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from memory_service.core.audit_event import audit_event
from memory_service.core.code.stale import StaleMarker
from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.jobs import FINISHED, JobContext, JobManager, JobState
from memory_service.core.maintenance.normalize.cleanup import Cleaner
from memory_service.core.maintenance.normalize.dedupe import Merger, find_groups
from memory_service.core.maintenance.normalize.repair import Repairer
from memory_service.core.maintenance.normalize.run import Run, batches, scan
from memory_service.core.maintenance.normalize.schemas import (
    NormalizeMemoryInput,
    NormalizeOptions,
    NormalizeStarted,
    NormalizeStats,
    NormalizeStatusInput,
    NormalizeStatusOutput,
)
from memory_service.core.memory.service import MemoryService
from memory_service.core.models import MemoryRecord, utcnow
from memory_service.core.ports import PayloadFilter
from memory_service.core.records import MEMORIES, MEMORY_LABEL, Stores
from memory_service.core.write.graph_sync import GraphSync
from memory_service.core.write.writer import RecordWriter

KIND = "normalize"
PHASES = [
    "scanning",
    "repairing",
    "refreshing_embeddings",
    "deduplicating",
    "cleaning_orphans",
    "checking_links",
]
# Rough throughput for the start-up estimate (measured on the embedded stores, CPU model).
SCAN_PER_MINUTE = 20_000
EMBED_PER_MINUTE = 1_500


class NormalizeService:
    def __init__(
        self,
        stores: Stores,
        writer: RecordWriter,
        memory: MemoryService,
        stale: StaleMarker,
        sync: GraphSync,
        jobs: JobManager,
        actor: str,
        *,
        context_turns: int,
        model_wait_seconds: float = 60.0,
    ) -> None:
        self._stores = stores
        self._sync = sync
        self._jobs = jobs
        self._actor = actor
        self._repair = Repairer(
            stores, writer, memory, actor, context_turns=context_turns, model_wait_seconds=model_wait_seconds
        )
        self._cleaner = Cleaner(stores, writer, memory.locks, stale, actor)
        self._merger = Merger(stores, writer, memory, actor)

    # ------------------------------------------------------------------ tools

    def start(self, req: NormalizeMemoryInput) -> NormalizeStarted:
        options = req.options
        vectors = self._stores.vectors
        active = vectors.count(MEMORIES, PayloadFilter(equals={"status": "active"}))
        pending = vectors.count(
            MEMORIES, PayloadFilter(equals={"status": "active", "embedding_pending": True})
        )
        minutes = active / SCAN_PER_MINUTE + (
            0 if options.skip_embedding_refresh else pending / EMBED_PER_MINUTE
        )
        state = self._jobs.submit(KIND, lambda ctx: self._run(ctx, options))
        return NormalizeStarted(
            job_id=state.job_id,
            status="started",
            estimated_duration_minutes=max(1, math.ceil(minutes)),
            dry_run=options.dry_run,
        )

    def status(self, req: NormalizeStatusInput) -> NormalizeStatusOutput:
        try:
            job_id = parse_uuid(req.job_id, field="job_id")
        except ValidationError as exc:  # the generic hint names the index tools
            exc.suggestion = (
                "Use the job_id that normalize_memory returned (36 characters like "
                "'a1b2c3d4-e5f6-7890-abcd-ef1234567890')."
            )
            raise
        state = self._jobs.get(job_id)
        if state is None or state.kind != KIND:
            what = "is not a normalization job" if state is not None else "not found"
            raise NotFoundError(
                f"Normalization job '{req.job_id}' {what}",
                code="NF_JOB",
                details={
                    "field": "job_id",
                    "provided": req.job_id,
                    **({"kind": state.kind} if state else {}),
                },
                suggestion="Use the job_id that normalize_memory returned (index jobs are followed with "
                "index_status); job states are kept while the cache keeps them.",
            )
        return status_view(state)

    # ------------------------------------------------------------------ the job

    def _run(self, ctx: JobContext, options: NormalizeOptions) -> dict[str, Any]:
        run = Run(ctx, options, PHASES)
        self._sync.drain()  # graph changes still queued are not gaps
        records = scan(self._stores.vectors, run, "scanning")
        run.stats["memories_processed"] = sum(r.is_active for r in records)
        handled: set[str] = set()
        if not options.skip_repair:
            handled = self._repairing(run, records)
        if not options.skip_embedding_refresh:
            reasons = {
                i: why for i, why in self._repair.stale_embeddings(records).items() if i not in handled
            }
            self._repair.reembed(run, reasons, "embeddings_refreshed", "refreshing_embeddings")
        run.progress("refreshing_embeddings", 1, 1)
        if not options.skip_deduplication:
            records = self._fresh(run, records)
            self._deduplicate(run, records)
        run.progress("deduplicating", 1, 1)
        if not options.skip_orphan_cleanup:
            records = self._fresh(run, records)
            orphans = [(MEMORY_LABEL, i) for i in self._cleaner.memory_orphans(records)]
            self._cleaner.remove(run, orphans, "orphans_removed", "cleaning_orphans")
            code = self._cleaner.remove(
                run, self._cleaner.code_orphans(), "code_orphans_removed", "cleaning_orphans"
            )
            run.count("orphans_removed", code)
        run.progress("cleaning_orphans", 1, 1)
        if not options.skip_stale_links:
            self._cleaner.stale_links(run, self._fresh(run, records), "checking_links")
        if not options.dry_run:
            summary = {k: v for k, v in run.stats.items() if isinstance(v, int) and v}
            event = audit_event(KIND, "job", ctx.state.job_id, self._actor, summary)
            self._stores.audit.append([event])
        return {}

    def _repairing(self, run: Run, records: list[MemoryRecord]) -> set[str]:
        """Fix hashes, context pairs and graph nodes; returns the ids re-embedded on the way."""
        bad = self._repair.bad_hashes(records)
        self._repair.reembed(run, dict.fromkeys(bad, "content hash did not match the content"),
                             "content_hashes_fixed", "repairing")  # fmt: skip
        lost = [i for i in self._repair.missing_context(records) if i not in bad]
        self._repair.reembed(run, dict.fromkeys(lost, "memory of a thread without its context vectors"),
                             "context_vectors_repaired", "repairing")  # fmt: skip
        missing = self._repair.missing_nodes(records)
        self._repair.restore_nodes(run, missing, records, "repairing")
        return {*bad, *lost}

    def _deduplicate(self, run: Run, records: list[MemoryRecord]) -> None:
        model = self._stores.embedder.model_name
        embedded = [
            r.id for r in records if r.is_active and not r.embedding_pending and r.embedding_model == model
        ]
        vectors: dict[str, list[float]] = {}
        for batch in batches(embedded, 256):
            for point in self._stores.vectors.retrieve(MEMORIES, batch, with_dense=True):
                if point.dense is not None:
                    vectors[point.id] = point.dense
        groups = find_groups(records, vectors, run.options.similarity_threshold)
        for n, group in enumerate(groups, 1):
            if run.dry_run:
                run.plan(
                    "merge",
                    survivor=group.survivor.id,
                    absorbed=[{"id": r.id, "similarity": s, "match": k} for r, s, k in group.absorbed],
                )
                kinds = [k for _, _, k in group.absorbed]
            else:
                kinds = self._merger.merge(group)
            run.count("duplicates_merged", len(kinds))
            run.count("exact_duplicates", kinds.count("exact"))
            run.count("near_duplicates", kinds.count("near"))
            run.progress("deduplicating", n, len(groups))

    def _fresh(self, run: Run, records: list[MemoryRecord]) -> list[MemoryRecord]:
        """The records as they are now after writes (a dry run changed nothing: the same list)."""
        if run.dry_run:
            return records
        return scan(self._stores.vectors) if _wrote(run) else records


def _wrote(run: Run) -> bool:
    keys = (
        "content_hashes_fixed", "context_vectors_repaired", "embeddings_refreshed",
        "duplicates_merged", "graph_nodes_repaired", "orphans_removed",
    )  # fmt: skip
    return any(run.stats.get(k) for k in keys)


def status_view(state: JobState) -> NormalizeStatusOutput:
    stats = NormalizeStats.model_validate(state.stats) if state.stats else NormalizeStats()
    return NormalizeStatusOutput(
        job_id=state.job_id,
        status=state.status,
        phase=state.phase,
        progress=state.progress,
        stats=stats,
        error=state.error,
        estimated_remaining_seconds=_remaining(state),
        dry_run=bool(state.stats.get("dry_run", False)),
        started_at=state.started_at,
        finished_at=state.finished_at,
    )


def _remaining(state: JobState) -> int | None:
    """Linear in progress so far; 0 once finished, None before there is anything to go by."""
    if state.status in FINISHED:
        return 0
    if not state.started_at or state.progress <= 0:
        return None
    elapsed = (utcnow() - datetime.fromisoformat(state.started_at)).total_seconds()
    return max(0, round(elapsed * (100 - state.progress) / state.progress))
