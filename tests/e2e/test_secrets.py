"""Planted secrets never reach a store, a log or a response (issue 14).

The corpus (tests/data/secrets_corpus.py: 106 planted secrets of 22 kinds, 89 look-alikes) goes
in through every way text enters: memory content, titles, metadata values and keys, an update,
feedback and supersede rationales, a search query, a malformed id. Everything the server answers
is checked, then every byte the data directory holds (vectors, graph, SQLite with the audit, the
cache and the queue, the daemon's log) and an export file. Look-alikes come back unchanged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from tests.conftest import REPO, daemon_gone, require_model, server_env
from tests.data.secrets_corpus import LOOKALIKES, SECRETS

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


class Recorder:
    """Calls tools and keeps every text the server answered."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.seen: list[str] = []

    async def call(self, tool: str, args: dict[str, Any], *, ok: bool = True) -> dict[str, Any]:
        result: CallToolResult = await self.client.call_tool(tool, args)
        text = result.content[0].text  # type: ignore[union-attr]
        self.seen.append(text)
        if result.structured_content is not None:
            self.seen.append(json.dumps(result.structured_content, ensure_ascii=False))
        assert result.is_error is not ok, text
        return dict(json.loads(text))


def _session(env: dict[str, str]) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO)
    )
    return Client(params)


async def test_planted_secrets_reach_no_store_log_or_response(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = server_env(data, model=require_model())
    env["MEMORY_SERVER__LOG_LEVEL"] = "DEBUG"
    export = data / "export.jsonl"
    planted = SECRETS
    async with _session(env) as client:
        rec = Recorder(client)
        items = [{"type": "session", "content": p.text} for p in planted[:60]]
        items += [
            {
                "type": "design",
                "content": f"Note {i} about configuration.",
                "metadata": {"title": p.text[:180], "detail": {"raw": p.text}, p.text: "a key"},
            }
            for i, p in enumerate(planted[60:])
        ]
        ids = []
        for start in range(0, len(items), 100):  # a bulk add takes at most 100
            bulk = await rec.call("memory_bulk_add", {"memories": items[start : start + 100]})
            assert bulk["created"] == len(items[start : start + 100]), bulk["errors"][:3]
            ids += bulk["memory_ids"]
        lookalike_ids = (
            await rec.call(
                "memory_bulk_add", {"memories": [{"type": "session", "content": t} for t in LOOKALIKES]}
            )
        )["memory_ids"]

        single = await rec.call("memory_add", {"type": "session", "content": planted[0].text})
        assert single["status"] == "skipped_dedupe"  # the same text, masked the same way
        assert single["secrets_redacted"] and "[REDACTED:" in single["redacted_preview"]
        await rec.call("memory_update", {"memory_id": ids[1], "content": planted[2].text + " (updated)"})
        problem = await rec.call("memory_add", {"type": "problem", "content": "Deploys fail with 401."})
        await rec.call(
            "memory_feedback",
            {
                "memory_id": ids[3],
                "problem_id": problem["memory_id"],
                "vote": 1,
                "rationale": planted[4].text,
            },
        )
        fact = await rec.call("memory_add", {"type": "fact", "content": "The deploy token lives in Vault."})
        await rec.call(
            "memory_supersede",
            {
                "old_fact_id": fact["memory_id"],
                "new_fact": {"content": "The deploy token lives in the CI secret store."},
                "change": {"content": "Moved the deploy token."},
                "rationale": planted[5].text,
            },
        )
        for p in planted[:: len(planted) // 12][:12]:  # a dozen, spread over the kinds
            await rec.call("memory_search", {"query": p.text[:300], "mode": "fast", "scope": {"branch": "*"}})
            await rec.call("memory_search", {"query": p.text[:300], "limit": 3})
        await rec.call("memory_get", {"memory_id": planted[6].text}, ok=False)  # an error quotes it
        for memory_id in ids[:20]:
            await rec.call("memory_get", {"memory_id": memory_id, "include_relationships": True})
        await rec.call("memory_audit", {"limit": 500})
        await rec.call("graph_query", {"cypher": "MATCH (m:Memory) RETURN m.name AS name LIMIT 500"})
        await rec.call("export_memory", {"output_path": str(export)})

        for memory_id, text in zip(lookalike_ids, LOOKALIKES, strict=True):
            got = await rec.call("memory_get", {"memory_id": memory_id})
            assert got["memory"]["content"] == " ".join(text.split()) or got["memory"]["content"] == text

    daemon_gone(data)
    answered = "\n".join(rec.seen)
    files = [f for f in data.rglob("*") if f.is_file()]
    assert export in files and any(f.name == "daemon.log" for f in files)
    blobs = {f: f.read_bytes() for f in files}
    leaks = []
    for p in planted:
        needle = p.secret.encode()
        if p.secret in answered:
            leaks.append((p.kind, "response"))
        leaks += [(p.kind, _where(f, p.secret)) for f, blob in blobs.items() if needle in blob]
    assert not leaks, leaks
    assert "[REDACTED:" in answered and "[REDACTED:" in export.read_text()


def _where(path: Path, secret: str) -> str:
    """The file, and for a SQLite file the table holding the secret (a failure's first clue)."""
    if not path.name.endswith(".sqlite3"):
        return path.name
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                if any(secret in str(v) for v in row):
                    return f"{path.name}:{table}"
    finally:
        conn.close()
    return f"{path.name} (free pages or the WAL)"
