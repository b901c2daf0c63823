"""memory-cli repair: bring a damaged data directory back from its memory records.

Run with the server stopped. It moves damaged vector files and a graph that will not open aside
(never deletes them), salvages what the main graph file holds, rebuilds the Memory nodes and
derivable relationships and the context vectors from the records (normalize's repair phase), the
edges memories were created with from the audit log, puts back the graph changes that gave up
meanwhile, and acknowledges the store alarms health reports. Memories no surviving store holds
are named and the exit code is 1. ``--accept-empty`` is the explicit consent to start without the
memories collection when it is gone and no backup is to be restored; ``--accept-loss`` writes off
the memories that cannot be recovered.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
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
)
from memory_service.cli.via_daemon import refuse_while_daemon
from memory_service.core.errors import MemoryServiceError


@app.command()
def repair(
    ctx: typer.Context,
    data_dir: DataDir = None,
    accept_empty: Annotated[
        bool,
        typer.Option(
            "--accept-empty",
            help="The memories collection is gone and no backup will be restored: start with none.",
        ),
    ] = False,
    accept_loss: Annotated[
        bool,
        typer.Option(
            "--accept-loss",
            help="Write off the memories no surviving store holds (audited): health stops reporting them.",
        ),
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Set damaged store files aside, rebuild the graph (nodes, and edges from the audit log) and
    context vectors from the memory records, and acknowledge the store alarms. Exit 1 if something
    could not be repaired, or memories could not be recovered (they are listed by id)."""
    from memory_service.app import open_services
    from memory_service.core.maintenance.repair import RepairService
    from memory_service.stores.presence import AUDIT_LOST, GRAPH_LOST, LOCAL_DB_LOST

    as_json = json_flag(ctx, as_json)
    settings = load_settings(data_dir)
    refuse_while_daemon(settings, "a repair")
    try:
        services = open_services(settings, housekeeping=False, repair=True, accept_empty=accept_empty)
    except MemoryServiceError as exc:
        _fail(as_json, exc.to_envelope(), error_line(exc), 2)
    presence = services.presence
    try:
        if accept_empty:
            from memory_service.core.audit_event import audit_event

            event = audit_event("accept_empty", "store", "memories", settings.actor, {})
            services.stores.audit.append([event])
        services.stores.embedder.wait_ready(settings.embedding.load_timeout_seconds)
        try:
            outcome = RepairService(
                services.stores, services.sync, services.normalize, services.jobs, settings.actor
            ).run()
        except MemoryServiceError as exc:
            _fail(as_json, exc.to_envelope(), error_line(exc), 1)
        graph = presence.graph_repair if presence else None
        outcome["graph_files"] = graph.__dict__ if graph else None
        vectors = presence.vector_repair if presence else None
        outcome["vector_files"] = vectors.__dict__ if vectors else None
        if presence is not None:
            lost = presence.check_records(services.stores, full=True).missing_records
            if lost and (accept_loss or accept_empty):  # consent to lose them
                from memory_service.core.audit_event import audit_event
                from memory_service.core.records import MEMORY_LABEL, RECORD_LOST
                from memory_service.core.write.graph_sync import op_delete_nodes

                events = [audit_event(RECORD_LOST, "memory", i, settings.actor, {}) for i in lost]
                services.stores.audit.append(events)
                services.sync.enqueue([op_delete_nodes(MEMORY_LABEL, lost)])  # and their edges
                services.sync.drain()
                outcome["memories_written_off"] = lost
                lost = presence.check_records(services.stores, full=True).missing_records
            outcome["memories_unrecoverable"] = lost
            if outcome["status"] == "completed" and lost:
                outcome["status"] = "incomplete"
                outcome["error"] = (
                    f"{len(lost)} memories could not be recovered: no surviving store holds their "
                    "content (restore a backup, or write them off with --accept-loss)"
                )
        if outcome["status"] in ("completed", "incomplete") and presence is not None:
            outcome["alarms_cleared"] = presence.clear([GRAPH_LOST, LOCAL_DB_LOST, AUDIT_LOST])
            presence.save()
            outcome["alarms_left"] = presence.alarms
    finally:
        services.close()
    if as_json:
        typer.echo(json.dumps(outcome, indent=2, default=str))
    else:
        _print(outcome)
    if outcome["status"] != "completed":
        err_console.print(f"[red]repair {outcome['status']}[/red]: {outcome['error']}")
        raise typer.Exit(1)


def _fail(as_json: bool, envelope: dict[str, Any], text: str, code: int) -> Any:
    if as_json:
        typer.echo(json.dumps(envelope, indent=2))
    else:
        err_console.print(text)
    raise typer.Exit(code)


def _print(outcome: dict[str, Any]) -> None:
    table = Table(title=f"repair {outcome['status']}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in outcome.items():
        if isinstance(value, int) and not isinstance(value, bool):
            table.add_row(key, str(value))
    for key, value in outcome["graph"].items():
        table.add_row(f"graph.{key}", str(value))
    console.print(table)
    for note in (outcome.get("graph_files") or {}).get("notes", []):
        console.print(f"graph files: {note}")
    for note in (outcome.get("vector_files") or {}).get("notes", []):
        console.print(f"vector files: {note}")
    for memory_id in outcome.get("memories_unrecoverable", []):
        err_console.print(f"[red]not recovered: memory {memory_id}[/red]")
    for warning in outcome["warnings"]:
        err_console.print(f"[yellow]{warning}[/yellow]")
    for alarm in (outcome.get("alarms_left") or {}).values():
        err_console.print(f"[yellow]still open: {ended(alarm['message'])}[/yellow] {alarm['suggestion']}")
    console.print(f"code index: {outcome['code_index']['hint']}")
