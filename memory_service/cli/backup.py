"""memory-cli backup and restore (docs/backup.md), with a progress bar over files and a summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

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
)
from memory_service.cli.via_daemon import backup_via_daemon, refuse_while_daemon
from memory_service.core.errors import MemoryServiceError
from memory_service.settings import Settings


def _file_job(as_json: bool, settings: Settings, title: str, run: Any) -> None:
    """Run a backup/restore with a progress bar over files, then print its summary (or JSON)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description:<40.40}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    out = err_console if as_json else console
    try:
        with Progress(*columns, console=out, disable=as_json, transient=True) as bar:
            task = bar.add_task(title, total=None)
            result = run(
                lambda desc, done, total: bar.update(task, description=desc, completed=done, total=total)
            )
    except MemoryServiceError as exc:
        if exc.code == "SVC_DATA_DIR_LOCKED":
            owner = exc.details.get("owner_pid")
            err_console.print(
                f"[yellow]The data directory {settings.resolved_data_dir} is in use by a running "
                f"memory-service (pid {owner}).[/yellow] "
                + (
                    "It serves without the shared daemon (--no-daemon), which cannot pause its writes "
                    "for a backup: stop that server first, then run the backup again."
                    if title == "backup"
                    else f"A {title} needs the stores closed: stop that server first, then run it again."
                )
            )
            raise typer.Exit(2) from None
        err_console.print(error_line(exc, sep="\n"))
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    table = Table(title=f"{title} — {result['path']}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in result.items():
        if key != "path":
            table.add_row(key, "\n".join(value) if isinstance(value, list) else str(value))
    console.print(table)


@app.command()
def backup(
    ctx: typer.Context,
    path: Annotated[
        Path, typer.Argument(metavar="DIR", help="New (or empty) directory to write the backup into.")
    ],
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Back up the data directory (files hashed into manifest.json). While a daemon serves it,
    the daemon takes the backup, pausing writes for the copy; sessions go on."""
    from memory_service.backup import runner as backups

    settings = load_settings(data_dir)

    def run(progress: Any) -> dict[str, Any]:
        online = backup_via_daemon(settings, path, progress)
        return online if online is not None else backups.backup(settings, path, progress)

    _file_job(json_flag(ctx, as_json), settings, "backup", run)


@app.command()
def restore(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(metavar="DIR", help="A directory written by memory-cli backup.")],
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Restore a backup into a missing or empty data directory, checking every file first."""
    from memory_service.backup import runner as backups

    settings = load_settings(data_dir)
    refuse_while_daemon(settings, "a restore")
    _file_job(json_flag(ctx, as_json), settings, "restore", lambda p: backups.restore(settings, path, p))
