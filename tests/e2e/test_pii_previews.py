"""Issue #30: secrets without a telling key name and personal data, through the real MCP client.

An AWS access key glued into a file name (``credentials-AKIA...json``) and a bare AWS secret key
are masked in what is stored, in every answer (add, get, search), in an error that echoes the
path, and in every byte of the data directory (daemon.log, the idempotency table, the vectors).
Previews mask personal data too (phone number, IP address, date of birth, street address, card
number, SSN) while the stored text keeps the preview-only kinds (docs/governance.md).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from memory_service.server import build_server
from tests.conftest import REPO, daemon_gone, require_model, server_env
from tests.e2e.conftest import make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

KEY_ID = "AKIAZ7Q2W4E6R8T0Y2U4"
BARE = "wJ8k2Lm4Np6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh4Ij"
PATH = f"/srv/backup/credentials-{KEY_ID}.json"
PERSONAL = "on-call Dana (415) 555-0132, DOB 1985-03-14, 221B Baker Street, from 203.0.113.42"


async def _call(client: Client, seen: list[str], tool: str, args: dict[str, Any], ok: bool = True) -> Any:
    result = await client.call_tool(tool, args)
    text = result.content[0].text  # type: ignore[union-attr]
    seen.append(text)
    assert result.is_error is not ok, text
    return json.loads(text)


async def test_glued_and_bare_aws_keys_reach_no_answer_log_or_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = server_env(data, model=require_model())
    env["MEMORY_SERVER__LOG_LEVEL"] = "DEBUG"
    content = f"Backup failed: {PATH}, secret {BARE}, call (415) 555-0132. Also: {PERSONAL}"
    seen: list[str] = []
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memory_service"], env=env, cwd=str(REPO)
    )
    async with Client(params) as client:
        added = await _call(
            client,
            seen,
            "memory_add",
            {"type": "session", "content": content, "idempotency_key": f"k-{KEY_ID}"},
        )
        preview = added["redacted_preview"]
        for kind in ("aws_access_key", "aws_secret_key", "phone_number"):  # what fits in 160 characters
            assert f"[REDACTED:{kind}]" in preview, preview
        assert "555-0132" not in preview
        assert added["secrets_redacted"] == {"aws_access_key": 1, "aws_secret_key": 1}

        again = await _call(
            client,
            seen,
            "memory_add",
            {"type": "session", "content": content, "idempotency_key": f"k-{KEY_ID}"},
        )
        assert again["memory_id"] == added["memory_id"]  # the idempotency table answered

        got = await _call(client, seen, "memory_get", {"memory_id": added["memory_id"]})
        stored = got["memory"]["content"]
        assert "credentials-[REDACTED:aws_access_key].json" in stored
        assert "[REDACTED:aws_secret_key]" in stored
        assert PERSONAL in stored  # preview-only kinds are kept in the stored text

        found = await _call(client, seen, "memory_search", {"query": "backup failed credentials secret"})
        assert added["memory_id"] in [r["memory_id"] for r in found["results"]]

        error = await _call(client, seen, "index_file", {"file_path": PATH}, ok=False)
        assert "credentials-[REDACTED:aws_access_key].json" in json.dumps(error)

    daemon_gone(data)
    answered = "\n".join(seen)
    assert KEY_ID not in answered and BARE not in answered
    files = [f for f in data.rglob("*") if f.is_file()]
    assert any(f.name == "daemon.log" for f in files)
    log = next(f for f in files if f.name == "daemon.log").read_text()
    assert "credentials-[REDACTED:aws_access_key].json" in log  # the error was logged, masked
    leaks = [(f.name, s) for f in files for s in (KEY_ID, BARE) if s.encode() in f.read_bytes()]
    assert not leaks, leaks


@pytest.fixture(scope="module")
async def cortex(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    root = tmp_path_factory.mktemp("cortex-pii")
    async with Client(build_server(make_settings(root, require_model()), profile="cortex-os")) as client:
        yield client


async def test_seed_003_previews_are_pii_safe(cortex: Client) -> None:
    async def data(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await cortex.call_tool(tool, args)
        body = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert body["success"], body
        return dict(body["data"])

    cards = await data(
        "memory_store", {"kind": "contact", "text": "Card 4111 1111 1111 1111, SSN 078-05-1120."}
    )
    preview = cards["redactedPreview"]
    assert preview == "Card [REDACTED:card_number], SSN [REDACTED:us_ssn]."
    stored = await data("memory_store", {"kind": "contact", "text": PERSONAL})
    preview = stored["redactedPreview"]
    assert preview == (
        "on-call Dana [REDACTED:phone_number], DOB [REDACTED:date_of_birth], [REDACTED:street_address], "
        "from [REDACTED:ip_address]"
    )

    updated = await data(
        "memory_update", {"id": stored["id"], "text": f"Moved: call +44 20 7946 0958, key {BARE}"}
    )
    snapshot = updated["data"]["textPreview"]
    assert "[REDACTED:phone_number]" in snapshot and "[REDACTED:aws_secret_key]" in snapshot
    assert "7946 0958" not in snapshot and BARE not in snapshot
