"""Tool profiles (issue 15): which contract a server speaks, chosen by setting, flag or session.

Through real MCP clients: the in-memory Python client for the surfaces, and stdio sessions in
front of one daemon for profiles chosen per session (each forwarder names its own).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from memory_service.core.errors import ValidationError
from memory_service.server import build_server
from memory_service.settings import PROFILE_NAMES, ServerSettings, Settings
from memory_service.tools import ALL_TOOLS
from memory_service.tools.profiles import PROFILES, tools_for
from tests.conftest import NOT_APPLICABLE, PROFILE, REPO, require_model, server_env
from tests.e2e.conftest import make_settings, payload

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SEED_NAMES = {
    "cortex-find-store": {"memory.find", "memory.store"},
    "memory-interface-v1": {"memory.read", "memory.write", "memory.update"},
    "cortex-os": {"memory_store", "memory_retrieve", "memory_update", "memory_delete", "memory_stats"},
}
SEED_NAMES_002_004 = SEED_NAMES["cortex-find-store"] | SEED_NAMES["memory-interface-v1"]
# Claude Code and Claude Desktop accept only these characters in a tool name.
LEGAL = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _settings(root: Path, profile: str, tool_names: str = "legal") -> Settings:
    settings = make_settings(root, require_model())
    settings.server = ServerSettings(http_port=0, profile=profile, tool_names=tool_names)  # type: ignore[arg-type]
    return settings


async def _names(settings: Settings) -> set[str]:
    async with Client(build_server(settings)) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def test_every_profile_has_its_seed_tools() -> None:
    assert tuple(PROFILES) == PROFILE_NAMES  # what settings accept is what is served
    assert [spec.name for spec in tools_for("default").tools] == [spec.name for spec in ALL_TOOLS]
    for profile, names in SEED_NAMES.items():
        served = {spec.name for spec in tools_for(profile, "seed").tools}
        assert served == names, profile
        legal = {spec.name for spec in tools_for(profile).tools}
        assert all(set(name) <= LEGAL for name in legal), legal
        assert {name.replace(".", "-") for name in names} == legal


def test_clashing_profiles_are_refused_with_the_reason() -> None:
    with pytest.raises(ValidationError) as caught:
        tools_for("default,cortex-os")
    assert caught.value.code == "CFG_PROFILE"
    assert "memory_update (default and cortex-os)" in caught.value.message
    assert {spec.name for spec in tools_for("default,cortex-find-store").tools} >= {
        "memory_add",
        "memory-find",
    }


def test_an_unknown_profile_is_a_settings_error() -> None:
    with pytest.raises(ValueError, match="unknown tool profile 'bogus'"):
        ServerSettings(profile="default,bogus")
    assert ServerSettings(profile=" cortex-os , cortex-os").profile == "cortex-os"


async def test_profiles_list_their_tools_and_answer_either_spelling(tmp_path: Path) -> None:
    assert await _names(_settings(tmp_path / "a", "default")) == {spec.name for spec in ALL_TOOLS}
    legal = _settings(tmp_path / "b", "cortex-find-store,memory-interface-v1")
    assert await _names(legal) == {
        "memory-find",
        "memory-store",
        "memory-read",
        "memory-write",
        "memory-update",
    }
    seed = _settings(tmp_path / "c", "cortex-find-store", "seed")
    async with Client(build_server(seed)) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"memory.find", "memory.store"}
        # A client written for the other spelling is answered all the same.
        for name in ("memory.find", "memory-find"):
            result = await client.call_tool(name, {"query": "anything stored yet"})
            assert not result.is_error, payload(result)
        unknown = payload(await client.call_tool("memory_search", {"query": "x"}))
        assert "memory.find" in unknown["error"]["suggestion"]


async def test_the_initialize_instructions_name_only_served_tools(tmp_path: Path) -> None:
    async with Client(build_server(_settings(tmp_path / "a", "default"))) as client:
        assert "memory_search" in (client.instructions or "")
    async with Client(build_server(_settings(tmp_path / "b", "cortex-os"))) as client:
        text = client.instructions or ""
        assert "memory_retrieve" in text and "memory_search" not in text and "cortex-os" in text


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_service", *args],
        env=env,
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.skipif(PROFILE == "server", reason=f"{NOT_APPLICABLE} command-line parsing only")
def test_the_flag_refuses_bad_profiles_in_one_line(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=require_model())
    bad = _cli("--profile", "bogus", env=env)
    assert bad.returncode == 2 and "unknown tool profile 'bogus'" in bad.stderr, bad.stderr
    clash = _cli("--no-daemon", "--profile", "default,cortex-os", env=env)
    assert clash.returncode == 1 and "memory_update (default and cortex-os)" in clash.stderr, clash.stderr
    assert "Traceback" not in bad.stderr + clash.stderr


def _session(env: dict[str, str], *args: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service", *args], env=env, cwd=str(REPO)
    )
    return Client(params)


async def _tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def test_sessions_of_different_profiles_share_one_daemon(tmp_path: Path) -> None:
    env = server_env(tmp_path / "data", model=require_model())
    env["MEMORY_PROJECT"] = "profiles"
    env["MEMORY_BRANCH"] = "main"
    async with (
        _session({**env, "MEMORY_SERVER__PROFILE": "cortex-find-store"}) as store,
        _session(env, "--profile", "cortex-os") as cortex,
        _session(env) as default,
    ):
        assert await _tool_names(store) == {"memory-find", "memory-store"}
        assert await _tool_names(cortex) == SEED_NAMES["cortex-os"]
        assert len(await _tool_names(default)) == len(ALL_TOOLS)
        added = await default.call_tool(
            "memory_add",
            {"type": "design", "content": "Profiles share one store: the ledger uses double entry."},
        )
        assert not added.is_error, payload(added)
        found = await cortex.call_tool("memory_retrieve", {"query": "ledger double entry"})
        data: dict[str, Any] = payload(found)
        assert not found.is_error, data
        ids = [r["id"] for r in data["data"]["results"]]
        assert payload(added)["memory_id"] in ids


# ------------------------------------------------------------------ one store, four contracts

UNION = "default,cortex-find-store,memory-interface-v1"  # cortex-os clashes with default: served apart


async def _ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    data = payload(result)
    assert not result.is_error, data
    return data


async def _store_through_each(root: Path) -> dict[str, str]:
    """One memory through each profile; its id by the profile that stored it."""
    ids: dict[str, str] = {}
    async with Client(build_server(_settings(root, UNION))) as client:
        ids["default"] = (
            await _ok(
                client,
                "memory_add",
                {
                    "type": "design",
                    "content": "Invoices are numbered per tenant, gapless, by a Postgres sequence.",
                },
            )
        )["memory_id"]
        stored = await _ok(
            client,
            "memory-store",
            {
                "items": [
                    {
                        "kind": "runbook",
                        "scope": {},
                        "data": {
                            "service": "mailer",
                            "steps": ["drain the SMTP queue", "rotate the relay password"],
                        },
                    }
                ]
            },
        )
        ids["cortex-find-store"] = stored["stored"][0]["id"]
        written = await _ok(
            client,
            "memory-write",
            {
                "op": "write",
                "repo_id": "test",
                "memory": {
                    "text": "The image thumbnailer leaks file handles under load",
                    "scope": "repo",
                    "kind": "problem",
                    "confidence": 0.9,
                },
            },
        )
        ids["memory-interface-v1"] = written["memory_id"]
    async with Client(build_server(_settings(root, "cortex-os"))) as client:
        kept = await _ok(
            client,
            "memory_store",
            {
                "kind": "meeting-notes",
                "text": "Retro: the nightly backup window moves to 02:00 UTC",
                "tags": ["ops"],
            },
        )
        ids["cortex-os"] = kept["data"]["id"]
    return ids


QUERIES = {
    "default": "how are invoice numbers assigned per tenant",
    "cortex-find-store": "mailer runbook SMTP relay password",
    "memory-interface-v1": "thumbnailer file handle leak",
    "cortex-os": "nightly backup window retro",
}


async def _found_by_each(root: Path, query: str) -> dict[str, list[str]]:
    """The ids each profile's search tool returns for a query."""
    found: dict[str, list[str]] = {}
    async with Client(build_server(_settings(root, UNION))) as client:
        search = await _ok(client, "memory_search", {"query": query})
        found["default"] = [r["memory_id"] for r in search["results"]]
        hits = await _ok(client, "memory-find", {"query": query})
        found["cortex-find-store"] = [h["id"] for h in hits["hits"]]
        read = await _ok(
            client, "memory-read", {"op": "read", "repo_id": "test", "mode": "targeted", "query": query}
        )
        found["memory-interface-v1"] = [r["memory_id"] for r in read["results"]]
    async with Client(build_server(_settings(root, "cortex-os"))) as client:
        retrieved = await _ok(client, "memory_retrieve", {"query": query})
        found["cortex-os"] = [r["id"] for r in retrieved["data"]["results"]]
    return found


