"""memory-cli export and import (docs/export-format.md), with a progress bar over memories and a
summary; run by the daemon (export_memory, import_memory) when one owns the data directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, cast

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
from memory_service.cli.via_daemon import via_daemon
from memory_service.core.errors import MemoryServiceError
from memory_service.daemon.client import DaemonSession
from memory_service.settings import Settings


def _portability(as_json: bool, settings: Settings, title: str, direct: Any, through: Any) -> None:
    """Run an export or import with a progress bar over memories, then print its summary (or JSON).

    ``through(session, progress)`` runs it in the daemon when one owns the data directory (the
    export_memory / import_memory tool, whose path rules apply); else ``direct(services,
    progress)`` in this process. On failure: the error's message, suggestion and listed bad
    lines, exit 1 (2 if a server owns the data directory)."""
    daemon: dict[str, Any] = {}

    def run_through(session: DaemonSession) -> dict[str, Any]:
        daemon["pid"] = session.hello.get("pid")
        with _bar(as_json, title) as bar:
            return cast(dict[str, Any], through(session, _moved(bar)))

    try:
        figures = via_daemon(settings, run_through)
        if figures is None:
            services = open_or_exit(settings)
            try:
                with _bar(as_json, title) as bar:
                    figures = direct(services, _moved(bar)).model_dump(mode="json")
            finally:
                services.close()
    except MemoryServiceError as exc:
        if as_json:
            typer.echo(json.dumps(exc.to_envelope(), indent=2))
        err_console.print(error_line(exc, sep="\n"))
        if exc.code == "VAL_PATH_OUTSIDE_ROOTS" and daemon:
            err_console.print(
                f"memory-cli passed the path to the running daemon (pid {daemon['pid']}), which takes only "
                "paths inside the project root, MEMORY_INDEXER__ALLOWED_ROOTS or the data directory."
            )
        for bad in exc.details.get("errors", [])[:20] if isinstance(exc.details.get("errors"), list) else []:
            if isinstance(bad, dict) and "line" in bad:
                err_console.print(f"  line {bad['line']}: {bad.get('error', '')}")
        raise typer.Exit(1) from None
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


def _bar(as_json: bool, title: str) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    bar = Progress(*columns, console=err_console if as_json else console, disable=as_json)
    bar.add_task(title, total=None)
    return bar


def _moved(bar: Any) -> Any:
    """``progress(done, total)`` moving the bar's one task."""
    return lambda done, total: bar.update(bar.task_ids[0], completed=done, total=total or None)


def _tool_progress(progress: Any) -> Any:
    """An MCP progress notification's params, as ``progress(done, total)``."""
    return lambda params: progress(int(params.get("progress") or 0), int(params.get("total") or 0))


@app.command("export")
def export_memories(
    ctx: typer.Context,
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help="The JSONL file to write (must not exist, unless --force).")
    ],
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
    from memory_service.core.portability.schemas import ExportMemoryInput

    fields: dict[str, Any] = {"memory_types": memory_type or None, "since": since, "until": until}
    fields |= {"include_embeddings": include_embeddings, "include_deleted": include_deleted}
    fields["output_path"] = str(file.expanduser().absolute())
    req = _checked(ExportMemoryInput, {k: v for k, v in fields.items() if v is not None}, as_json, ctx)

    def direct(services: Any, progress: Any) -> Any:
        return services.portability.export(req, progress, trusted_path=True, overwrite=force)

    def through(session: DaemonSession, progress: Any) -> dict[str, Any]:
        arguments = req.model_dump(mode="json", exclude_none=True)
        target = Path(arguments["output_path"])
        if not (force and target.exists()):
            return session.call("export_memory", arguments, progress=_tool_progress(progress))
        # The tool never replaces a file: it writes a new one beside it, which then replaces it.
        fresh = target.with_name(f".{target.name}.{os.getpid()}.new")
        try:
            out = session.call(
                "export_memory", {**arguments, "output_path": str(fresh)}, progress=_tool_progress(progress)
            )
            os.replace(fresh, target)
        finally:
            fresh.unlink(missing_ok=True)
        return {**out, "file_path": str(target)}

    _portability(json_flag(ctx, as_json), load_settings(data_dir), "export", direct, through)


@app.command("import")
def import_memories(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(metavar="FILE", help="A JSONL file written by export_memory or memory-cli export."),
    ],
    mode: Annotated[
        str,
        typer.Option("--mode", metavar="MODE", help="For ids that already exist: skip, overwrite or merge."),
    ] = "skip",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and count; write nothing.")] = False,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Import a JSONL export; the whole file is checked first, and a bad line imports nothing."""
    from memory_service.core.portability.schemas import ImportMemoryInput

    fields = {"file_path": str(file.expanduser().absolute()), "conflict_resolution": mode, "dry_run": dry_run}
    req = _checked(ImportMemoryInput, fields, as_json, ctx)

    def direct(services: Any, progress: Any) -> Any:
        services.stores.embedder.wait_ready(services.settings.embedding.load_timeout_seconds)
        return services.portability.import_file(req, progress, trusted_path=True)

    def through(session: DaemonSession, progress: Any) -> dict[str, Any]:
        arguments = req.model_dump(mode="json")
        return session.call("import_memory", arguments, progress=_tool_progress(progress))

    _portability(json_flag(ctx, as_json), load_settings(data_dir), "import", direct, through)


def _checked(model: Any, fields: dict[str, Any], as_json: bool, ctx: typer.Context) -> Any:
    """The tool's input model, validated here first: a bad option is refused before any store or
    daemon is asked."""
    from memory_service.core.validation import validate_input

    try:
        return validate_input(model, fields)
    except MemoryServiceError as exc:
        if json_flag(ctx, as_json):
            typer.echo(json.dumps(exc.to_envelope(), indent=2))
        err_console.print(error_line(exc, sep="\n"))
        raise typer.Exit(1) from None
