"""``memory-cli``: operator commands (seed 001 §5). While a daemon owns the data directory the
commands ask it (health and stats its HTTP side server first, when that runs); otherwise they
open the same stores the server uses (docs/daemon.md).

health, stats and index are here; the maintenance commands (normalize, export, import, backup,
restore, repair) and ``memory-cli daemon`` are in ``cli_*.py``, imported below so that they
register on the same app.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from memory_service.cli_common import (
    AsJson,
    DataDir,
    app,
    console,
    err_console,
    json_flag,
    load_settings,
    open_or_exit,
)
from memory_service.cli_via_daemon import daemon_health, follow_job, via_daemon
from memory_service.core.errors import MemoryServiceError
from memory_service.daemon.client import DaemonSession, ToolError
from memory_service.settings import Settings


@app.command()
def health(ctx: typer.Context, data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Check each store and the embedding model; exit 1 if anything is unavailable."""
    as_json = json_flag(ctx, as_json)
    settings = load_settings(data_dir)
    wait = settings.embedding.load_timeout_seconds
    remote = _from_server(settings, "/health/ready", accept=(200, 503), wait_model=wait)
    if remote is None:  # no HTTP side server: the daemon, if one runs, answers from memory_statistics
        remote = _from_daemon(settings, lambda session: daemon_health(session, wait))
    if remote is not None:  # a running server owns the data directory: it answered
        rows, sync, healthy = remote["components"], remote["sync"], bool(remote["healthy"])
    else:
        services = open_or_exit(settings)
        try:
            services.stores.embedder.wait_ready(wait)
            parts = services.health()
            sync = services.sync.pending()
        finally:
            services.close()
        rows = [
            {"component": p.name, "state": p.state, "backend": p.backend, "detail": p.detail} for p in parts
        ]
        healthy = all(p.state != "unavailable" for p in parts)
    if as_json:
        typer.echo(json.dumps({"healthy": healthy, "components": rows, "sync": sync}, indent=2))
    else:
        table = Table(title=f"memory-service health — {settings.resolved_data_dir}")
        for col in ("component", "state", "backend", "detail"):
            table.add_column(col)
        colours = {"ok": "green", "degraded": "yellow", "unavailable": "red"}
        for row in rows:
            state = f"[{colours.get(row['state'], 'white')}]{row['state']}[/]"
            table.add_row(row["component"], state, row["backend"], row["detail"])
        console.print(table)
        console.print(f"graph sync queue: {sync}")
    if not healthy:
        raise typer.Exit(1)


@app.command()
def index(
    path: Annotated[Path, typer.Argument(help="Directory to index (or re-index).")],
    data_dir: DataDir = None,
    full: Annotated[bool, typer.Option("--full", help="Re-parse every file, not only changed ones.")] = False,
    exclude: Annotated[
        list[str] | None, typer.Option("--exclude", help="Gitignore-style glob to skip.")
    ] = None,
) -> None:
    """Index a directory's code with a progress bar, then print a summary.

    Through the daemon when one runs (its index_directory / reindex job, followed with
    index_status); PATH must then be inside the daemon's allowed roots. Else in this process,
    which allows PATH itself."""
    target = path.expanduser().resolve()
    settings = load_settings(data_dir)
    ended = via_daemon(settings, lambda session: _index_through(session, target, full, exclude))
    if ended is None:
        ended = _index_directly(settings, target, full, exclude)
    job, totals = ended
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
    if job["status"] != "completed":
        err_console.print(f"[red]job {job['status']}[/red]: {job.get('error')}")
        raise typer.Exit(1)


def _index_bar(target: Path) -> Any:
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn())
    bar = Progress(*columns, console=console, transient=False)
    bar.add_task(f"indexing {target}", total=100)
    return bar


