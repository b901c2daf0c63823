"""``memory-cli``: operator commands (seed 001 §5). Opens the same stores the server uses; health and
stats ask the running server instead when one owns the data directory (its HTTP side server).

health, stats and index are here; the maintenance commands (normalize, export, import, backup,
restore) are in ``cli_*.py``, imported below so that they register on the same app.
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
from memory_service.core.errors import MemoryServiceError
from memory_service.settings import Settings


@app.command()
def health(ctx: typer.Context, data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Check each store and the embedding model; exit 1 if anything is unavailable."""
    as_json = json_flag(ctx, as_json)
    settings = load_settings(data_dir)
    wait = settings.embedding.load_timeout_seconds
    remote = _from_server(settings, "/health/ready", accept=(200, 503), wait_model=wait)
    if remote is not None:  # a running server owns the data directory: ask it
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
    """Index a directory's code with a progress bar, then print a summary."""
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    from memory_service.core.index_schemas import IndexDirectoryInput, ReindexInput

    target = path.expanduser().resolve()
    base = load_settings(data_dir)
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
        columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=False) as bar:
            task = bar.add_task(f"indexing {target}", total=100)
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
    table = Table(title=f"index {state.status} — {target}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in state.stats.items():
        if key != "failures":
            table.add_row(key, json.dumps(value) if isinstance(value, dict) else str(value))
    table.add_row(
        "index: files / functions / classes",
        f"{totals.total_files} / {totals.total_functions} / {totals.total_classes}",
    )
    console.print(table)
    for failure in state.stats.get("failures", []):
        err_console.print(f"[yellow]{failure['file']}[/yellow]: {failure['error']}")
    if state.status != "completed":
        err_console.print(f"[red]job {state.status}[/red]: {state.error}")
        raise typer.Exit(1)


@app.command()
def stats(ctx: typer.Context, data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Show memory counts by type, relationships, storage sizes and sync state."""
    as_json = json_flag(ctx, as_json)
    settings = load_settings(data_dir)
    figures = _from_server(settings, "/stats")  # the running server's answer, live counters included
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


# The maintenance commands register on the same app, listed after these.
from memory_service import cli_backup, cli_normalize, cli_portability, cli_repair  # noqa: E402, F401

if __name__ == "__main__":
    app()
