"""``memory-cli``: operator commands (seed 001 §5). Opens the same stores the server uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from memory_service.core.errors import MemoryServiceError
from memory_service.settings import Settings

app = typer.Typer(
    name="memory-cli",
    help="Operate a memory-service data directory: health and statistics.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True, soft_wrap=True)

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Data directory (default: MEMORY_DATA_DIR or per project).")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _settings(data_dir: Path | None) -> Settings:
    return Settings(data_dir=data_dir) if data_dir else Settings()


def _open(settings: Settings) -> Any:
    from memory_service.app import open_services
    from memory_service.stores.owner_lock import read_owner

    owner = read_owner(settings.resolved_data_dir)
    try:
        return open_services(settings, housekeeping=False)
    except MemoryServiceError as exc:
        if exc.code == "SVC_DATA_DIR_LOCKED":
            err_console.print(
                f"[yellow]The data directory {settings.resolved_data_dir} is in use by a running "
                f"memory-service (pid {owner}).[/yellow] The CLI opens the stores directly: stop that "
                "server first, or point --data-dir at another directory."
            )
            raise typer.Exit(2) from None
        err_console.print(f"[red]{exc.message}[/red] {exc.suggestion}")
        raise typer.Exit(1) from None


@app.command()
def health(data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Check each store and the embedding model; exit 1 if anything is unavailable."""
    settings = _settings(data_dir)
    services = _open(settings)
    try:
        services.stores.embedder.wait_ready(settings.embedding.load_timeout_seconds)
        parts = services.health()
        sync = services.sync.pending()
    finally:
        services.close()
    rows = [{"component": p.name, "state": p.state, "backend": p.backend, "detail": p.detail} for p in parts]
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
def stats(data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Show memory counts by type, relationships, storage sizes and sync state."""
    settings = _settings(data_dir)
    services = _open(settings)
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
        for key, value in values.items():
            if isinstance(value, dict):
                for sub, n in value.items():
                    table.add_row(section, f"{key}.{sub}", str(n))
            else:
                table.add_row(section, key, str(value))
    console.print(table)


if __name__ == "__main__":
    app()
