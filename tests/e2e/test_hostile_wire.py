"""Lines no JSON-RPC client should send, through a real session (issue 30, item 14): each gets an
answer (a JSON-RPC error carrying the seed-001 envelope) and the session goes on.

Real processes: ``python -m memory_service`` relays to the daemon it starts. The relay notes each
request before forwarding it and the daemon's MCP session parses it: neither may die on a line or
leave it unanswered (a request left unanswered hangs its client). Raw bytes, since an SDK client
cannot send invalid UTF-8 or a lone surrogate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NOT_APPLICABLE, PROFILE, daemon_gone, server_env
from tests.e2e.raw_stdio import RawSession

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} the wire only"),
]


def _call(request_id: int, tool: str, args: str) -> bytes:
    """A tools/call line with ``args`` as written (raw JSON text)."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{args}}}}}'
    ).encode()


def _deep(request_id: int, depth: int) -> bytes:
    """A memory_add whose metadata nests ``depth`` arrays (2 KB at depth 1,000)."""
    nested = "[" * depth + "]" * depth
    return _call(request_id, "memory_add", f'{{"type":"design","content":"x","metadata":{{"a":{nested}}}}}')


HOSTILE: list[tuple[str, Any, bytes]] = [
    ("an id and no method", 1, b'{"jsonrpc":"2.0","id":1}'),
    ("invalid UTF-8", 2, _call(2, "memory_search", '{"query":"cache ~~ miss"}').replace(b"~~", b"\xff\xfe")),
    ("a lone surrogate in a query", 3, _call(3, "memory_search", '{"query":"cache \\ud800 miss"}')),
    ("a lone surrogate in content", 4, _call(4, "memory_add", '{"type":"design","content":"x \\ud800"}')),
    (
        "a lone surrogate in a metadata key",
        5,
        _call(5, "memory_add", '{"type":"design","content":"x","metadata":{"k\\ud800":1}}'),
    ),
    ("a 5,000-digit integer", 6, _call(6, "memory_search", '{"query":"x","limit":' + "9" * 5000 + "}")),
    (
        "a string id, invalid UTF-8 after it",
        "s-7",
        b'{"jsonrpc":"2.0","id":"s-7","method":"ping","params":"\xff"}',
    ),
]
DEPTHS = [150, 190, 200, 201, 300, 500, 980, 1000, 5000]


def _refused(answer: dict[str, Any]) -> dict[str, Any]:
    """The error of an answer: a JSON-RPC error with the envelope in ``data``, or a tool's
    error envelope."""
    if "error" in answer:
        error = answer["error"]
        assert error["code"] in (-32700, -32600) and error["message"], answer
        envelope: dict[str, Any] = error["data"]
    else:
        result = answer["result"]
        assert result.get("isError"), answer
        envelope = json.loads(result["content"][0]["text"])["error"]
    assert {"code", "message", "details", "suggestion"} <= set(envelope) and envelope["suggestion"], answer
    return envelope


@pytest.mark.parametrize("args", [(), ("--no-daemon",)], ids=["relay", "no-daemon"])
def test_every_hostile_line_is_answered_and_the_session_goes_on(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Through the relay and its daemon, and through a --no-daemon server on its own stdio."""
    session = RawSession(server_env(tmp_path / "data", model=None), tmp_path / "stderr.log", args)
    try:
        session.initialize()
        for n, (what, request_id, line) in enumerate(HOSTILE):
            session.send(line)
            envelope = _refused(session.answer(request_id))
            assert envelope["code"] == "VAL_MALFORMED_MESSAGE", (what, envelope)
            assert "\\ud800" not in str(envelope) and "9999" not in str(envelope), (what, envelope)
            found = session.call(100 + n, "memory_search", {"query": "cache"})  # the session goes on
            assert found["results"] == [], (what, found)
        for depth in DEPTHS:
            session.send(_deep(depth, depth))
            code = _refused(session.answer(depth))["code"]
            # Past the MCP SDK parser's ~200 levels the message is refused whole; short of it, the
            # tool refuses the metadata (at most 6 levels).
            assert code == ("VAL_MALFORMED_MESSAGE" if depth >= 200 else "VAL_METADATA_TOO_DEEP"), depth
            session.call(10_000 + depth, "memory_search", {"query": "cache"})
        # The session's process (the relay, or the server itself) answered everything and exits cleanly.
        assert session.proc.poll() is None
    finally:
        code = session.close()
    assert code == 0, (tmp_path / "stderr.log").read_text()[-2000:]
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()
    daemon_gone(tmp_path / "data")
