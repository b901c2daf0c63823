"""``memory-cli index``: index a directory's code, with a progress bar by bytes and the time left.

Through the daemon when one runs (its index_directory / reindex job, followed with index_status);
otherwise in this process. The bar follows the job's ``done`` / ``total`` bytes of source (a large
file moves it as much as the work it takes) with rich's rate and ETA columns; ``--json`` prints
no bar and the outcome as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from memory_service.cli.common import (
    AsJson,
    DataDir,
    app,
    console,
    ended,
    err_console,
    error_line,
    json_flag,
    load_settings,
    open_or_exit,
)
from memory_service.cli.via_daemon import follow_job, via_daemon
from memory_service.core.code.paths import PathPolicy
from memory_service.core.errors import MemoryServiceError
from memory_service.daemon.client import DaemonSession, ToolError
from memory_service.settings import Settings

Ended = tuple[dict[str, Any], dict[str, Any]]  # (the job's view, the index totals)


@app.command()
def index(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(metavar="DIR", help="Directory to index (or re-index).")],
    data_dir: DataDir = None,
    full: Annotated[bool, typer.Option("--full", help="Re-parse every file, not only changed ones.")] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", metavar="GLOB", help="Gitignore-style glob to skip (repeatable)."),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Index a directory's code with a progress bar, then print a summary.

    Through the daemon when one runs (its index_directory / reindex job, followed with
    index_status); DIR must then be inside the daemon's allowed roots. Else in this process,
    which allows DIR itself."""
    as_json = json_flag(ctx, as_json)
    target = path.expanduser().resolve()
    settings = load_settings(data_dir)
    try:  # the operator's own path: say it is missing before any daemon says it is not allowed
        PathPolicy(settings.project_root, [target]).resolve(str(target), field="PATH", want="dir")
    except MemoryServiceError as exc:
        raise _fail(exc, as_json) from None
    with _bar(target, as_json) as bar:
        outcome = via_daemon(settings, lambda session: _through(session, target, full, exclude, bar, as_json))
        if outcome is None:
            outcome = _directly(settings, target, full, exclude, bar, as_json)
    job, totals = outcome
    if as_json:
        typer.echo(json.dumps({"path": str(target), **job, "index": totals}, indent=2))
    else:
        _print(target, job, totals)
    if job["status"] != "completed":
        err_console.print(f"[red]The index job {job['status']}:[/red] {ended(str(job.get('error')))}")
        raise typer.Exit(1)


def _print(target: Path, job: dict[str, Any], totals: dict[str, Any]) -> None:
    table = Table(title=f"index {job['status']} — {target}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in job["stats"].items():
        if key != "failures":
            table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
    table.add_row(
        "index: files / functions / classes",
        f"{totals['total_files']} / {totals['total_functions']} / {totals['total_classes']}",
    )
    console.print(table)
    for failure in job["stats"].get("failures", []):
        err_console.print(f"[yellow]{failure['file']}[/yellow]: {failure['error']}")


def _bar(target: Path, as_json: bool) -> Progress:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        DownloadColumn(),  # bytes of source done / in all
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    bar = Progress(*columns, console=err_console if as_json else console, disable=as_json)
    # Started at the job's first report: opening the stores and loading the model are not its time.
    bar.add_task(f"indexing {target}", total=None, start=False)
    return bar


def show(bar: Progress, job: dict[str, Any]) -> None:
    """Move the bar to where the job is: its bytes when it counts them, else its percentage."""
    task = bar.task_ids[0]
    if not bar.tasks[0].started:
        bar.start_task(task)
    phase = str(job.get("phase") or job.get("status") or "")
    if job.get("unit") == "bytes" and int(job.get("total") or 0) > 0:
        bar.update(task, completed=int(job["done"]), total=int(job["total"]), description=phase)
    elif job.get("progress"):
        bar.update(task, completed=int(job["progress"]), total=100, description=phase)


def _finish(bar: Progress) -> None:
    task = bar.tasks[0]
    bar.update(task.id, completed=task.total if task.total is not None else 100)


def _fail(exc: MemoryServiceError, as_json: bool) -> typer.Exit:
    if as_json:
        typer.echo(json.dumps(exc.to_envelope(), indent=2))
    else:
        err_console.print(error_line(exc))
    return typer.Exit(1)


def _through(
    session: DaemonSession, target: Path, full: bool, exclude: list[str] | None, bar: Progress, as_json: bool
) -> Ended:
    """The daemon's job, followed to its end."""
    try:
        if full:
            started = session.call("reindex", {"scope": "full", "directory_path": str(target)})
        else:
            arguments: dict[str, Any] = {"directory_path": str(target)}
            if exclude:
                arguments["exclude"] = exclude
            started = session.call("index_directory", arguments)
    except ToolError as exc:
        if exc.code == "VAL_PATH_OUTSIDE_ROOTS" and not as_json:
            err_console.print(
                f"memory-cli indexes through the running daemon (pid {session.hello.get('pid')}), "
                "which reads only inside its allowed roots."
            )
        raise _fail(exc, as_json) from None
    answer = follow_job(session, "index_status", started["job_id"], lambda job: show(bar, job))
    _finish(bar)
    return answer["job"], answer["index"]


def _directly(
    base: Settings, target: Path, full: bool, exclude: list[str] | None, bar: Progress, as_json: bool
) -> Ended:
    """The job in this process, with ``target`` added to the allowed roots (the operator named it)."""
    from memory_service.core.code.schemas import IndexDirectoryInput, ReindexInput
    from memory_service.core.code.service import job_view

    settings = base.model_copy(
        update={
            "indexer": base.indexer.model_copy(
                update={"allowed_roots": [*base.indexer.allowed_roots, target]}
            )
        }
    )
    services = open_or_exit(settings)
    try:
        services.stores.embedder.wait_ready(settings.embedding.load_timeout_seconds)
        try:
            if full:
                started = services.index.start_reindex(ReindexInput(scope="full", directory_path=str(target)))
            else:
                started = services.index.start_directory(
                    IndexDirectoryInput(directory_path=str(target), exclude=exclude)
                )
        except MemoryServiceError as exc:
            raise _fail(exc, as_json) from None
        jobs = services.index.jobs
        unsubscribe = jobs.listen(started.job_id, lambda state, _d, _t: show(bar, state.model_dump()))
        jobs.wait(started.job_id)
        unsubscribe()
        _finish(bar)
        state = jobs.get(started.job_id)
        totals = services.index.totals()
    finally:
        services.close()
    assert state is not None
    return job_view(state).model_dump(mode="json"), totals.model_dump(mode="json")
