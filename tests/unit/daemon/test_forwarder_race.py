"""The forwarder's reconnect against a request arriving at that moment (daemon/forwarder.py):
the request reaches the new connection once, by the replay or by its own send, never by both.

The daemon's end is a real socket pair per connection; ``connect`` is replaced to hand them out
(the interleaving is the forwarder's own logic, which a live daemon cannot stage on demand)."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from memory_service.daemon import forwarder as fw
from memory_service.daemon.link import DaemonLink
from memory_service.daemon.paths import DaemonPaths


def _lines(sock: socket.socket) -> list[bytes]:
    sock.settimeout(2)
    data = b""
    try:
        while chunk := sock.recv(1 << 16):
            data += chunk
    except TimeoutError:
        pass
    return [line for line in data.split(b"\n") if line]


def test_a_request_noted_during_a_reconnect_is_sent_once_on_the_new_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon_ends: list[socket.socket] = []

    def connect(*args: Any, **kwargs: Any) -> DaemonLink:
        ours, theirs = socket.socketpair()
        daemon_ends.append(theirs)
        return DaemonLink(ours, {"pid": len(daemon_ends)})

    monkeypatch.setattr(fw, "connect", connect)
    paths = DaemonPaths(*(tmp_path / name for name in ("data", "sock", "spawn.lock", "info.json", "log")))
    forwarder = fw.Forwarder(paths, profile=b'{"profile":"default"}\n', start_timeout=5)
    forwarder._link = connect()
    params = {"name": "memory_get", "arguments": {}}
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    note = forwarder._note
    reconnects: list[threading.Thread] = []

    def note_during_a_reconnect(line: bytes) -> tuple[bytes, Any]:
        noted = note(line)
        # The connection drops now: the reading thread reconnects and replays what is pending.
        reconnect = threading.Thread(target=forwarder._reconnect)
        reconnects.append(reconnect)
        reconnect.start()
        reconnect.join(timeout=0.5)  # done unless it waits for the lock this call holds
        return noted

    monkeypatch.setattr(forwarder, "_note", note_during_a_reconnect)
    read, write = os.pipe()
    os.write(write, json.dumps(request).encode() + b"\n")
    os.close(write)
    forwarder._from_client(read)
    os.close(read)
    reconnects[0].join(timeout=5)
    assert len(daemon_ends) == 2
    forwarder._link.close()  # type: ignore[union-attr]
    second = [json.loads(line) for line in _lines(daemon_ends[1])]
    sent = [m for m in second if m.get("id") == 7]
    assert len(sent) == 1, f"the new connection got the request {len(sent)} times"
    assert second[0] == {"profile": "default"}
    for end in daemon_ends:
        end.close()
