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
TEST_VERSION_ENV = "MEMORY_TEST_DAEMON_VERSION"


def announced_version() -> str:
    return os.environ.get(TEST_VERSION_ENV) or __version__


def hello_line() -> bytes:
    params = {"version": announced_version(), "pid": os.getpid()}
    return json.dumps({"jsonrpc": "2.0", "method": HELLO_METHOD, "params": params}).encode() + b"\n"