async def test_a_memory_stored_through_one_profile_is_found_through_every_other(tmp_path: Path) -> None:
    ids = await _store_through_each(tmp_path)
    missing = []
    for writer, memory_id in ids.items():
        found = await _found_by_each(tmp_path, QUERIES[writer])
        missing += [f"{writer} -> {reader}" for reader, hits in found.items() if memory_id not in hits[:3]]
    assert not missing, f"not in the top 3: {missing}"


# --------------------------------------------------------------------------- one rule per kind

RECORD_TEXTS = {
    "problem": "The PDF exporter drops the last page of long invoices",
    "solution": "Flush the PDF writer before closing the invoice stream",
    "failed_tactic": "Raising the PDF page buffer did not keep the last page",
    "fact": "The PDF exporter writes through reportlab 4",
    "change": "Moved the PDF exporter onto the streaming writer",
    "preference": "Keep generated invoice PDFs under 2 MB",
}


async def _write_records(client: Client) -> dict[str, str]:
    """One seed-002 record of each kind, through memory-write."""
    ids: dict[str, str] = {}
    for kind, text in RECORD_TEXTS.items():
        memory: dict[str, Any] = {"text": text, "scope": "repo", "kind": kind, "confidence": 0.8}
        if kind in ("solution", "failed_tactic"):
            memory["links"] = {"problem_id": ids["problem"]}
        if kind == "change":
            memory["evidence_refs"] = ["commit:9a1b2c3"]
        written = await _ok(client, "memory-write", {"op": "write", "repo_id": "test", "memory": memory})
        ids[kind] = written["memory_id"]
    return ids


