"""Every tool through the official TypeScript MCP SDK client (what Claude Code and the MCP Inspector use).

That client checks each result's ``structuredContent`` against the tool's ``outputSchema``, error
results included, and rejects the call when they disagree; the Python SDK client does not. So the
server is started by ``tests/e2e/ts/call_every_tool.mjs`` (``@modelcontextprotocol/sdk``'s
``StdioClientTransport``), which makes a valid call and bad inputs for every listed tool, plus a call
with non-object arguments and one to an unknown tool, and prints one JSON line per call.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_model, server_env

pytestmark = [pytest.mark.e2e]

TS_DIR = Path(__file__).resolve().parent / "ts"
SCRIPT = TS_DIR / "call_every_tool.mjs"
SOURCE = "shop/billing.py"
BILLING = '''\
"""Billing helpers."""


def add_sales_tax(amount, rate):
    """Add sales tax to a net amount."""
    return round(amount * (1 + rate), 2)


class Invoice:
    """An invoice of priced line items."""

    def total(self, items):
        return sum(item.price * item.qty for item in items)
'''


def _require_ts_client() -> str:
    """The node executable, once the SDK is installed; in CI a missing client fails the test."""
    node = shutil.which("node")
    if node is None:
        message = "node not found: install Node.js 20 or later, then run `make install`"
    elif not (TS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        message = "the TypeScript MCP client is not installed (tests/e2e/ts/node_modules): run `make install`"
    else:
        return node
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def run_ts_script(
    script: Path, argument: str, cwd: Path, env: dict[str, str]
) -> tuple[list[str], list[dict[str, Any]]]:
    """Run a client script (``node SCRIPT ARGUMENT -- memory-service``) against a fresh stdio
    server; the tools it listed (its first line) and one record per call (the other lines)."""
    node = _require_ts_client()
    server = Path(sys.executable).with_name("memory-service")
    proc = subprocess.run(
        [node, str(script), argument, "--", str(server)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{script.name} exited {proc.returncode}:\n{proc.stderr[-4000:]}"
    header, *calls = (json.loads(line) for line in proc.stdout.splitlines() if line.strip())
    return header["tools"], calls


def _run_client(tmp_path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """Run the script against a fresh server; the tools it listed and one record per call."""
    (tmp_path / SOURCE).parent.mkdir(parents=True)
    (tmp_path / SOURCE).write_text(BILLING)
    env = server_env(tmp_path / "data", model=require_model())
    env["MEMORY_PROJECT_ROOT"] = str(tmp_path)
    return run_ts_script(SCRIPT, SOURCE, tmp_path, env)


def _problems(call: dict[str, Any], tools: list[str]) -> list[str]:
    """What is wrong with one call's record, as readable lines (empty when it is right)."""
    where = f"{call['tool']} / {call['case']}"
    if "notRun" in call:
        return [f"{where}: not run ({call['notRun']})"]
    if call["threw"]:
        return [f"{where}: the TypeScript client threw: {call['thrown']}"]
    if call["expect"] == "ok":
        return [] if call["isError"] is False else [f"{where}: isError {call['isError']}, expected false"]
    problems = []
    if call["isError"] is not True:
        problems.append(f"{where}: isError {call['isError']}, expected true")
    if call["code"] != call["expectCode"]:
        detail = f" ({call['textError']})" if "textError" in call else ""
        problems.append(f"{where}: envelope code {call['code']!r}, expected {call['expectCode']!r}{detail}")
    if not call.get("suggestion"):
        problems.append(f"{where}: the envelope has no suggestion")
    elif call["expectCode"] == "NF_TOOL":
        missing = [name for name in tools if name not in call["suggestion"]]
        if missing:
            problems.append(f"{where}: the suggestion does not list {missing}: {call['suggestion']!r}")
    return problems


def test_every_tool_result_is_accepted_by_the_typescript_sdk_client(tmp_path: Path) -> None:
    tools, calls = _run_client(tmp_path)

    assert len(tools) >= 15, tools
    for tool in tools:
        cases = {c["expect"] for c in calls if c["tool"] == tool}
        assert cases == {"ok", "error"}, f"{tool}: needs a valid call and a bad input, has {cases}"
    made = {(c["tool"], c["expectCode"]) for c in calls}
    assert made >= {("no_such_tool", "NF_TOOL"), ("memory_search", "VAL_INVALID_ARGUMENTS")}

    problems = [line for call in calls for line in _problems(call, tools)]
    assert not problems, f"{len(problems)} of {len(calls)} calls went wrong:\n" + "\n".join(problems)
