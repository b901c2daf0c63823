"""The docs stay in step with the tools: docs/tools.md's generated blocks, README's tool list."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

from memory_service.tools import ALL_TOOLS

ROOT = Path(__file__).resolve().parents[2]


def _gen_tools() -> ModuleType:
    """docs/ is not a package: load docs/gen_tools.py from its path."""
    spec = importlib.util.spec_from_file_location("gen_tools", ROOT / "docs" / "gen_tools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tools_md_is_current() -> None:
    problems = _gen_tools().check(ROOT / "docs" / "tools.md")
    assert not problems, "docs/tools.md is out of date; run `python docs/gen_tools.py`:\n" + "\n".join(
        problems
    )


def test_check_reports_stale_and_missing_blocks() -> None:
    gen = _gen_tools()
    text = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    first = ALL_TOOLS[0].name
    stale = text.replace('"type": "object"', '"type": "array"', 1)
    assert any(p.startswith("stale block:") for p in gen.problems(stale, ALL_TOOLS))
    without = re.sub(rf"^## {first}\s*$", f"## {first}-renamed", text, flags=re.M)
    assert f"missing section: ## {first}" in gen.problems(without, ALL_TOOLS)
    assert gen.render(stale, ALL_TOOLS) == text


def test_readme_names_every_tool() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [spec.name for spec in ALL_TOOLS if f"`{spec.name}`" not in readme]
    assert not missing, f"README.md does not mention: {', '.join(missing)}"


def _section(text: str, heading: str) -> str:
    """The text under a heading, up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    ends = [m.start() for m in re.finditer(rf"\n#{{1,{len(level)}}} ", text[start + 1 :])]
    return text[start : start + 1 + ends[0]] if ends else text[start:]


def test_docs_name_every_memory_type_the_server_accepts() -> None:
    from memory_service.core.models import MemoryType

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    add_row = next(line for line in readme.splitlines() if line.startswith("| `memory_add` |"))
    add_section = _section((ROOT / "docs" / "tools.md").read_text(encoding="utf-8"), "## memory_add")
    for where, text in (("README.md memory_add row", add_row), ("tools.md memory_add", add_section)):
        missing = [t.value for t in MemoryType if f"`{t.value}`" not in text]
        assert not missing, f"{where} does not name: {missing}"
    assert "twenty-two" in add_row and len(MemoryType) == 22


def test_explain_docs_show_every_score_component() -> None:
    from memory_service.core.search.scoring import COMPONENTS

    tools = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    explain = _section(tools, "## memory_explain")
    shown = [json.loads(m) for m in re.findall(r'"components": (\{[^{}]*\})', explain)]
    assert shown and all(list(c) == list(COMPONENTS) for c in shown), shown
    assert all(f"`{c}`" in explain.split("### Examples")[0] for c in COMPONENTS)
    table = _section(tools, "### How it searches")
    assert all(f"| `{c}` |" in table for c in COMPONENTS), "memory_search's component table"


def test_where_we_differ_says_why_for_dedupe_and_the_spec_lock() -> None:
    tools = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    differ = _section(tools, "### Where we differ from seed 001")
    for needle in ("skipped_dedupe", "CON_SPEC_LOCKED", "The reason"):
        assert needle in differ, needle
