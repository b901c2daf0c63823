"""The daemon's first line on every connection: a JSON-RPC notification saying who it is.

Forwarders and memory-cli read it before anything else and refuse a daemon of another version
(an upgrade while a daemon of the old one still runs). ``MEMORY_TEST_DAEMON_VERSION`` is a
test-only hook making a daemon announce another version; unset in any real deployment.
"""

from __future__ import annotations

import json
import os

from memory_service import __version__

HELLO_METHOD = "notifications/memory-service/daemon"
# A forwarder's first line to the daemon: the tool profile its client speaks (tools/profiles.py).
PROFILE_METHOD = "notifications/memory-service/profile"
TEST_VERSION_ENV = "MEMORY_TEST_DAEMON_VERSION"
# memory-cli's request for a backup taken by the daemon (operator.py): a connection's first line.
BACKUP_METHOD = "memory-service/backup"


def announced_version() -> str:
    return os.environ.get(TEST_VERSION_ENV) or __version__


def hello_line() -> bytes:
    params = {"version": announced_version(), "pid": os.getpid()}
    return json.dumps({"jsonrpc": "2.0", "method": HELLO_METHOD, "params": params}).encode() + b"\n"


def profile_line(profile: str, tool_names: str) -> bytes:
    """What a forwarder sends first: the daemon serves this connection with that profile's tools."""
    params = {"profile": profile, "tool_names": tool_names}
    return json.dumps({"jsonrpc": "2.0", "method": PROFILE_METHOD, "params": params}).encode() + b"\n"


def profile_of(line: bytes) -> dict[str, str] | None:
    """The profile a connection's first line asks for; None when it is not a profile notification."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != PROFILE_METHOD:
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    return {k: str(v) for k, v in params.items() if k in ("profile", "tool_names")}