def _index_through(
    session: DaemonSession, target: Path, full: bool, exclude: list[str] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The daemon's job, followed to its end: (the job's view, the index totals)."""
    try:
        if full:
            started = session.call("reindex", {"scope": "full", "directory_path": str(target)})
        else:
            arguments: dict[str, Any] = {"directory_path": str(target)}
            if exclude:
                arguments["exclude"] = exclude
            started = session.call("index_directory", arguments)
    except ToolError as exc:
        err_console.print(f"[red]{exc.message}[/red] {exc.suggestion}")
        if exc.code == "VAL_PATH_OUTSIDE_ROOTS":
            err_console.print(
                f"memory-cli indexes through the running daemon (pid {session.hello.get('pid')}), "
                "which reads only inside its allowed roots."
            )
        raise typer.Exit(1) from None
    with _index_bar(target) as bar:
        answer = follow_job(
            session,
            "index_status",
            started["job_id"],
            lambda done, phase: bar.update(bar.task_ids[0], completed=done, description=phase),
        )
        bar.update(bar.task_ids[0], completed=100)
    return answer["job"], answer["index"]


def _index_directly(
    base: Settings, target: Path, full: bool, exclude: list[str] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The job in this process, with ``target`` added to the allowed roots (the operator named it)."""
    from memory_service.core.index_schemas import IndexDirectoryInput, ReindexInput

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
            err_console.print(f"[red]{exc.message}[/red] {exc.suggestion}")
            raise typer.Exit(1) from None
        jobs = services.index.jobs
        with _index_bar(target) as bar:
            task = bar.task_ids[0]
            unsubscribe = jobs.listen(
                started.job_id, lambda s, _d, _t: bar.update(task, completed=s.progress, description=s.phase)
            )
            jobs.wait(started.job_id)
            unsubscribe()
            bar.update(task, completed=100)
        state = jobs.get(started.job_id)
        totals = services.index.totals()
    finally:
        services.close()
    assert state is not None
    return {"status": state.status, "stats": state.stats, "error": state.error}, totals.model_dump()


@app.command()
def stats(ctx: typer.Context, data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Show memory counts by type, relationships, storage sizes and sync state."""
    as_json = json_flag(ctx, as_json)
    settings = load_settings(data_dir)
    figures = _from_server(settings, "/stats")  # the running server's answer, live counters included
    if figures is None:  # no HTTP side server: the daemon's memory_statistics (the same figures)
        figures = _from_daemon(settings, lambda session: session.call("memory_statistics", {}))
    if figures is None:
        services = open_or_exit(settings)
        try:
            figures = services.stats()
        finally:
            services.close()
    if as_json:
        typer.echo(json.dumps(figures, indent=2))
        return
    table = Table(title=f"memory-service statistics — {settings.resolved_data_dir}")
    table.add_column("section")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for section, values in figures.items():
        if not isinstance(values, dict):  # audit_events, jobs, warnings
            table.add_row(section, "", str(values) if isinstance(values, int) else json.dumps(values))
            continue
        for key, value in values.items():
            if isinstance(value, dict):
                for sub, n in value.items():
                    table.add_row(section, f"{key}.{sub}", str(n))
            else:
                table.add_row(section, key, str(value))
    console.print(table)


def _from_server(settings: Settings, path: str, **options: Any) -> Any:
    """The JSON the server owning the data directory answers at ``path`` (its HTTP side server,
    docs/observability.md); None when no server runs there, so the caller opens the stores."""
    from memory_service.observability.discovery import ask_server

    try:
        return ask_server(settings.resolved_data_dir, path, **options)
    except OSError as exc:
        err_console.print(
            f"[red]The memory-service that owns {settings.resolved_data_dir} did not answer {path}: "
            f"{exc}[/red] Retry in a moment, or check the server's log."
        )
        raise typer.Exit(1) from None


def _from_daemon(settings: Settings, ask: Any) -> Any:
    """``ask(session)`` through the daemon owning the data directory; None when none runs."""
    try:
        return via_daemon(settings, ask)
    except ToolError as exc:
        err_console.print(f"[red]The daemon could not answer: {exc.message}[/red] {exc.suggestion}")
        raise typer.Exit(1) from None


# The maintenance commands register on the same app, listed after these.
from memory_service import cli_backup, cli_daemon, cli_normalize, cli_portability, cli_repair  # noqa: E402, F401

if __name__ == "__main__":
    app()
