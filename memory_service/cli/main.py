"""``memory-cli``: operator commands (seed 001 §5). While a daemon owns the data directory the
commands ask it (health and stats its HTTP side server first, when that runs); otherwise they
open the same stores the server uses (docs/daemon.md).

health and stats are here; index (``cli/index.py``), the maintenance commands (normalize,
export, import, backup, restore, repair) and ``memory-cli daemon`` are in the other ``cli/`` modules, imported
below so that they register on the same app.
"""

from __future__ import annotations

import json
from typing import Any

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
from memory_service.cli.via_daemon import daemon_health, via_daemon
from memory_service.daemon.client import ToolError
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
            f"{exc}.[/red] Retry in a moment, or check the server's log."
        )
        raise typer.Exit(1) from None


def _from_daemon(settings: Settings, ask: Any) -> Any:
    """``ask(session)`` through the daemon owning the data directory; None when none runs."""
    try:
        return via_daemon(settings, ask)
    except ToolError as exc:
        err_console.print(error_line(exc, "The daemon could not answer: "))
        raise typer.Exit(1) from None


# The maintenance commands register on the same app, listed after these.
from memory_service.cli import (  # noqa: E402, F401
    backup,
    daemon,
    index,
    normalize,
    portability,
    repair,
)

if __name__ == "__main__":
    app()