async def test_a_seed_002_record_is_immutable_through_every_profile(tmp_path: Path) -> None:
    """Written through memory-write, a record of any of the six kinds keeps its text, its
    write-time fields and its existence whichever profile's update or delete touches it; its tags
    may change, and archiving (seed 002's lifecycle) still works."""
    root = tmp_path / "kinds"
    async with Client(build_server(_settings(root, UNION))) as client:
        ids = await _write_records(client)
        for kind, memory_id in ids.items():
            rewrite = await client.call_tool(
                "memory_update", {"memory_id": memory_id, "content": "Rewritten."}
            )
            assert rewrite.is_error, kind
            assert payload(rewrite)["error"]["code"] == "VAL_IMMUTABLE_CONTENT", (kind, payload(rewrite))
            relinked = await client.call_tool(
                "memory_update", {"memory_id": memory_id, "metadata": {"confidence": 0.1}}
            )
            error = payload(relinked)["error"]
            assert relinked.is_error and error["code"] == "VAL_IMMUTABLE_FIELD", (kind, error)
            assert error["details"]["field"] == "metadata.confidence"
            deleted = await client.call_tool("memory_delete", {"memory_id": memory_id})
            error = payload(deleted)["error"]
            assert deleted.is_error and error["code"] == "VAL_IMMUTABLE_RECORD", (kind, error)
            assert "archived" in error["suggestion"], error
            tagged = await _ok(
                client, "memory_update", {"memory_id": memory_id, "metadata": {"tags": ["pdf"]}}
            )
            assert tagged["updated_fields"] == ["metadata.tags"], kind
    async with Client(build_server(_settings(root, "cortex-os"))) as client:
        for kind, memory_id in ids.items():
            for args in ({"text": "Rewritten by seed 003."}, {"metadata": {"owner": "ops"}}):
                result = await client.call_tool("memory_update", {"id": memory_id, **args})
                body = payload(result)
                assert result.is_error and body["error"]["code"] == "validation_error", (kind, args, body)
            result = await client.call_tool("memory_delete", {"id": memory_id})
            body = payload(result)
            assert result.is_error and body["error"]["code"] == "validation_error", (kind, body)
    async with Client(build_server(_settings(root, UNION))) as client:
        for kind, memory_id in ids.items():
            got = (await _ok(client, "memory_get", {"memory_id": memory_id}))["memory"]
            assert got["status"] == "active" and got["content"] == RECORD_TEXTS[kind], kind
            assert got["metadata"]["confidence"] == 0.8 and got["metadata"]["tags"] == ["pdf"], kind
            audit = await _ok(client, "memory_audit", {"memory_id": memory_id, "limit": 20})
            assert sorted(e["operation"] for e in audit["events"]) == ["create", "update"], kind
        archived = await _ok(
            client,
            "memory-update",
            {
                "op": "update",
                "repo_id": "test",
                "memory_id": ids["solution"],
                "mode": "commit",
                "update": {"type": "archive_state", "archived": True},
            },
        )
        assert archived["status"] == "committed"
