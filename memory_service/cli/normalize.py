"""memory-cli normalize: the normalization job with a progress bar, then a summary table; run by the
daemon when one owns the data directory, else in this process."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from memory_service.cli.common import (
    AsJson,
    DataDir,
    app,
    console,
    err_console,
    error_line,
    json_flag,
    load_settings,
    open_or_exit,
)
from memory_service.cli.via_daemon import follow_job, via_daemon
from memory_service.daemon.client import DaemonSession, ToolError
from memory_service.settings import Settings

if TYPE_CHECKING:
    from memory_service.core.maintenance.normalize.schemas import NormalizeOptions, NormalizeStatusOutput


def _flag(name: str, text: str) -> Any:
    return typer.Option(name, help=text)


@app.command()
def normalize(
    ctx: typer.Context,
    data_dir: DataDir = None,
    dry_run: Annotated[bool, _flag("--dry-run", "Report what would be done; change nothing.")] = False,
    skip_deduplication: Annotated[bool, _flag("--skip-deduplication", "Do not merge duplicates.")] = False,
    skip_orphan_cleanup: Annotated[bool, _flag("--skip-orphan-cleanup", "Keep orphaned nodes.")] = False,
    skip_embedding_refresh: Annotated[bool, _flag("--skip-embedding-refresh", "Do not re-embed.")] = False,
    as_json: AsJson = False,
) -> None:
    """Merge duplicates, remove orphaned graph nodes, re-embed, repair gaps between the stores and
    flag stale code links, with a progress bar; then a summary. Exit 1 if the job failed.

    Through the daemon when one runs (normalize_memory, followed with normalize_status)."""
    from memory_service.core.maintenance.normalize.schemas import NormalizeOptions

    as_json = json_flag(ctx, as_json)
    settings = load_settings(data_dir)
    options = NormalizeOptions(
        dry_run=dry_run,
        skip_deduplication=skip_deduplication,
        skip_orphan_cleanup=skip_orphan_cleanup,
        skip_embedding_refresh=skip_embedding_refresh,
    )
    view = via_daemon(settings, lambda session: _through(session, options, as_json))
    if view is None:
        view = _directly(settings, options, as_json)
    if as_json:
        typer.echo(json.dumps(view.model_dump(mode="json"), indent=2))
    else:
        what = "normalize (dry run)" if dry_run else "normalize"
        table = Table(title=f"{what} {view.status} — {settings.resolved_data_dir}")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for key, value in view.stats.model_dump().items():
            if isinstance(value, int) and not isinstance(value, bool):
                table.add_row(key, str(value))
        table.add_row("planned actions listed", str(len(view.stats.planned)))
        console.print(table)
        for warning in view.stats.warnings:
            err_console.print(f"[yellow]{warning}[/yellow]")
    if view.status != "completed":
        err_console.print(f"[red]normalize {view.status}[/red]: {view.error}")
        raise typer.Exit(1)


def _bar(as_json: bool) -> Any:
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

    columns = (TextColumn("{task.description:<22}"), BarColumn(), TaskProgressColumn())
    bar = Progress(*columns, console=err_console if as_json else console, disable=as_json)
    bar.add_task("normalizing", total=100)
    return bar


def _through(session: DaemonSession, options: NormalizeOptions, as_json: bool) -> NormalizeStatusOutput:
    from memory_service.core.maintenance.normalize.schemas import NormalizeStatusOutput

    try:
        started = session.call("normalize_memory", {"options": options.model_dump(mode="json")})
    except ToolError as exc:  # e.g. a normalization a session started is still running
        err_console.print(error_line(exc))
        raise typer.Exit(1) from None
    with _bar(as_json) as bar:
        answer = follow_job(
            session,
            "normalize_status",
            started["job_id"],
            lambda job: bar.update(
                bar.task_ids[0],
                completed=int(job.get("progress") or 0),
                description=str(job.get("phase") or job.get("status") or ""),
            ),
        )
    return NormalizeStatusOutput.model_validate(answer)


def _directly(settings: Settings, options: NormalizeOptions, as_json: bool) -> NormalizeStatusOutput:
    from memory_service.core.maintenance.normalize.schemas import NormalizeMemoryInput
    from memory_service.core.maintenance.normalize.service import status_view

    services = open_or_exit(settings)
    try:
        services.stores.embedder.wait_ready(settings.embedding.load_timeout_seconds)
        started = services.normalize.start(NormalizeMemoryInput(options=options))
        with _bar(as_json) as bar:
            task = bar.task_ids[0]
            unsubscribe = services.jobs.listen(
                started.job_id, lambda s, _d, _t: bar.update(task, completed=s.progress, description=s.phase)
            )
            services.jobs.wait(started.job_id)
            unsubscribe()
        state = services.jobs.get(started.job_id)
    finally:
        services.close()
    assert state is not None
    return status_view(state)
