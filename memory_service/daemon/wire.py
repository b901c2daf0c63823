"""What both ends of a daemon connection agree on, importable without anyio or the MCP SDK (the
relay process only relays lines: it stays small)."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_LINE = 256 * 1024 * 1024  # one JSON-RPC message; imports carry whole files

# A JSON string or a bracket: enough to walk a message's nesting without building it.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
# The value of a top-level "id": a bounded integer or string, as JSON-RPC ids are.
_ID_VALUE = re.compile(rb'\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,1000}")\s*[,}]')


def message_id(line: bytes) -> Any:
    """The top-level ``id`` of a JSON-RPC message that no parser accepts whole (invalid UTF-8,
    nesting deeper than the parsers allow, a number out of range), found by walking its strings
    and brackets only; None when it has none that can be read. Whoever answers such a message
    with an error answers it under this id, so the client's request does not wait for ever."""
    depth = 0
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and text == b'"id"' and (value := _ID_VALUE.match(line, token.end())):
            try:
                found = json.loads(value[1].decode("utf-8"))
                if isinstance(found, str):
                    found.encode("utf-8")  # a lone surrogate escape cannot go back on the wire
            except ValueError:  # (UnicodeError included)
                return None
            return found
    return None
