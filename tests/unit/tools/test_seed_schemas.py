"""The published tool schemas hold everything seed 001 says, read from the spec itself."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from memory_service.tools import ALL_TOOLS
from tests.conftest import NOT_APPLICABLE, SHARED, missing
from tests.schema_contains import schema_problems

IGNORED_KEYS = {"description"}


def _seed_schemas() -> dict[str, dict[str, Any]]:
    seeds = sorted((SHARED / "seeds").glob("001_*.txt"))
    if not seeds:
        missing(f"seed 001 not found under {SHARED / 'seeds'}: check out ../shared beside this repository")
    text = seeds[0].read_text()
    out: dict[str, dict[str, Any]] = {}
    for match in re.finditer(r"^##### (\w+)\n(.*?)(?=^##### |^#### |^### |\Z)", text, re.S | re.M):
        name, body = match.group(1), match.group(2)
        blocks = re.findall(r"\*\*(Input|Output) Schema:\*\*\s*```json\n(.*?)```", body, re.S)
        out[name] = {kind: json.loads(block) for kind, block in blocks}
    return out


def _contains(seed: Any, ours: Any, path: str) -> list[str]:
    return schema_problems(seed, ours, path, IGNORED_KEYS)


def _seed_for(name: str) -> dict[str, Any]:
    """Seed 001's schemas of a tool; tools from other seeds (memory_explain: seed 000) are tested
    against their own contracts elsewhere."""
    seeds = _seed_schemas()
    if name not in seeds:
        pytest.skip(f"{NOT_APPLICABLE} {name} is not a seed-001 tool")
    return seeds[name]


@pytest.mark.parametrize("spec", ALL_TOOLS, ids=lambda s: s.name)
def test_input_schema_holds_the_seed(spec: Any) -> None:
    seed = _seed_for(spec.name)["Input"]
    ours = spec.input_schema()
    assert _contains(seed, ours, spec.name) == []
    assert set(ours.get("required", [])) == set(seed.get("required", []))


@pytest.mark.parametrize("spec", ALL_TOOLS, ids=lambda s: s.name)
def test_output_schema_holds_the_seed(spec: Any) -> None:
    seed = _seed_for(spec.name)["Output"]
    ours = spec.output_schema()
    # Output: every seed property exists with the seed's type (we may add fields and requirements).
    for name, prop in seed["properties"].items():
        assert name in ours["properties"], f"{spec.name}: output lacks {name}"
        if "type" in prop:
            found = ours["properties"][name].get("type")
            allowed = found if isinstance(found, list) else [found]
            assert prop["type"] in allowed, (spec.name, name, found)


def test_the_parser_reads_all_23_seed_tools() -> None:
    assert len(_seed_schemas()) == 23
