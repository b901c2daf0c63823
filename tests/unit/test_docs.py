"""The docs stay in step with the tools: docs/tools.md's generated blocks, README's tool list."""

from __future__ import annotations

import importlib.util
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
