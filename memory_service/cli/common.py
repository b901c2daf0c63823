"""What every ``memory-cli`` command shares: the Typer app, consoles, options, opening the stores.

The commands live in ``cli/main.py`` (health, stats, index) and ``cli_*.py`` (maintenance); each
registers itself on :data:`app`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from memory_service import __version__
from memory_service.core.errors import MemoryServiceError
from memory_service.settings import Settings

app = typer.Typer(
    name="memory-cli",
    help="Operate a memory-service data directory: health, statistics, indexing, maintenance.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help: flags read as flags (``--json``), not as ``--json <bool>``
)
console = Console()
err_console = Console(stderr=True, soft_wrap=True)

DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data-dir", metavar="DIR", help="Data directory (default: MEMORY_DATA_DIR or per project)."
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"memory-cli {__version__}")
        raise typer.Exit()


Version = Annotated[
    bool,
    typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
]


@app.callback()
def main(ctx: typer.Context, as_json: AsJson = False, version: Version = False) -> None:
    """Operate a memory-service data directory: health, statistics, indexing, maintenance.

    --json goes before or after the command: `memory-cli --json stats` or `memory-cli stats --json`.
    """
    del version  # handled by its callback
    ctx.obj = {"json": as_json}


def ended(text: str) -> str:
    """``text`` as a finished sentence: a full stop added unless it ends with one (or ? !)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".?!" else f"{text}."


def error_line(exc: MemoryServiceError, lead: str = "", *, sep: str = " ") -> str:
    """An error for the terminal: its message in red as a sentence, then its suggestion."""
    line = f"[red]{escape(ended(lead + exc.message))}[/red]"
    return f"{line}{sep}{escape(exc.suggestion)}" if exc.suggestion else line


def json_flag(ctx: typer.Context, as_json: bool) -> bool:
    return as_json or bool((ctx.obj or {}).get("json"))


def load_settings(data_dir: Path | None) -> Settings:
    return Settings(data_dir=data_dir) if data_dir else Settings()


def open_or_exit(settings: Settings) -> Any:
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
        err_console.print(error_line(exc))
        raise typer.Exit(1) from None
