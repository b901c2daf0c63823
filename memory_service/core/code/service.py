"""The index tools' service: start jobs, report status, index single files (seed 001 §4.2.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from indexer.walker import InvalidGlobError, compile_globs
from memory_service.core.audit_event import audit_event
from memory_service.core.code import records as cr
from memory_service.core.code.index import CodeIndexer
from memory_service.core.code.paths import PathPolicy, echo
from memory_service.core.code.schemas import (
    IndexDirectoryInput,
    IndexFileInput,
    IndexFileOutput,
    IndexStatusInput,
    IndexStatusOutput,
    IndexTotals,
    JobStarted,
    JobView,
    ReindexInput,
)
from memory_service.core.errors import NotFoundError, ValidationError
from memory_service.core.guards import parse_uuid
from memory_service.core.jobs import JobContext, JobManager, JobState
from memory_service.core.records import Stores


class IndexService:
    def __init__(
        self, stores: Stores, indexer: CodeIndexer, paths: PathPolicy, jobs: JobManager, actor: str = "agent"
    ) -> None:
        self._stores = stores
        self._actor = actor
        self._indexer = indexer
        self._paths = paths
        self.jobs = jobs
        self._recent: list[str] = []

    def index_file(self, req: IndexFileInput) -> IndexFileOutput:
        out = self._indexer.index_file(req)
        if out.status == "indexed":
            self._audit("index_file", out.file_path or req.file_path, out.model_dump(exclude_none=True))
        return out

    def _audit(self, operation: str, entity_id: str, details: dict[str, Any]) -> None:
        """Index changes are derived data, but every mutation is still recorded (ROADMAP 4)."""
        self._stores.audit.append([audit_event(operation, "code_index", entity_id, self._actor, details)])

    def start_directory(self, req: IndexDirectoryInput) -> JobStarted:
        directory = self._paths.resolve(req.directory_path, field="directory_path", want="dir")
        _check_globs(req.filters, "filters")
        _check_globs(req.exclude, "exclude")
        return self._start(
            "index_directory", directory, req.filters, req.exclude, force=False, remove_missing=False
        )

    def start_reindex(self, req: ReindexInput) -> JobStarted:
        if req.scope not in ("full", "changed"):
            raise ValidationError(
                f"Invalid value for 'scope' '{req.scope}'. Must be one of: full, changed",
                code="VAL_INVALID_ENUM",
                details={"field": "scope", "provided": req.scope, "allowed": ["full", "changed"]},
                suggestion="Use 'changed' (only changed, new and deleted files) or 'full' (everything).",
            )
        raw = req.directory_path or str(self._paths.project_root)
        directory = self._paths.resolve(raw, field="directory_path", want="dir")
        return self._start(
            f"reindex_{req.scope}", directory, None, None, force=req.scope == "full", remove_missing=True
        )

    def _start(
        self,
        kind: str,
        directory: Path,
        include: list[str] | None,
        exclude: list[str] | None,
        *,
        force: bool,
        remove_missing: bool,
    ) -> JobStarted:
        def work(ctx: JobContext) -> dict[str, Any]:
            ctx.stats["directory"] = str(directory)
            stats = self._indexer.index_directory(
                ctx, directory, include, exclude, force=force, remove_missing=remove_missing
            )
            summary = {k: stats.get(k) for k in ("files_indexed", "files_removed", "units", "directory")}
            self._audit(kind, ctx.state.job_id, {**summary, "directory": str(directory)})
            return stats

        state = self.jobs.submit(kind, work)
        self._recent = [state.job_id, *self._recent][:5]
        return JobStarted(job_id=state.job_id, status="started")

    def status(self, req: IndexStatusInput) -> IndexStatusOutput:
        job = None
        if req.job_id is not None:
            state = self.jobs.get(parse_uuid(req.job_id, field="job_id"))
            if state is None:
                raise NotFoundError(
                    f"Index job '{req.job_id}' not found",
                    code="NF_JOB",
                    details={"field": "job_id", "provided": req.job_id},
                    suggestion="Use the job_id returned by index_directory or reindex; "
                    "call index_status without job_id to see recent jobs.",
                )
            job = job_view(state)
        recent = [job_view(s) for i in self._recent if (s := self.jobs.get(i)) is not None]
        return IndexStatusOutput(job=job, index=self.totals(), recent_jobs=recent)

    def totals(self) -> IndexTotals:
        totals = self._indexer.totals()
        vectors = self._stores.vectors
        return IndexTotals(
            total_files=totals["files"],
            total_functions=vectors.count(cr.FUNCTIONS),
            total_classes=vectors.count(cr.CLASSES),
            last_indexed=totals["last_indexed"],
            languages=totals["languages"],
        )


def _check_globs(patterns: list[str] | None, field: str) -> None:
    """A pattern that does not compile is refused now, not found out by the job later."""
    try:
        compile_globs(patterns)
    except InvalidGlobError as exc:
        index = (patterns or []).index(exc.pattern)
        raise ValidationError(
            f"Invalid pattern in '{field}': '{echo(exc.pattern)}' ({echo(exc.reason)})",
            code="VAL_INVALID_GLOB",
            details={"field": f"{field}[{index}]", "provided": echo(exc.pattern), "length": len(exc.pattern)},
            suggestion="Use gitignore-style patterns such as 'src/**/*.py', 'tests/' or '*_test.go'; "
            "a lone '!' and reversed ranges like '[z-a]' are not patterns.",
        ) from None


def job_view(state: JobState) -> JobView:
    return JobView(
        job_id=state.job_id,
        status=state.status,
        progress=state.progress,
        done=state.done,
        total=state.total,
        unit=state.unit,
        stats=state.stats,
        kind=state.kind,
        phase=state.phase,
        error=state.error,
        started_at=state.started_at,
        finished_at=state.finished_at,
    )
