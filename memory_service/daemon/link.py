"""Reaching the data directory's daemon: connect to its socket, starting it when none runs.

Used by every session's relay (forwarder.py) and by memory-cli (client.py). Starting is
serialised by a spawn lock, so that sessions starting at the same moment start one daemon. Each
connection opens with the daemon's hello (its version and pid): a daemon of another version is
refused with a message saying how to stop it.

Plain blocking sockets, no event loop: a relay process imports this module, and anyio's asyncio
loop alone would add 11 MB to it (asyncio loads OpenSSL). One thread may send on a link while
another receives.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memory_service import __version__
from memory_service.daemon.boot import this_package
from memory_service.daemon.hello import HELLO_METHOD
from memory_service.daemon.paths import DaemonPaths
from memory_service.daemon.wire import MAX_LINE
from memory_service.stores.owner_lock import read_owner

if TYPE_CHECKING:
    from memory_service.settings import Settings

logger = logging.getLogger(__name__)
# The other end went away: EOFError for a clean end of stream, OSError for the rest (a reset, a
# broken pipe, a socket closed by another thread).
GONE = (EOFError, OSError)
# The line a daemon prints before exiting when it cannot start (service.py): code and reason.
FAILURE = re.compile(r"^memory-service daemon: \[(?P<code>[A-Z_]+)\] (?P<message>.*)$")


class DaemonUnavailable(Exception):
    """No daemon could be reached or started; the message says why and what to do."""

    def __init__(self, message: str, code: str = "SVC_DAEMON_UNAVAILABLE") -> None:
        super().__init__(message)
        self.code = code


class RestartBudget:
    """How often a session's daemon may die before the session stops starting new ones
    (docs/daemon.md, Faults): more than ``limit`` deaths in ``window`` seconds, counting daemons
    that died before they listened and daemons that died serving."""

    def __init__(self, limit: int = 5, window: float = 60.0) -> None:
        self._limit = limit
        self._window = window
        self._deaths: list[float] = []

    def spend(self, paths: DaemonPaths, last: str = "") -> None:
        """Count one death (``last``: how it ended, when known); DaemonUnavailable when that is
        one too many."""
        now = time.monotonic()
        self._deaths = [t for t in self._deaths if now - t < self._window] + [now]
        if len(self._deaths) > self._limit:
            how = f" (the last one {last})" if last else ""
            raise DaemonUnavailable(
                f"the memory-service daemon stopped {len(self._deaths)} times in {self._window:.0f} s{how}; "
                f"see {paths.log}"
            )


class DaemonLink:
    """A connection to the daemon, opened after its hello was read and checked."""

    def __init__(self, sock: socket.socket, hello: dict[str, Any]) -> None:
        self._sock = sock
        self._buffer = bytearray()
        self.hello = hello

    def send(self, data: bytes) -> None:
        """All of ``data``, blocking while the daemon is slow to read (backpressure)."""
        self._sock.sendall(data)

    def receive_line(self) -> bytes:
        """The next line, with its newline; a GONE error when the connection ends."""
        start = 0
        while (end := self._buffer.find(b"\n", start)) < 0:
            if len(self._buffer) > MAX_LINE:
                raise ConnectionError(f"the daemon sent a line of over {MAX_LINE} bytes")
            start = len(self._buffer)
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise EOFError("the daemon closed the connection")
            self._buffer += chunk
        line = bytes(self._buffer[: end + 1])
        del self._buffer[: end + 1]
        return line

    def close(self) -> None:
        """Close it; a thread blocked in :meth:`receive_line` gets a GONE error."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a blocked recv, which close() alone does not
        self._sock.close()


def connect(
    paths: Settings | DaemonPaths,
    *,
    start: bool,
    start_timeout: float = 120.0,
    budget: RestartBudget | None = None,
) -> DaemonLink:
    """A checked link to the running daemon; with ``start``, start one when none runs. A daemon
    started here that dies before it listens, without saying why (killed, crashed), is started
    again while ``budget`` allows (a fresh one when None)."""
    if not isinstance(paths, DaemonPaths):  # memory-cli's settings
        start_timeout = paths.daemon.start_timeout_s
        paths = DaemonPaths.of(paths)
    link = _try_connect(paths, start_timeout)
    if link is not None or not start:
        if link is None:
            raise DaemonUnavailable(f"no memory-service daemon is running for {paths.data_dir}")
        return link
    with _spawn_lock(paths, start_timeout):
        link = _try_connect(paths, start_timeout)  # another session started it meanwhile
        if link is not None:
            return link
        budget = budget or RestartBudget()
        proc, logged = _spawn(paths)
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline:
            link = _try_connect(paths, start_timeout)
            if link is not None:
                return link
            if proc.poll() is not None:
                problem = _why_it_exited(paths, proc.returncode, logged)
                if problem.code == "SVC_DATA_DIR_LOCKED" and _stopping_daemon_left(paths, deadline):
                    proc, logged = _spawn(paths)  # the previous daemon was still closing its stores: again
                elif problem.code == "SVC_DAEMON_DIED":  # killed or crashed: a new one may fare better
                    logger.warning("the memory-service daemon %s; starting another", _how(proc.returncode))
                    budget.spend(paths, _how(proc.returncode))
                    proc, logged = _spawn(paths)
                    deadline = time.monotonic() + start_timeout
                else:  # it said why it cannot start: starting it again would not change that
                    raise problem
            time.sleep(0.05)
    raise DaemonUnavailable(
        f"the memory-service daemon did not start within {start_timeout:.0f} s. See {paths.log}; raise "
        "MEMORY_DAEMON__START_TIMEOUT_S if the machine is slow"
    )


