"""memory-cli export and import (docs/export-format.md), with a progress bar over memories and a summary."""

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


def _portability(as_json: bool, settings: Settings, title: str, run: Any) -> None:
    """Run an export or import with a progress bar over memories, then print its summary (or JSON).

    On failure: the error's message, suggestion and listed bad lines, exit 1 (2 if a server owns
    the data directory)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    services = open_or_exit(settings)
    try:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=err_console if as_json else console, disable=as_json) as bar:
            task = bar.add_task(title, total=None)
            result = run(services, lambda done, total: bar.update(task, completed=done, total=total))
    except MemoryServiceError as exc:
        if as_json:
            typer.echo(json.dumps(exc.to_envelope(), indent=2))
        err_console.print(f"[red]{exc.message}[/red]\n{exc.suggestion}")
        for bad in exc.details.get("errors", [])[:20] if isinstance(exc.details.get("errors"), list) else []:
            if isinstance(bad, dict) and "line" in bad:
                err_console.print(f"  line {bad['line']}: {bad.get('error', '')}")
        raise typer.Exit(1) from None
    finally:
        services.close()
    figures = result.model_dump(mode="json")
    if as_json:
        typer.echo(json.dumps(figures, indent=2))
        return
    table = Table(title=f"{title} — {figures['file_path']}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        if key != "file_path" and not (key == "errors" and not value):
            table.add_row(key, json.dumps(value) if isinstance(value, list | dict) else str(value))
    console.print(table)


@app.command("export")
def export_memories(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The JSONL file to write (must not exist, unless --force).")],
    memory_type: Annotated[
        list[str] | None, typer.Option("--type", metavar="TYPE", help="Only this memory type (repeatable).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(metavar="TIME", help="Only memories updated at or after (ISO 8601).")
    ] = None,
    until: Annotated[
        str | None, typer.Option(metavar="TIME", help="Only memories updated at or before (ISO 8601).")
    ] = None,
    include_embeddings: Annotated[
        bool, typer.Option("--include-embeddings", help="Also write the dense vectors.")
    ] = False,
    include_deleted: Annotated[
        bool, typer.Option("--include-deleted", help="Also write soft-deleted memories.")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Export memories, with their relationships and votes, to a JSONL file (docs/export-format.md)."""
    from memory_service.core.portability_schemas import ExportMemoryInput
    from memory_service.core.validation import validate_input

    fields: dict[str, Any] = {"memory_types": memory_type or None, "since": since, "until": until}
    fields |= {"include_embeddings": include_embeddings, "include_deleted": include_deleted}
    fields["output_path"] = str(file.expanduser().absolute())

    def run(services: Any, progress: Any) -> Any:
        req = validate_input(ExportMemoryInput, {k: v for k, v in fields.items() if v is not None})
        return services.portability.export(req, progress, trusted_path=True, overwrite=force)

    _portability(json_flag(ctx, as_json), load_settings(data_dir), "export", run)


@app.command("import")
def import_memories(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A JSONL file written by export_memory or memory-cli export.")],
    mode: Annotated[
        str,
        typer.Option("--mode", metavar="MODE", help="For ids that already exist: skip, overwrite or merge."),
    ] = "skip",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and count; write nothing.")] = False,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Import a JSONL export; the whole file is checked first, and a bad line imports nothing."""
    from memory_service.core.portability_schemas import ImportMemoryInput
    from memory_service.core.validation import validate_input

    fields = {"file_path": str(file.expanduser().absolute()), "conflict_resolution": mode, "dry_run": dry_run}

    def run(services: Any, progress: Any) -> Any:
        req = validate_input(ImportMemoryInput, fields)
        services.stores.embedder.wait_ready(services.settings.embedding.load_timeout_seconds)
        return services.portability.import_file(req, progress, trusted_path=True)

    _portability(json_flag(ctx, as_json), load_settings(data_dir), "import", run)
