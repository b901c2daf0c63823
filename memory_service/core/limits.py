"""Keep every response under the token cap (seed 001 §4.3: 50K tokens).

Tokens are estimated from above from the JSON text (core/tokens.py: by script, so Chinese or
emoji text counts what it costs). When a response is too large, the longest string fields are
cut to a common length, each cut visibly marked, and the response says so; if that is not
enough (many short items), the longest lists lose items from their end.
"""

from __future__ import annotations

from typing import Any

from memory_service.core.tokens import half_tokens, json_text, json_tokens

MARKER = " …[truncated: {shown} of {total} characters shown; call memory_get for the full text]"
_MARKER_ROOM = len(MARKER) + 16
_SHORTEST_CUT = _MARKER_ROOM * 2  # strings up to this long are never cut


def fit_to_budget(payload: dict[str, Any], max_tokens: int, reserve: int = 0) -> tuple[dict[str, Any], bool]:
    """Return (payload, truncated): the payload whose JSON text is estimated at most ``max_tokens``
    less ``reserve`` tokens (room for what an envelope wraps around it). Strings are cut
    longest-first, then lists shortened, until it fits."""
    cap, max_tokens = max_tokens, max_tokens - reserve
    if json_tokens(payload) <= max_tokens:
        return payload, False
    payload["truncated"] = True
    payload["truncation_note"] = (
        f"Response exceeded the {cap}-token cap (estimated); long text fields were shortened. "
        "Ask for fewer results (limit) or fetch single memories with memory_get."
    )
    leaves: list[tuple[Any, Any, str]] = []
    _collect(payload, leaves)
    if leaves:
        _cut_strings(payload, leaves, max_tokens)
    _shorten_lists(payload, max_tokens)
    return payload, True


def _collect(node: Any, out: list[tuple[Any, Any, str]]) -> None:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if isinstance(value, str):
            if len(value) > _SHORTEST_CUT:
                out.append((node, key, value))
        else:
            _collect(value, out)


def _cut(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    shown = max(cap - _MARKER_ROOM, 0)
    return text[:shown] + MARKER.format(shown=shown, total=len(text))


def _cut_strings(payload: dict[str, Any], leaves: list[tuple[Any, Any, str]], max_tokens: int) -> None:
    """Cut every leaf longer than the largest common cap (in characters) at which the estimate
    fits. A string's tokens add up with the rest of the JSON text (its quotes separate it), so
    each candidate cap costs an estimate of the cut strings only."""
    costs = [half_tokens(json_text(text)) for _, _, text in leaves]
    rest = half_tokens(json_text(payload)) - sum(costs)

    def tokens_at(cap: int) -> int:
        cut = (
            half_tokens(json_text(_cut(text, cap))) if len(text) > cap else cost
            for (_, _, text), cost in zip(leaves, costs, strict=True)
        )
        return (rest + sum(cut) + 1) // 2

    lo, hi = _SHORTEST_CUT, max(len(text) for _, _, text in leaves)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tokens_at(mid) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    for container, key, text in leaves:
        container[key] = _cut(text, lo)


def _shorten_lists(payload: dict[str, Any], max_tokens: int) -> None:
    """Keep as many leading items of the longest list as fit (result lists are ranked), then of
    the next longest, until the estimate fits or every list has one item."""
    while json_tokens(payload) > max_tokens:
        longest = _longest_list(payload)
        if longest is None:
            return
        items = list(longest)
        lo, hi = 1, len(items) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            longest[:] = items[:mid]
            if json_tokens(payload) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        longest[:] = items[:lo]


def _longest_list(node: dict[str, Any]) -> list[Any] | None:
    """The longest list of two or more items anywhere in ``node``."""
    longest: list[Any] | None = None
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        for value in current.values() if isinstance(current, dict) else current:
            if isinstance(value, list):
                if len(value) > 1 and (longest is None or len(value) > len(longest)):
                    longest = value
                stack.append(value)
            elif isinstance(value, dict):
                stack.append(value)
    return longest


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