def _stopping_daemon_left(paths: DaemonPaths, deadline: float) -> bool:
    """Whether the data directory's lock was held by a daemon that was stopping (its
    ``daemon.json`` names the holder) and is now free: a session that reconnects at once after
    ``memory-cli daemon stop`` must not fail on the lock its old daemon is about to release.
    A ``--no-daemon`` server holding it is not waited for."""
    info = paths.read_info()
    holder = read_owner(paths.data_dir)
    if holder is None or info is None or info.get("pid") != holder:
        return holder is None  # released meanwhile: start again; else not a daemon's lock
    while time.monotonic() < deadline:
        if read_owner(paths.data_dir) is None:
            return True
        time.sleep(0.05)
    return False


def _try_connect(paths: DaemonPaths, timeout: float) -> DaemonLink | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)  # connecting and the hello; the link itself then blocks without limit
    try:
        sock.connect(str(paths.socket))
    except OSError:  # no socket, or a stale one (connection refused): nobody serves it
        sock.close()
        return None
    link = DaemonLink(sock, {})
    try:
        first = json.loads(link.receive_line())
    except (ValueError, *GONE):  # (a timeout is an OSError)
        link.close()
        return None  # it died (or is stopping) between accept and hello
    hello = first.get("params") if isinstance(first, dict) and first.get("method") == HELLO_METHOD else None
    if not isinstance(hello, dict):
        link.close()
        raise DaemonUnavailable(f"{paths.socket} is not a memory-service daemon's socket")
    if hello.get("version") != __version__:
        link.close()
        raise DaemonUnavailable(
            f"the memory-service daemon serving {paths.data_dir} (pid {hello.get('pid')}) is version "
            f"{hello.get('version')}, this memory-service is {__version__}. Stop it (memory-cli daemon stop, "
            "or kill that pid) once its sessions are done; the next session starts a daemon of this version",
            code="SVC_DAEMON_VERSION",
        )
    sock.settimeout(None)
    link.hello = hello
    return link


@contextlib.contextmanager
def _spawn_lock(paths: DaemonPaths, timeout: float) -> Iterator[None]:
    """An exclusive flock on the spawn lock file, for at most ``timeout`` seconds of waiting."""
    fd = os.open(paths.spawn_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DaemonUnavailable(
                        f"another session held {paths.spawn_lock} for {timeout:.0f} s"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing drops the flock


def _spawn(paths: DaemonPaths) -> tuple[subprocess.Popen[bytes], int]:
    """``memory-service daemon`` in its own session (a client's process group may be killed
    when the session ends; the daemon must outlive it), logging to the data directory; with the
    log's size before it, where its own lines begin."""
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMORY_DATA_DIR": str(paths.data_dir)}
    with open(paths.log, "ab") as log:
        logged = log.tell()
        proc = subprocess.Popen(
            # this very package, whatever the session's working directory holds (relay.py)
            this_package("from memory_service.__main__ import main; sys.exit(main(['daemon']))"),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )
    threading.Thread(target=proc.wait, name="reap-daemon", daemon=True).start()  # no zombie when it exits
    return proc, logged


def _how(code: int | None) -> str:
    return f"exited with code {code} before accepting connections"


def _why_it_exited(paths: DaemonPaths, code: int | None, logged: int) -> DaemonUnavailable:
    """The daemon's own one-line reason (it prints one before exiting: its log from ``logged``
    on), else SVC_DAEMON_DIED and where to look."""
    try:
        with open(paths.log, "rb") as log:
            log.seek(logged)
            tail = log.read().decode(errors="replace").splitlines()[-50:]
    except OSError:
        tail = []
    for line in reversed(tail):
        found = FAILURE.match(line)
        if found:
            return DaemonUnavailable(found["message"], found["code"])
    return DaemonUnavailable(
        f"the memory-service daemon {_how(code)}; see {paths.log}",
        code="SVC_DAEMON_DIED",
    )
