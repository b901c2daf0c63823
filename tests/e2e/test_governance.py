"""Governance through the MCP tools: branch isolation and widening, idempotent stores, immutable
decisions and specs, TTL expiry, input limits, and the audit's actor."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import Implementation

from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, MemorySettings, ServerSettings, Settings
from tests.conftest import profile_settings, require_model
from tests.e2e.conftest import call_error, call_ok

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _settings(root: Path, **extra: Any) -> Settings:
    fields: dict[str, Any] = {
        "data_dir": root / "data",
        "project_root": root,
        "project": "shop",
        "org": "acme",
        "branch": "feature-a",
        "embedding": EmbeddingSettings(model_path=require_model(), load_timeout_seconds=120),
        "server": ServerSettings(http_port=0),
        **profile_settings(root / "data"),
    }
    fields.update(extra)
    return Settings(**fields)


def _client(root: Path, name: str = "governance-test", **extra: Any) -> Client:
    return Client(build_server(_settings(root, **extra)), client_info=Implementation(name=name, version="1"))


async def _add(client: Client, content: str, kind: str = "design", **extra: Any) -> dict[str, Any]:
    return await call_ok(client, "memory_add", {"type": kind, "content": content, **extra})


async def _ids(client: Client, query: str, **extra: Any) -> set[str]:
    found = await call_ok(client, "memory_search", {"query": query, "limit": 50, **extra})
    return {r["memory_id"] for r in found["results"]}


# ------------------------------------------------------------------ scopes


async def test_branches_never_see_each_other_unless_asked(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:
        mine = [
            (await _add(client, f"Feature A keeps payment retries in a queue, note {i}."))["memory_id"]
            for i in range(3)
        ]
        added = await _add(
            client, "Feature B keeps payment retries in a cron job.", scope={"branch": "feature-b"}
        )
        assert added["scope"] == {"org": "acme", "project": "shop", "branch": "feature-b"}
        theirs = added["memory_id"]
        on_main = (await _add(client, "Main keeps payment retries in Celery.", scope={"branch": "main"}))[
            "memory_id"
        ]
        shared = (await _add(client, "Prefer payment retries with jitter.", kind="user_preference"))[
            "memory_id"
        ]
        other_project = (
            await _add(client, "The warehouse keeps payment retries too.", scope={"project": "warehouse"})
        )["memory_id"]

        for query in ("payment retries", "where are retries kept", "cron job", "Celery", "warehouse"):
            for mode in ("auto", "fast", "deep"):
                seen = await _ids(client, query, mode=mode)
                assert not seen & {theirs, on_main, other_project}, (query, mode)
        assert set(mine) | {shared} <= await _ids(client, "payment retries")

        assert await _ids(client, "payment retries", scope={"branch": "main"}) >= {on_main, shared}
        assert theirs not in await _ids(client, "payment retries", scope={"branch": "main"})
        every_branch = await _ids(client, "payment retries", scope={"branch": "*"})
        assert {theirs, on_main, shared, *mine} <= every_branch and other_project not in every_branch
        assert other_project in await _ids(client, "payment retries", scope={"project": "*"})
        assert other_project in await _ids(client, "payment retries", scope={"project": "warehouse"})

        ranked = await call_ok(
            client, "memory_search", {"query": "payment retries", "scope": {"branch": "*"}}
        )
        own = [r["relevance_score"] for r in ranked["results"] if r["memory_id"] in mine]
        assert own, ranked  # scope proximity: our branch's notes are in the widened results


async def test_malformed_and_missing_scopes_get_a_clear_error(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:
        for scope in ({"tenant": "t1", "org": None}, {"branch": "*"}, {"branch": ""}, {"planet": "x"}):
            error = await call_error(
                client, "memory_add", {"type": "design", "content": "x y z", "scope": scope}
            )
            assert error["code"] in ("VAL_INVALID_SCOPE", "VAL_EMPTY", "VAL_UNKNOWN_FIELD"), error
        assert (await call_ok(client, "memory_statistics", {}))["memories"]["total"] == 0

    async with _client(tmp_path / "nogit", project=None, org=None, branch=None) as client:
        # Outside git without MEMORY_PROJECT the folder names the project; a call cannot unset it.
        error = await call_error(
            client,
            "memory_add",
            {"type": "design", "content": "Where does it go?", "scope": {"project": None}},
        )
        assert error["code"] == "VAL_INVALID_SCOPE" and "scope.project" in error["suggestion"]
        stored = await _add(client, "It goes to the named project.", scope={"project": "named"})
        assert stored["scope"] == {"project": "named"}
        assert stored["memory_id"] not in await _ids(client, "named project")  # the folder's project
        scope = {"project": "named", "tenant": "t1"}  # a tenant without an org
        error = await call_error(client, "memory_search", {"query": "project", "scope": scope})
        assert error["code"] == "VAL_INVALID_SCOPE" and "org" in error["suggestion"]
        assert stored["memory_id"] in await _ids(client, "named project", scope={"project": "named"})


# ------------------------------------------------------------------ idempotency


async def test_a_double_submit_writes_once(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:
        first = await _add(client, "Cache invalidation uses a write generation counter.")
        again = await _add(client, "  Cache invalidation uses a write generation\n counter.  ")
        assert first["status"] == "created" and again == {**again, "status": "skipped_dedupe"}
        assert again["memory_id"] == first["memory_id"] and again["conflicts"] == []
        audit = await call_ok(client, "memory_audit", {"operation": "create"})
        assert audit["total"] == 1  # no audit row for the skipped store

        other_type = await _add(client, "Cache invalidation uses a write generation counter.", kind="session")
        other_branch = await _add(
            client, "Cache invalidation uses a write generation counter.", scope={"branch": "main"}
        )
        assert {other_type["status"], other_branch["status"]} == {"created"}

        keyed = await _add(client, "Version one of the note.", idempotency_key="note-1")
        rekeyed = await _add(client, "Version two of the note.", idempotency_key="note-1")
        assert rekeyed["status"] == "skipped_dedupe" and rekeyed["memory_id"] == keyed["memory_id"]

        bulk = await call_ok(
            client,
            "memory_bulk_add",
            {
                "memories": [
                    {"type": "design", "content": "Cache invalidation uses a write generation counter."},
                    {"type": "design", "content": "A brand new bulk note."},
                    {"type": "design", "content": "A brand new bulk note."},
                ]
            },
        )
        assert bulk["created"] == 1 and len(bulk["memory_ids"]) == 1
        assert [(s["index"], s["memory_id"]) for s in bulk["skipped"]] == [
            (0, first["memory_id"]),
            (2, bulk["memory_ids"][0]),
        ]

        await call_ok(client, "memory_delete", {"memory_id": first["memory_id"]})
        revived = await _add(client, "Cache invalidation uses a write generation counter.")
        assert revived["status"] == "created" and revived["memory_id"] != first["memory_id"]


async def test_racing_identical_stores_make_one_record(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:
        answers: list[dict[str, Any]] = []

        async def store(i: int) -> None:
            args = {"type": "design", "content": "Racing writers agree on one record."}
            if i % 2:
                args["idempotency_key"] = "race-key"
                args["content"] = f"Keyed racer {i}."
            answers.append(await call_ok(client, "memory_add", args))

        async with anyio.create_task_group() as tg:
            for i in range(200):
                tg.start_soon(store, i)
        by_status: dict[str, set[str]] = {}
        for a in answers:
            by_status.setdefault(a["status"], set()).add(a["memory_id"])
        assert len(answers) == 200 and len(by_status["created"]) == 2, by_status
        assert by_status["skipped_dedupe"] <= by_status["created"]
        stats = await call_ok(client, "memory_statistics", {})
        assert stats["memories"]["total"] == 2
        assert (await call_ok(client, "memory_audit", {"operation": "create"}))["total"] == 2


# ------------------------------------------------------------------ immutability and the actor


async def test_accepted_decisions_and_approved_specs_cannot_be_rewritten(tmp_path: Path) -> None:
    async with _client(tmp_path, name="claude-code") as client:
        adr = (
            await _add(
                client,
                "ADR-7: Postgres is the source of truth.",
                metadata={"design_type": "ADR", "status": "accepted", "title": "ADR-7"},
            )
        )["memory_id"]
        error = await call_error(client, "memory_update", {"memory_id": adr, "content": "ADR-7: MySQL."})
        assert error["code"] == "CON_IMMUTABLE_DECISION" and error["category"] == "CONFLICT"
        error = await call_error(client, "memory_update", {"memory_id": adr, "metadata": {"title": "x"}})
        assert error["code"] == "CON_IMMUTABLE_DECISION"
        kept = await call_ok(client, "memory_get", {"memory_id": adr})
        assert kept["memory"]["content"] == "ADR-7: Postgres is the source of truth."
        assert kept["memory"]["version"] == 1
        newer = (
            await _add(
                client,
                "ADR-9: Postgres with logical replication.",
                metadata={"design_type": "ADR", "status": "accepted"},
                relationships=[{"type": "SUPERSEDES", "target_id": adr}],
            )
        )["memory_id"]
        await call_ok(client, "memory_update", {"memory_id": adr, "metadata": {"status": "superseded"}})
        assert newer

        spec = (
            await _add(
                client,
                "REQ-1: checkout answers in 200 ms.",
                kind="requirements",
                metadata={"status": "Approved", "spec_version": "1"},
            )
        )["memory_id"]
        error = await call_error(client, "memory_update", {"memory_id": spec, "content": "REQ-1: 500 ms."})
        assert error["code"] == "CON_SPEC_LOCKED" and "spec_version" in error["suggestion"]
        done = await call_ok(
            client,
            "memory_update",
            {"memory_id": spec, "content": "REQ-1: 500 ms.", "metadata": {"spec_version": "2"}},
        )
        assert "content" in done["updated_fields"]
        draft = (await call_ok(client, "memory_get", {"memory_id": spec}))["memory"]
        assert draft["metadata"]["status"] == "Draft" and draft["metadata"]["spec_version"] == "2"

        trail = await call_ok(client, "memory_audit", {"limit": 100})
        assert {e["actor"] for e in trail["events"]} == {"claude-code"}

    async with _client(tmp_path / "named", actor="alice") as client:
        await _add(client, "The actor setting wins over the client's name.")
        trail = await call_ok(client, "memory_audit", {})
        assert {e["actor"] for e in trail["events"]} == {"alice"}


# ------------------------------------------------------------------ TTL


def _iso(moment: datetime) -> str:
    return moment.isoformat()


async def test_expired_memories_vanish_on_time_and_are_swept(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    no_sweep = MemorySettings(ttl_sweep_seconds=0)
    async with _client(tmp_path, memory=no_sweep) as client:
        branch = await _add(client, "A change on this branch: retry budget raised.", kind="change")
        assert branch["expires_at"] is not None
        assert datetime.fromisoformat(branch["expires_at"]) - now > timedelta(days=89)
        open_pr = await _add(
            client, "PR 12 context: retry budget.", ttl_policy="PR30d", metadata={"pr_id": "12"}
        )
        assert open_pr["expires_at"] is None  # not merged yet
        gone = await _add(
            client,
            "PR 11 context: merged long ago.",
            ttl_policy="PR30d",
            metadata={"pr_merged_at": _iso(now - timedelta(days=31))},
        )
        soon = await _add(
            client,
            "PR 10 context: expires in a moment.",
            ttl_policy="PR30d",
            # Expires 8 s from now: seen by the search right after, gone once that has passed.
            metadata={"pr_merged_at": _iso(datetime.now(UTC) - timedelta(days=30, seconds=-8))},
        )
        seen = await _ids(client, "PR context", scope={"branch": "*"})
        assert gone["memory_id"] not in seen and soon["memory_id"] in seen
        assert soon["memory_id"] in await _ids(client, "PR context", mode="fast")  # now cached
        await call_error(client, "memory_get", {"memory_id": gone["memory_id"]})
        await anyio.sleep(
            max(0.0, (datetime.fromisoformat(soon["expires_at"]) - datetime.now(UTC)).total_seconds())
        )
        assert soon["memory_id"] not in await _ids(client, "PR context")  # expired, not yet swept
        assert soon["memory_id"] not in await _ids(client, "PR context", mode="fast")  # nor cached
        await call_ok(
            client,
            "memory_update",
            {"memory_id": open_pr["memory_id"], "metadata": {"pr_merged_at": _iso(now - timedelta(days=40))}},
        )
        assert open_pr["memory_id"] not in await _ids(client, "PR context")
        assert (await call_ok(client, "memory_audit", {"operation": "expire"}))["total"] == 0

    async with _client(tmp_path) as client:  # the default sweep runs on the first housekeeping tick
        deadline = time.monotonic() + 30
        while (await call_ok(client, "memory_audit", {"operation": "expire"}))["total"] < 3:
            assert time.monotonic() < deadline, "the TTL sweep did not run"
            await anyio.sleep(0.5)
        trail = await call_ok(client, "memory_audit", {"operation": "expire"})
        assert {e["details"]["ttl_policy"] for e in trail["events"]} == {"PR30d"}
        assert branch["memory_id"] in await _ids(client, "retry budget raised")


async def test_stale_runbooks_are_flagged(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:
        old = datetime.now(UTC) - timedelta(days=120)
        added = await _add(
            client,
            "Runbook: rotate the database credentials.",
            kind="code_pattern",
            metadata={"last_verified_at": _iso(old)},
        )
        fresh = await _add(
            client,
            "Runbook: restart the queue worker.",
            kind="code_pattern",
            metadata={"last_verified_at": _iso(datetime.now(UTC))},
        )
        found = await call_ok(client, "memory_search", {"query": "runbook"})
        marks = {r["memory_id"]: r["stale"] for r in found["results"]}
        assert "last verified 12" in marks[added["memory_id"]]["reason"] and marks[fresh["memory_id"]] is None
        got = await call_ok(client, "memory_get", {"memory_id": added["memory_id"]})
        assert got["memory"]["stale"]["reason"].startswith("last verified")


# ------------------------------------------------------------------ input limits


async def test_sloppy_and_hostile_input(tmp_path: Path) -> None:
    async with _client(tmp_path) as client:
        tags = {"tags": [" a ", "a", "b", "", "b "]}
        stored = await _add(client, "Tags are trimmed\x00 and unique\ud800.", metadata=tags)
        got = (await call_ok(client, "memory_get", {"memory_id": stored["memory_id"]}))["memory"]
        assert got["metadata"]["tags"] == ["a", "b"] and got["tags"] == ["a", "b"]
        assert got["content"] == "Tags are trimmed and unique\ufffd."
        assert stored["redacted_preview"] == "Tags are trimmed and unique\ufffd."

        for metadata, code, category in (
            ({"tags": [f"t{i}" for i in range(33)]}, "VAL_TOO_MANY_TAGS", "VALIDATION_ERROR"),
            ({"tags": ["x" * 65]}, "VAL_TAG_TOO_LONG", "VALIDATION_ERROR"),
            ({"tags": "one"}, "VAL_INVALID_TAGS", "VALIDATION_ERROR"),
            ({"__proto__": {"admin": True}}, "SEC_UNSAFE_KEY", "SECURITY_ERROR"),
            ({"a": {"constructor": {"prototype": 1}}}, "SEC_UNSAFE_KEY", "SECURITY_ERROR"),
            ({"__secret": 1}, "SEC_UNSAFE_KEY", "SECURITY_ERROR"),
        ):
            error = await call_error(
                client, "memory_add", {"type": "design", "content": "refused", "metadata": metadata}
            )
            assert (error["code"], error["category"]) == (code, category), error
            error = await call_error(
                client, "memory_update", {"memory_id": stored["memory_id"], "metadata": metadata}
            )
            assert error["code"] == code
        assert (await call_ok(client, "memory_statistics", {}))["memories"]["total"] == 1
        assert (await call_ok(client, "memory_get", {"memory_id": stored["memory_id"]}))["memory"][
            "version"
        ] == 1
        uid = str(uuid.uuid4())
        await call_error(client, "memory_get", {"memory_id": uid})
