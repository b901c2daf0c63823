"""The compatibility profiles through the official TypeScript MCP SDK client (issue 15).

That client parses every listed tool (names with a dot included) and checks each result's
``structuredContent`` against the tool's ``outputSchema``, error results too, throwing when they
disagree. ``tests/e2e/ts/call_cases.mjs`` starts the server over stdio, makes the calls given
here (each seed's own example requests, and bad inputs) and prints what came back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_model, server_env
from tests.e2e.test_typescript_client import TS_DIR, run_ts_script

pytestmark = [pytest.mark.e2e]

SCRIPT = TS_DIR / "call_cases.mjs"

# Seed 004 and seed 002 under their own dotted names (MEMORY_SERVER__TOOL_NAMES=seed).
FIND_STORE_AND_INTERFACE: list[dict[str, Any]] = [
    {
        "tool": "memory.store",
        "args": {
            "items": [
                {
                    "kind": "decision",
                    "scope": {"project": "shop", "branch": "main"},
                    "data": {
                        "component": "auth",
                        "status": "accepted",
                        "title": "Use OAuth2 with PKCE for the mobile app",
                        "rationale": {"why": "no client secret can be kept on a phone"},
                        "alternatives": ["implicit flow", "API keys"],
                    },
                    "tags": ["auth"],
                    "idempotency_key": "adr-auth-1",
                }
            ]
        },
        "save": {"decision": "stored.0.id"},
        "expect": "ok",
    },
    {"tool": "memory.find", "args": {"query": "OAuth2 PKCE mobile"}, "expect": "ok"},
    {
        "tool": "memory.store",
        "args": {"items": [{"kind": "runbook", "scope": {"project": "shop"}, "data": {"service": "api"}}]},
        "expect": "ok",  # a partial failure: the item is reported in errors[]
    },
    {"tool": "memory.find", "args": {"query": "   "}, "expect": "error"},
    {"tool": "memory.find", "args": {"query": "x", "top_k": 0}, "expect": "error"},
    {
        "tool": "memory.write",
        "args": {
            "op": "write",
            "repo_id": "shop",
            "memory": {
                "text": "Checkout times out when the payment provider is slow",
                "scope": "repo",
                "kind": "problem",
                "confidence": 0.9,
            },
        },
        "save": {"problem": "memory_id"},
        "expect": "ok",
    },
    {
        "tool": "memory.write",
        "args": {
            "op": "write",
            "repo_id": "shop",
            "memory": {
                "text": "Raise the provider timeout to 30 s and retry once",
                "scope": "repo",
                "kind": "solution",
                "confidence": 0.8,
                "rationale": "worked in staging",
                "links": {"problem_id": "$problem"},
                "evidence_refs": ["PR-12"],
            },
        },
        "expect": "ok",
    },
    {
        "tool": "memory.read",
        "args": {"op": "read", "repo_id": "shop", "mode": "targeted", "query": "checkout timeout"},
        "expect": "ok",
    },
    {
        "tool": "memory.update",
        "args": {
            "op": "update",
            "repo_id": "shop",
            "memory_id": "$problem",
            "mode": "dry_run",
            "update": {"type": "archive_state", "archived": True},
        },
        "expect": "ok",
    },
    {
        "tool": "memory.write",
        "args": {
            "op": "write",
            "repo_id": "shop",
            "memory": {"text": "A fact", "scope": "repo", "kind": "fact", "confidence": 7},
        },
        "expect": "error",
    },
    {"tool": "memory.read", "args": {"op": "write", "repo_id": "shop", "query": "x"}, "expect": "error"},
    {
        "tool": "memory.update",
        "args": {
            "op": "update",
            "repo_id": "shop",
            "memory_id": "$problem",
            "mode": "commit",
            "update": {"type": "utility_vote", "vote": 3},
        },
        "expect": "error",
    },
]

CORTEX_OS: list[dict[str, Any]] = [
    {
        "tool": "memory_store",
        "args": {
            "kind": "note",
            "text": "Launch checklist: freeze the schema on Monday, announce on Wednesday.",
            "tags": ["project", "summary", "launch"],
            "metadata": {"owner": "release-team", "sprint": 14, "links": {"doc": "launch.md"}},
        },
        "save": {"note": "data.id"},
        "expect": "ok",
    },
    {
        "tool": "memory_retrieve",
        "args": {"query": "notes about launch", "kind": "note", "tags": ["launch"]},
        "expect": "ok",
    },
    {"tool": "memory_update", "args": {"id": "$note", "tags": ["launch"]}, "expect": "ok"},
    {"tool": "memory_stats", "args": {"includeDetails": True}, "expect": "ok"},
    {"tool": "memory_delete", "args": {"id": "$note"}, "expect": "ok"},
    {"tool": "memory_delete", "args": {"id": "$note"}, "expect": "error"},
    {"tool": "memory_store", "args": {"kind": "note", "text": "   "}, "expect": "error"},
    {"tool": "memory_store", "args": {"kind": "no spaces!", "text": "x"}, "expect": "error"},
    {
        "tool": "memory_store",
        "args": {"kind": "note", "text": "x", "metadata": {"__proto__": {"admin": True}}},
        "expect": "error",
    },
    {"tool": "memory_retrieve", "args": {"query": "x", "limit": 0}, "expect": "error"},
    {"tool": "memory_update", "args": {"id": "$note"}, "expect": "error"},
]


def _run(
    tmp_path: Path, cases: list[dict[str, Any]], **env_extra: str
) -> tuple[list[str], list[dict[str, Any]]]:
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps(cases))
    env = server_env(tmp_path / "data", model=require_model())
    env["MEMORY_PROJECT"] = "shop"
    env["MEMORY_BRANCH"] = "main"
    env.update(env_extra)
    return run_ts_script(SCRIPT, str(cases_file), tmp_path, env)


def _problems(cases: list[dict[str, Any]], calls: list[dict[str, Any]]) -> list[str]:
    problems = []
    for case, call in zip(cases, calls, strict=True):
        where = f"#{call['index']} {call['tool']}"
        if "notRun" in call:
            problems.append(f"{where}: not run ({call['notRun']})")
        elif call["threw"]:
            problems.append(f"{where}: the TypeScript client threw: {call['thrown']}")
        elif call["isError"] != (case["expect"] == "error"):
            problems.append(f"{where}: isError {call['isError']}, expected {case['expect']}: {call['text']}")
        elif call["isError"] and call["hasStructuredContent"]:
            problems.append(f"{where}: an error carries structuredContent")
    return problems


def test_seed_004_and_002_under_their_dotted_names(tmp_path: Path) -> None:
    tools, calls = _run(
        tmp_path,
        FIND_STORE_AND_INTERFACE,
        MEMORY_SERVER__PROFILE="cortex-find-store,memory-interface-v1",
        MEMORY_SERVER__TOOL_NAMES="seed",
    )
    assert set(tools) == {"memory.find", "memory.store", "memory.read", "memory.write", "memory.update"}
    problems = _problems(FIND_STORE_AND_INTERFACE, calls)
    assert not problems, "\n".join(problems)
    stored, found = calls[0]["structured"], calls[1]["structured"]
    assert stored["stored"][0]["status"] == "inserted"
    assert stored["stored"][0]["id"] in [hit["id"] for hit in found["hits"]]
    assert calls[2]["structured"]["errors"][0]["error_code"] == "MISSING_FIELDS"
    assert calls[3]["text"]["error_code"] and calls[3]["text"]["human_hint"]


def test_seed_003_envelope(tmp_path: Path) -> None:
    tools, calls = _run(tmp_path, CORTEX_OS, MEMORY_SERVER__PROFILE="cortex-os")
    assert set(tools) == {"memory_store", "memory_retrieve", "memory_update", "memory_delete", "memory_stats"}
    problems = _problems(CORTEX_OS, calls)
    assert not problems, "\n".join(problems)
    for call in calls:
        body = call["text"]
        assert set(body) >= {"success", "correlationId", "timestamp"}, body
        assert body["success"] is (not call["isError"])
        if call["isError"]:
            assert body["error"]["code"] in {
                "validation_error",
                "security_error",
                "not_found",
                "internal_error",
            }
            assert body["error"]["details"], body
    stored_id = calls[0]["text"]["data"]["id"]
    assert stored_id in [r["id"] for r in calls[1]["text"]["data"]["results"]]
    assert calls[5]["text"]["error"]["code"] == "not_found"
    assert calls[8]["text"]["error"]["code"] == "security_error"
    assert calls[3]["text"]["data"]["details"]["storageBackend"]


def test_the_typescript_client_reads_the_seed_names_unaltered(tmp_path: Path) -> None:
    """Default names are the legal spellings; a client using the seed's dotted names still works."""
    cases = [{"tool": "memory.find", "args": {"query": "anything"}, "expect": "ok"}]
    tools, calls = _run(tmp_path, cases, MEMORY_SERVER__PROFILE="cortex-find-store")
    assert set(tools) == {"memory-find", "memory-store"}
    assert not _problems(cases, calls)
