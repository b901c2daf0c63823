"""The blocking link to the daemon (daemon/link.py), over real sockets."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from memory_service.daemon.link import GONE, DaemonLink, DaemonUnavailable, connect
from memory_service.daemon.paths import DaemonPaths


def _paths(tmp_path: Path) -> DaemonPaths:
    data = tmp_path / "data"
    return DaemonPaths(
        data_dir=data,
        socket=tmp_path / "d.sock",
        spawn_lock=tmp_path / "d.spawn.lock",
        info=data / "daemon.json",
        log=data / "daemon.log",
    )


def test_lines_are_cut_at_newlines_whatever_the_chunks() -> None:
    ours, theirs = socket.socketpair()
    link = DaemonLink(ours, {})
    theirs.sendall(b'{"a":1}\n{"b"')
    assert link.receive_line() == b'{"a":1}\n'
    theirs.sendall(b':2}\n{"c":3}\n')
    assert link.receive_line() == b'{"b":2}\n'
    assert link.receive_line() == b'{"c":3}\n'
    theirs.sendall(b'{"cut')
    theirs.close()
    with pytest.raises(EOFError):  # the daemon went away mid-line
        link.receive_line()
    link.close()


def test_closing_a_link_ends_a_receive_blocked_in_another_thread() -> None:
    ours, theirs = socket.socketpair()
    link = DaemonLink(ours, {})
    raised: list[BaseException] = []

    def receive() -> None:
        try:
            link.receive_line()
        except GONE as exc:
            raised.append(exc)

    reader = threading.Thread(target=receive)
    reader.start()
    link.close()
    reader.join(timeout=10)
    assert not reader.is_alive() and len(raised) == 1
    theirs.close()


def test_without_a_daemon_connect_says_none_runs(tmp_path: Path) -> None:
    with pytest.raises(DaemonUnavailable, match="no memory-service daemon is running"):
        connect(_paths(tmp_path), start=False)


def test_a_socket_that_is_not_a_daemons_is_refused(tmp_path: Path) -> None:
    paths = _paths(tmp_path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(paths.socket))
        listener.listen()

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.sendall(b'{"jsonrpc":"2.0","method":"something/else"}\n')
                conn.recv(1)  # until the other end closes

        server = threading.Thread(target=answer)
        server.start()
        with pytest.raises(DaemonUnavailable, match="is not a memory-service daemon's socket"):
            connect(paths, start=False)
        server.join(timeout=10)
