"""Index and code-search tools (seed 001 §4.2.2-4.2.3): thin wrappers over the index services."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import ServerRequestContext
from pydantic import BaseModel

from memory_service.core.code.schemas import (
    CodeSearchInput,
    CodeSearchOutput,
    FindDuplicatesInput,
    FindDuplicatesOutput,
    IndexDirectoryInput,
    IndexFileInput,
    IndexFileOutput,
    IndexStatusInput,
    IndexStatusOutput,
    JobStarted,
    ReindexInput,
)
from memory_service.core.code.service import job_view
from memory_service.tools.registry import ADDITIVE, READ_ONLY, UPDATE, ToolSpec

POLL_SECONDS = 0.25


async def wait_for_job(
    services: Any, request: Any, output: BaseModel, ctx: ServerRequestContext[Any, Any]
) -> BaseModel:
    """With wait=true, follow the job to its end, reporting progress when the client asked for it."""
    if not getattr(request, "wait", False):
        return output
    assert isinstance(output, JobStarted)
    jobs = services.jobs
    deadline = anyio.current_time() + services.settings.indexer.max_job_wait_seconds
    last = -1
    while True:
        state = jobs.get(output.job_id)
        if state is None or state.status in ("completed", "failed", "cancelled", "interrupted"):
            break
        if state.progress != last:
            last = state.progress
            await ctx.session.report_progress(state.progress, 100, f"{state.phase}: {state.progress}%")
        if anyio.current_time() > deadline:
            break
        await anyio.sleep(POLL_SECONDS)
    if state is not None:
        await ctx.session.report_progress(state.progress, 100, state.status)
        output.job = job_view(state).model_dump(mode="json")
    return output


INDEX_TOOLS = [
    ToolSpec(
        name="index_file",
        title="Index a source file",
        description=(
            "Parse one source file with tree-sitter and (re)index its functions, methods and classes "
            "for code_search and find_duplicates. Skipped when its content is unchanged (force=true "
            "re-indexes). Languages: python, javascript, typescript, tsx, go, rust, java, c, cpp."
        ),
        schema_model=IndexFileInput,
        output_model=IndexFileOutput,
        handler=lambda s, r: s.index.index_file(r),
        annotations=UPDATE,
    ),
    ToolSpec(
        name="index_directory",
        title="Index a directory",
        description=(
            "Recursively index a directory as a background job; returns a job_id at once (follow it "
            "with index_status). Honours .gitignore; skips binaries, vendored, generated and huge files. "
            "filters/exclude are gitignore-style globs relative to the directory."
        ),
        schema_model=IndexDirectoryInput,
        output_model=JobStarted,
        handler=lambda s, r: s.index.start_directory(r),
        after=wait_for_job,
        annotations=ADDITIVE,
    ),
    ToolSpec(
        name="index_status",
        title="Index status",
        description="Progress of an index job (job_id) and totals of the code index: files, functions, "
        "classes, languages, last indexed time.",
        schema_model=IndexStatusInput,
        output_model=IndexStatusOutput,
        handler=lambda s, r: s.index.status(r),
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="reindex",
        title="Re-index",
        description=(
            "Re-index as a background job. scope='changed' (default) touches only files whose content "
            "changed, new files and deleted files since the last run; scope='full' re-parses everything. "
            "directory_path defaults to the project root."
        ),
        schema_model=ReindexInput,
        output_model=JobStarted,
        handler=lambda s, r: s.index.start_reindex(r),
        after=wait_for_job,
        annotations=UPDATE,
    ),
    ToolSpec(
        name="code_search",
        title="Search code",
        description=(
            "Find functions, methods and classes in the indexed code base by describing them in words "
            "or by pasting a code snippet. Optional language filter; limit 1-50."
        ),
        schema_model=CodeSearchInput,
        output_model=CodeSearchOutput,
        handler=lambda s, r: s.code.search(r),
        annotations=READ_ONLY,
    ),
    ToolSpec(
        name="find_duplicates",
        title="Find duplicate code",
        description=(
            "Before writing a function, check whether it already exists: give its code or signature. "
            "Reports exact copies, renamed clones (same structure, other names) and similar functions "
            "above the threshold (0.7-0.95), each with a recommendation."
        ),
        schema_model=FindDuplicatesInput,
        output_model=FindDuplicatesOutput,
        handler=lambda s, r: s.code.find_duplicates(r),
        annotations=READ_ONLY,
    ),
]
