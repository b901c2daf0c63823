"""What both ends of a daemon connection agree on, importable without anyio or the MCP SDK (the
relay process only relays lines: it stays small)."""

from __future__ import annotations

MAX_LINE = 256 * 1024 * 1024  # one JSON-RPC message; imports carry whole files
