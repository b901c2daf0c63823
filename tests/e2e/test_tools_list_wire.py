"""What ``tools/list`` sends over the wire is exactly what the tool specs say, for every profile.

docs/gen_tools.py --check ties the specs to docs/tools.md; this ties the specs to the answer a
real MCP client receives (names, titles, descriptions, input and output schemas, annotations, and
nothing else), so a change in how tools are registered with the MCP SDK (tools/registry.py,
server.py) cannot alter the published surface unnoticed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory_service.server import build_server
from memory_service.settings import ServerSettings
from memory_service.tools.profiles import PROFILES, tools_for
from memory_service.tools.registry import ToolSpec
from tests.conftest import require_model
from tests.e2e.conftest import make_settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SURFACES = [(profile, "legal") for profile in PROFILES] + [
    ("cortex-find-store", "seed"),
    ("memory-interface-v1", "seed"),
]


def _expected(spec: ToolSpec) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": spec.input_schema(),
        "annotations": spec.annotations.model_dump(by_alias=True, exclude_none=True),
    }
    if spec.title is not None:
        tool["title"] = spec.title
    output = spec.output_schema()
    if output is not None:
        tool["outputSchema"] = output
    return tool


@pytest.mark.parametrize(("profile", "tool_names"), SURFACES)
async def test_tools_list_is_the_specs(tmp_path: Path, profile: str, tool_names: str) -> None:
    settings = make_settings(tmp_path, require_model())
    settings.server = ServerSettings(http_port=0, profile=profile, tool_names=tool_names)
    async with Client(build_server(settings)) as client:
        listed = (await client.list_tools()).tools
    wire = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed]
    assert wire == [_expected(spec) for spec in tools_for(profile, tool_names).tools]
