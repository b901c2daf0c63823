"""Keep every response under the token cap (seed 001 §4.3: 50K tokens).

Tokens are estimated from the JSON text length (characters per token is a setting, 3 by
default: conservative for English and JSON). When a response is too large, the longest string
fields are cut to a common length, each cut visibly marked, and the response says so.
"""

from __future__ import annotations

import json
from typing import Any

MARKER = " …[truncated: {shown} of {total} characters shown; call memory_get for the full text]"
_MARKER_ROOM = len(MARKER) + 16


def json_size(payload: Any) -> int:
    return len(json.dumps(payload, ensure_ascii=False, default=str))


def fit_to_budget(payload: dict[str, Any], max_chars: int) -> tuple[dict[str, Any], bool]:
    """Return (payload, truncated). Strings are cut longest-first until the JSON fits ``max_chars``."""
    size = json_size(payload)
    if size <= max_chars:
        return payload, False
    leaves: list[tuple[list[Any], Any, int]] = []
    _collect(payload, leaves)
    if not leaves:
        return payload, False
    lengths = [n for _, _, n in leaves]
    excess = size - max_chars
    cap = _common_cap(lengths, excess)
    for container, key, length in leaves:
        if length > cap:
            text = container[key]
            shown = max(cap - _MARKER_ROOM, 0)
            container[key] = text[:shown] + MARKER.format(shown=shown, total=length)
    payload["truncated"] = True
    payload["truncation_note"] = (
        f"Response exceeded the {max_chars}-character budget; long text fields were shortened. "
        "Ask for fewer results (limit) or fetch single memories with memory_get."
    )
    return payload, True


def _collect(node: Any, out: list[tuple[Any, Any, int]]) -> None:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if isinstance(value, str):
            if len(value) > _MARKER_ROOM * 2:
                out.append((node, key, len(value)))
        else:
            _collect(value, out)


def _common_cap(lengths: list[int], excess: int) -> int:
    """The largest cap such that cutting every string to it removes at least ``excess`` chars."""
    need = excess + _MARKER_ROOM * len(lengths) + 256

    def removed(cap: int) -> int:
        return sum(n - cap for n in lengths if n > cap)

    lo, hi = 0, max(lengths)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if removed(mid) >= need:
            lo = mid
        else:
            hi = mid - 1
    return max(lo, _MARKER_ROOM * 2)


# ---------------------------------------------------------------- what errors, logs and audit repeat

# An error, a log line or an audit record repeats at most this much of one input string:
# a prefix and the length, so a 5 MB value never comes back (or lands on disk) whole.
ECHO_CHARS = 200
_ECHO_ITEMS = 50
# An audit record keeps more (a vote's rationale is up to 2,000 characters) but not a whole input.
AUDIT_TEXT_CHARS = 4000
AUDIT_ITEMS = 200


def clip_text(value: str, limit: int = ECHO_CHARS) -> str:
    """``value`` itself when short, else a prefix and its length, ``limit`` characters in all
    (so clipping twice changes nothing)."""
    if len(value) <= limit:
        return value
    suffix = f"… ({len(value)} characters)"
    return value[: max(limit - len(suffix), 0)] + suffix


def clip_value(value: Any, limit: int = ECHO_CHARS, *, items: int = _ECHO_ITEMS, depth: int = 0) -> Any:
    """A JSON-able copy of ``value`` with every string clipped, long lists and dicts shortened and
    nesting cut at four levels: what an error envelope or an audit record may repeat of input."""
    if isinstance(value, str):
        return clip_text(value, limit)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if depth >= 4:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        pairs = list(value.items())
        out = {
            clip_text(str(k), limit): clip_value(v, limit, items=items, depth=depth + 1)
            for k, v in pairs[:items]
        }
        if len(pairs) > items:
            out["…"] = f"{len(pairs) - items} more entries"
        return out
    if isinstance(value, list | tuple):
        head = [clip_value(v, limit, items=items, depth=depth + 1) for v in list(value)[:items]]
        if len(value) > items:
            head.append(f"… {len(value) - items} more items")
        return head
    return clip_text(str(value), limit)
