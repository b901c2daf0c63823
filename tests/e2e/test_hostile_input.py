"""Hostile input (issue 8): no call freezes the server, no error or log line repeats input whole.

Every string of every tool's input has a documented bound, patterns on caller text are linear,
and errors, logs and audit records repeat at most a prefix and the length of what was sent.
"""

from __future__ import annotations

import base64
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO, daemon_gone, require_model, server_env
from tests.e2e.conftest import call_error, call_ok, payload

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HUGE = 1_000_000
ENVELOPE_LIMIT = 4096  # "a few KB", whatever the input
_rng = random.Random(8)


def _text(kind: str, n: int) -> str:
    """Adversarial text of ``n`` characters: long runs, pasted base64, minified code."""
    if kind == "run":
        return "A" * n
    if kind == "base64":
        return base64.b64encode(_rng.randbytes(n))[:n].decode()
    if kind == "minified":
        line = "var a=function(b){return b.c(d)||e.f[g]};if(h){i.j(k,'l/m.py')}"
        return (line * (n // len(line) + 1))[:n]
    if kind == "pathish":
        return ("a-b.c/" * (n // 6 + 1))[:n]
    raise ValueError(kind)


def _string_fields(schema: dict[str, Any], prefix: str = "") -> list[str]:
    """Top-level string properties of an input schema (nested ones are covered by their tools)."""
    out = []
    for name, prop in schema.get("properties", {}).items():
        if prop.get("type") == "string":
            out.append(prefix + name)
    return out


async def test_every_string_field_refuses_a_megabyte_with_a_small_envelope(client: Client) -> None:
    tools = (await client.list_tools()).tools
    checked = 0
    for tool in tools:
        for field in _string_fields(tool.input_schema):
            args: dict[str, Any] = {field: "Z" * HUGE}
            result = await client.call_tool(tool.name, args)
            text = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error, (tool.name, field)
            assert len(text) < ENVELOPE_LIMIT, (tool.name, field, len(text))
            error = payload(result)["error"]
            assert error["code"].startswith("VAL_") and error["suggestion"], (tool.name, field, error)
            checked += 1
    assert checked >= 15


async def test_oversized_values_are_named_not_echoed(client: Client) -> None:
    err = await call_error(client, "memory_search", {"query": "A" * HUGE})
    assert err["code"] == "VAL_TOO_LONG" and err["details"]["max_length"] == 10_000
    bad_type = await call_error(client, "memory_add", {"type": "q" * 5 * HUGE, "content": "x"})
    assert bad_type["code"] == "VAL_INVALID_TYPE"
    assert len(json.dumps(bad_type)) < ENVELOPE_LIMIT
    assert "5000000 characters" in json.dumps(bad_type)  # the length is said, the value is not
    bad_mode = await call_error(client, "memory_search", {"query": "x", "mode": "m" * HUGE})
    assert bad_mode["code"] == "VAL_INVALID_ENUM" and len(json.dumps(bad_mode)) < ENVELOPE_LIMIT
    many = await call_error(
        client, "memory_bulk_add", {"memories": [{"type": "nope" * 1000, "content": "x"}] * 101}
    )
    assert many["code"] == "VAL_TOO_MANY_ITEMS" and len(json.dumps(many)) < ENVELOPE_LIMIT
    nested = await call_error(
        client, "memory_add", {"type": "design", "content": "x", "metadata": {"k": "v" * HUGE}}
    )
    assert nested["code"].startswith("VAL_METADATA") and len(json.dumps(nested)) < ENVELOPE_LIMIT


async def test_whitespace_only_text_is_refused_like_empty(client: Client) -> None:
    for args in ({"type": "design", "content": " \n\t "},):
        err = await call_error(client, "memory_add", args)
        assert err["code"] == "VAL_EMPTY" and err["details"]["field"] == "content"
    added = await call_ok(client, "memory_add", {"type": "design", "content": "Hostile-input anchor."})
    err = await call_error(client, "memory_update", {"memory_id": added["memory_id"], "content": "   "})
    assert err["code"] == "VAL_EMPTY"
    bulk = await call_ok(
        client, "memory_bulk_add", {"memories": [{"type": "design", "content": "\n\n"}, {"type": "design"}]}
    )
    assert bulk["created"] == 0 and [e["code"] for e in bulk["errors"]] == ["VAL_EMPTY", "VAL_MISSING_FIELD"]


async def _latency_while(client: Client, hostile: list[tuple[str, dict[str, Any]]], probe_id: str) -> float:
    """The slowest of repeated cheap calls made while the hostile calls run."""
    worst = 0.0
    done = anyio.Event()

    async def run_hostile() -> None:
        async with anyio.create_task_group() as tg:
            for tool, args in hostile:
                tg.start_soon(client.call_tool, tool, args)
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_hostile)
        await anyio.sleep(0.05)  # let the hostile calls start
        while not done.is_set():
            started = time.perf_counter()
            await call_ok(client, "memory_get", {"memory_id": probe_id})
            worst = max(worst, time.perf_counter() - started)
            await anyio.sleep(0.02)
    return worst


@pytest.mark.parametrize("kind", ["run", "base64", "minified", "pathish"])
async def test_a_concurrent_call_is_not_held_up(client: Client, kind: str) -> None:
    probe = await call_ok(client, "memory_add", {"type": "design", "content": f"Probe memory for {kind}."})
    query, content = _text(kind, 10_000), _text(kind, 100_000)
    hostile = [
        ("memory_search", {"query": query}),
        ("memory_search", {"query": query, "mode": "deep"}),
        ("memory_search", {"query": "A" * HUGE}),
        ("memory_add", {"type": "code_pattern", "content": content}),
        ("memory_explain", {"query": query}),
        ("code_search", {"query": query}),
        ("find_duplicates", {"code": content}),
    ]
    worst = await _latency_while(client, hostile, probe["memory_id"])
    # A call stuck behind hostile input (a quadratic pattern on 100 KB) waits tens of seconds; a
    # probe normally answers in milliseconds. 3 s leaves room for a loaded 2-core machine.
    assert worst < 3.0, f"a memory_get waited {worst:.2f} s behind {kind} input"


async def test_stderr_lines_stay_small_whatever_the_input(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    env = server_env(tmp_path / "data", model=require_model())
    params = StdioServerParameters(
        command="sh",
        args=["-c", f'exec "{sys.executable}" -m memory_service 2>>"{log}"'],
        env=env,
        cwd=str(REPO),
    )
    async with Client(params) as client:
        await call_error(client, "memory_add", {"type": "t" * 5 * HUGE, "content": "x"})
        await call_error(client, "memory_search", {"query": "x", "mode": "m" * HUGE})
        await call_error(client, "memory_get", {"memory_id": "i" * HUGE})
        await call_error(client, "index_file", {"file_path": "p" * HUGE})
        result = await client.call_tool("no_such_tool_" + "n" * HUGE, {})
        assert result.is_error and len(result.content[0].text) < ENVELOPE_LIMIT  # type: ignore[union-attr]
    daemon_gone(tmp_path / "data")  # the forwarder's stderr, then the daemon's own log
    lines = log.read_text(errors="replace").splitlines()
    lines += (tmp_path / "data" / "daemon.log").read_text(errors="replace").splitlines()
    assert lines, "the server logged nothing at all"
    assert max(len(line) for line in lines) < ENVELOPE_LIMIT
    assert not any("╭" in line or "│" in line for line in lines), "rich panels in the log"
    strays = [line[:200] for line in lines if not line[:4].isdigit()]
    assert not strays, strays  # one record per line, time first
