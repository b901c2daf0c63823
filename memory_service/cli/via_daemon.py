"""memory-cli through the data directory's daemon (docs/daemon.md).

While a daemon owns the stores, the commands call its tools, the same ones every session calls,
instead of opening the stores. :func:`via_daemon` runs a command's work through the daemon, or
returns None when none runs so that the command opens the stores itself. The other functions
turn tool answers into what the direct path prints, hand a backup to the daemon (which pauses its
writes for the copy), and refuse the commands that need the stores closed (restore, repair).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from memory_service.cli.common import err_console, error_line
from memory_service.core.errors import ServiceUnavailableError
from memory_service.core.jobs import FINISHED
from memory_service.daemon.client import DaemonSession, operator_call, read_hello
from memory_service.daemon.hello import BACKUP_METHOD
from memory_service.daemon.link import DaemonUnavailable
from memory_service.daemon.paths import DaemonPaths
from memory_service.settings import Settings
from memory_service.stores.owner_lock import read_owner

T = TypeVar("T")
FileProgress = Callable[[str, int, int], None]  # (description, done, total), as backup.Progress
# How long to wait for a daemon that went away mid-command to release the stores (or for one
# being started to answer) before opening the stores directly.
SETTLE_S = 30.0
POLL_S = 0.25
# What health calls the parts that memory_statistics names no backend for: the embedder
# (fastembed_embedder.py) and the data directory's store presence (store_presence.py).
FIXED_BACKENDS = {"embedding": "fastembed", "stores": "data-dir"}


def via_daemon(settings: Settings, work: Callable[[DaemonSession], T]) -> T | None:
    """``work``'s result through the daemon serving the data directory; None when none runs.

    A daemon that goes away under the command (it was stopping) is waited for until it has
    released the stores, then the command starts again: through its successor if a session
    started one, else with None (the caller opens the stores). So is a daemon still starting (a
    session's forwarder holds the spawn lock) or stopping (its ``daemon.json`` names the lock's
    holder). A directory held by a ``--no-daemon`` server gives None at once: the caller's open
    then says who holds it.
    """
    try:
        paths = DaemonPaths.of(settings)
    except ServiceUnavailableError:
        return None  # an unusable socket directory: no daemon can listen there
    deadline: float | None = None
    went_away = False
    while True:
        try:
            with DaemonSession(settings) as session:
                return work(session)
        except DaemonUnavailable as exc:
            if exc.code == "SVC_DAEMON_VERSION":
                err_console.print(f"[yellow]{exc}.[/yellow]")
                raise typer.Exit(2) from None
        except ServiceUnavailableError as exc:
            if exc.code != "SVC_DAEMON_GONE":
                err_console.print(error_line(exc))
                raise typer.Exit(1) from None
            if not went_away:
                err_console.print(
                    "[yellow]The memory-service daemon went away during the command[/yellow] (stopped "
                    "or killed): running it again once the stores are free (or through the daemon a "
                    "session starts meanwhile)."
                )
            went_away = True
        owner = read_owner(paths.data_dir)
        settling = _spawning(paths) or (owner is not None and (went_away or _daemon_holds(paths, owner)))
        if not settling:
            return None
        deadline = deadline or time.monotonic() + max(SETTLE_S, settings.daemon.start_timeout_s)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def _daemon_holds(paths: DaemonPaths, owner: int) -> bool:
    info = paths.read_info()
    return info is not None and info.get("pid") == owner


def _spawning(paths: DaemonPaths) -> bool:
    """A forwarder holds the spawn lock: it is starting a daemon (or checking for one)."""
    try:
        fd = os.open(paths.spawn_lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our shared lock, if we took it
    return False


def backup_via_daemon(settings: Settings, dest: Path, progress: FileProgress) -> dict[str, Any] | None:
    """The backup taken by the daemon serving the data directory, with its writes paused for the
    copy (backup/online.py); None when no daemon runs (the caller backs up offline). A daemon
    still starting or stopping is waited for, as :func:`via_daemon` does."""
    try:
        paths = DaemonPaths.of(settings)
    except ServiceUnavailableError:
        return None  # an unusable socket directory: no daemon can listen there
    params = {"path": str(dest.expanduser().resolve())}
    deadline = time.monotonic() + max(SETTLE_S, settings.daemon.start_timeout_s)
    while True:
        if read_hello(settings) is not None:
            try:
                return operator_call(
                    settings,
                    BACKUP_METHOD,
                    params,
                    lambda p: progress(
                        str(p.get("message", "")), int(p.get("progress", 0)), int(p.get("total", 0))
                    ),
                )
            except DaemonUnavailable as exc:
                if exc.code == "SVC_DAEMON_VERSION":
                    err_console.print(f"[yellow]{exc}.[/yellow]")
                    raise typer.Exit(2) from None
        owner = read_owner(paths.data_dir)
        settling = _spawning(paths) or (owner is not None and _daemon_holds(paths, owner))
        if not settling or time.monotonic() > deadline:
            return None  # no daemon: offline (a --no-daemon server's lock then says who holds it)
        time.sleep(0.1)


def refuse_while_daemon(settings: Settings, command: str) -> None:
    """Exit 2 with one line when a daemon (of any version) owns the data directory: ``command``
    needs the stores closed."""
    hello = read_hello(settings)
    if hello is None:
        return
    err_console.print(
        f"[yellow]The memory-service daemon (pid {hello['pid']}) owns {settings.resolved_data_dir}; "
        f"{command} needs the stores closed.[/yellow] Stop it with `memory-cli daemon stop` and run "
        "the command again (a session still connected to it starts a new daemon at once: close "
        "those sessions first)."
    )
    raise typer.Exit(2)


def daemon_health(session: DaemonSession, wait_model_s: float) -> dict[str, Any]:
    """memory-cli health's report from memory_statistics, asked again while the model is still
    loading (for up to ``wait_model_s``), as the direct path waits for the model it loads."""
    deadline = time.monotonic() + wait_model_s
    while True:
        figures = session.call("memory_statistics", {})
        if figures.get("health", {}).get("embedding") != "degraded" or time.monotonic() >= deadline:
            return health_report(figures)
        time.sleep(0.5)


def health_report(figures: dict[str, Any]) -> dict[str, Any]:
    """{healthy, components: [{component, state, backend, detail}], sync} from memory_statistics:
    the backends from its storage section, a part's detail from its warning (``"<name> <state>:
    <detail>"``, given for each part that is not ok); an ok part's detail (a path) is not sent."""
    storage = figures.get("storage", {})
    backends = {
        "vectors": storage.get("vector_store", ""),
        "graph": storage.get("graph_store", ""),
        "cache": storage.get("cache_store", ""),
        "queue": storage.get("cache_store", ""),  # one setting, redis.backend, picks both
        **FIXED_BACKENDS,
    }
    warnings = [w for w in figures.get("warnings", []) if isinstance(w, str)]
    rows = []
    for name, state in figures.get("health", {}).items():
        prefix = f"{name} {state}: "
        detail = next((w.removeprefix(prefix) for w in warnings if w.startswith(prefix)), "")
        rows.append({"component": name, "state": state, "backend": backends.get(name, ""), "detail": detail})
    sync = figures.get("sync", {})
    inflight = sync.get("inflight", 0)
    return {
        "healthy": all(row["state"] != "unavailable" for row in rows),
        "components": rows,
        # statistics counts the in-flight changes as pending too; the queue's own counts do not
        "sync": {
            "pending": sync.get("pending", 0) - inflight,
            "inflight": inflight,
            "failed": sync.get("failed", 0),
        },
    }


def follow_job(
    session: DaemonSession, status_tool: str, job_id: str, moved: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Ask ``status_tool`` about the job until it ends, showing each view of the job to ``moved``
    (progress, phase, and done / total / unit when it counts them); its last answer.
    Interrupted (Ctrl-C), say that the job goes on in the daemon."""
    try:
        while True:
            answer = session.call(status_tool, {"job_id": job_id})
            job = answer.get("job") or answer  # index_status nests the job; normalize_status is it
            moved(job)
            if job.get("status") in FINISHED:
                return answer
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):
            err_console.print(
                f"\nThe job {job_id} goes on in the daemon: follow it with {status_tool} (job_id {job_id})."
            )
        raise typer.Exit(130) from None
