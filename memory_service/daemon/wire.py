"""What both ends of a daemon connection agree on, importable without the MCP SDK (the forwarder
only relays lines: it stays small)."""

from __future__ import annotations

import anyio

MAX_LINE = 256 * 1024 * 1024  # one JSON-RPC message; imports carry whole files
# The other end of a connection went away (shared by the daemon, the forwarder and memory-cli).
GONE = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError)
