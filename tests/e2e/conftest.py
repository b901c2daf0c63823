"""In-process MCP client fixtures: the real server object, real engines, the real model."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from memory_service.server import build_server
from memory_service.settings import EmbeddingSettings, ServerSettings, Settings
from tests.conftest import PROFILE, REPO, SERVERS, profile_settings, require_model

TRACE_PROJECT = REPO / "tests" / "fixtures" / "traceproject"


@pytest.fixture(scope="session", autouse=True)
def server_profile(request: pytest.FixtureRequest) -> None:
    """On the server profile, start Neo4j and Redis once for the session (tests/servers)."""
    if PROFILE == "server":
        SERVERS["neo4j"] = request.getfixturevalue("neo4j_uri")
        SERVERS["redis"] = request.getfixturevalue("redis_url")


def make_settings(root: Path, model: Path | None) -> Settings:
    return Settings(
        data_dir=root / "data",
        project_root=root,
        project="test",
        embedding=EmbeddingSettings(model_path=model or root / "missing-model", load_timeout_seconds=120),
        server=ServerSettings(http_port=0),  # the HTTP side server on a free port, never 9090
        **profile_settings(root / "data"),
    )


@pytest.fixture(scope="module")
async def client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One server per test module (the model loads once); tests use distinct content."""
    root = tmp_path_factory.mktemp("server")
    async with Client(build_server(make_settings(root, require_model()))) as c:
        yield c


def payload(result: CallToolResult) -> dict[str, Any]:
    """The JSON a tool returned. A success carries it as structured content and as text; an error
    only as text, since structured content must match the output schema (strict clients check)."""
    text = result.content[0].text  # type: ignore[union-attr]
    data = json.loads(text)
    if result.is_error:
        assert result.structured_content is None, "an error must not carry structuredContent"
    else:
        assert result.structured_content == data
    return data


async def call_ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    data = payload(result)
    assert not result.is_error, data
    return data


async def call_error(client: Client, tool: str, args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    data = payload(result)
    assert result.is_error, data
    assert data["status"] == "error"
    error = data["error"]
    assert set(error) >= {"code", "message", "details", "suggestion"}
    assert error["message"] and error["suggestion"], error
    return error


@asynccontextmanager
async def fixture_project(
    tmp_path_factory: pytest.TempPathFactory, name: str, memories: list[tuple[str, dict[str, Any]]]
) -> AsyncIterator[tuple[Client, dict[str, str]]]:
    """A server on a copy of tests/fixtures/traceproject, indexed, with ``memories`` added; yields
    the client and the memory ids by key."""
    root = tmp_path_factory.mktemp(name)
    shutil.copytree(TRACE_PROJECT, root, dirs_exist_ok=True)
    async with Client(build_server(make_settings(root, require_model()))) as client:
        job = await call_ok(client, "index_directory", {"directory_path": ".", "wait": True})
        assert job["job"]["status"] == "completed", job
        ids = {key: (await call_ok(client, "memory_add", body))["memory_id"] for key, body in memories}
        yield client, ids
