"""memory-cli daemon status|stop: the data directory's daemon (docs/daemon.md).

Both reach the daemon through its socket and believe the pid it announces in its hello, not a
``daemon.json`` that a killed daemon may have left: ``stop`` never signals a pid that is not the
live daemon's. They work on a daemon of another version too (left running across an upgrade),
which is what ``stop`` is for.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import typer

from memory_service import __version__
from memory_service.cli.common import AsJson, DataDir, app, console, err_console, json_flag, load_settings
from memory_service.daemon.client import hello_connection, read_hello
from memory_service.daemon.paths import DaemonPaths
from memory_service.settings import Settings
from memory_service.stores.owner_lock import read_owner

STOP_WAIT_S = 30.0

daemon_app = typer.Typer(
    help="The data directory's daemon, which owns its stores and serves every session: status, stop.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(daemon_app, name="daemon")


@daemon_app.command()
def status(ctx: typer.Context, data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Show the running daemon: pid, version, socket, start time, clients, URLs. Exit 1 if none runs."""
    settings = load_settings(data_dir)
    report = _status(settings)
    if json_flag(ctx, as_json):
        typer.echo(json.dumps(report, indent=2))
    elif not report["running"]:
        owner = report.get("owner_pid")
        held = (
            f"; pid {owner} (a memory-service --no-daemon, or a memory-cli command) holds it" if owner else ""
        )
        console.print(f"no memory-service daemon is running for {report['data_dir']}{held}")
    else:
        version = report["version"]
        if version != __version__:
            version += f" (this memory-cli is {__version__}: stop it with `memory-cli daemon stop`)"
        for label, value in (
            ("pid", report["pid"]),
            ("version", version),
            ("data dir", report["data_dir"]),
            ("socket", report["socket"]),
            ("started at", report["started_at"] or "?"),
            ("clients", "?" if report["clients"] is None else report["clients"]),
            ("MCP over HTTP", report["http"] or "-"),
            ("side server", report["side_server"] or "-"),
            ("log", report["log"]),
        ):
            console.print(f"{label:<14}{value}", highlight=False)
    if not report["running"]:
        raise typer.Exit(1)


def _status(settings: Settings) -> dict[str, Any]:
    from memory_service.observability.discovery import running_server

    paths = DaemonPaths.of(settings)
    with hello_connection(settings) as hello:
        clients = _socket_connections(paths.socket) if hello is not None else None
    report: dict[str, Any] = {"running": hello is not None, "data_dir": str(paths.data_dir)}
    report["socket"] = str(paths.socket)
    if hello is None:
        report["owner_pid"] = read_owner(paths.data_dir)
        return report
    info = paths.read_info() or {}
    if info.get("pid") != hello["pid"]:
        info = {}  # left by another daemon: only what this one says of itself counts
    http = info.get("http")
    report |= {
        "pid": hello["pid"],
        "version": str(hello.get("version")),
        "started_at": info.get("started_at"),
        "clients": None if clients is None else max(clients - 1, 0),  # not counting ours
        "http": http.get("url") if isinstance(http, dict) else None,
        "side_server": running_server(paths.data_dir),
        "log": str(paths.log),
    }
    return report


def _socket_connections(socket: Path) -> int | None:
    """Connections the daemon has accepted on its socket, ours included: the connected sockets
    bound to its path in /proc/net/unix (Linux); None where that cannot be read."""
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return None
    # Num RefCount Protocol Flags Type St Inode Path; state 03 is connected.
    fields = (line.split(None, 7) for line in lines)
    return sum(1 for f in fields if len(f) == 8 and f[5] == "03" and f[7] == str(socket))


@daemon_app.command()
def stop(ctx: typer.Context, data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Stop the daemon (SIGTERM) and wait until it has closed the stores. Sessions still connected
    to it start a new daemon at once; close them first to free the data directory."""
    as_json = json_flag(ctx, as_json)
    settings = load_settings(data_dir)
    paths = DaemonPaths.of(settings)
    hello = read_hello(settings)
    if hello is None:
        if as_json:
            typer.echo(json.dumps({"stopped": False, "pid": None, "data_dir": str(paths.data_dir)}))
        else:
            console.print(f"no memory-service daemon is running for {paths.data_dir}")
        return
    pid = int(hello["pid"])
    with contextlib.suppress(ProcessLookupError):  # it exited meanwhile
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    # Wait for the process to end (its owner lock goes with it), then check the lock once:
    # polling the lock itself would race with a successor taking it.
    while _alive(pid) or read_owner(paths.data_dir) == pid:
        if time.monotonic() > deadline:
            err_console.print(
                f"[red]The daemon (pid {pid}) did not stop within {STOP_WAIT_S:.0f} s.[/red] See "
                f"{paths.log}; `kill -9 {pid}` stops it at once (sessions then start a new one, "
                "and the writes it acknowledged are kept)."
            )
            raise typer.Exit(1)
        time.sleep(0.05)
    if as_json:
        typer.echo(json.dumps({"stopped": True, "pid": pid, "data_dir": str(paths.data_dir)}))
    else:
        console.print(f"stopped the memory-service daemon (pid {pid}) of {paths.data_dir}")


def _alive(pid: int) -> bool:
    """Running: a zombie (dead, its parent yet to reap it) has released everything, so it is not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
