"""Keep the generated parts of docs/tools.md in step with the tools the server publishes.

Every tool in ``memory_service.tools.ALL_TOOLS`` has a ``## <name>`` section in docs/tools.md
holding three generated blocks, each between markers::

    <!-- BEGIN GENERATED: <name> annotations -->      title and MCP annotations
    <!-- BEGIN GENERATED: <name> input schema -->     inputSchema, pretty-printed JSON
    <!-- BEGIN GENERATED: <name> output schema -->    outputSchema, pretty-printed JSON

closed by the matching ``<!-- END GENERATED: ... -->``. Everything else on the page is written
by hand.

    python docs/gen_tools.py          rewrite every generated block from the code
    python docs/gen_tools.py --check  exit 1, naming each stale, missing or unknown block

Rewriting never adds a section: a new tool's section (purpose, examples, errors) is written by
hand, with empty marker pairs that this script then fills.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "tools.md"
KINDS = ("annotations", "input schema", "output schema")
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")

_BLOCK = re.compile(
    r"(?P<begin><!-- BEGIN GENERATED: (?P<key>[^>]+?) -->\n)(?P<body>.*?)"
    r"(?P<end><!-- END GENERATED: (?P=key) -->)",
    re.S,
)


class Spec(Protocol):
    """What the generator reads of a ``ToolSpec``."""

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str | None: ...

    @property
    def annotations(self) -> Any: ...

    def input_schema(self) -> dict[str, Any]: ...

    def output_schema(self) -> dict[str, Any]: ...


def load_tools() -> list[Spec]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from memory_service.tools import ALL_TOOLS

    return list(ALL_TOOLS)


def _json_block(schema: dict[str, Any]) -> str:
    return "```json\n" + json.dumps(schema, indent=2, ensure_ascii=False) + "\n```\n"


def _annotations_block(spec: Spec) -> str:
    hints = spec.annotations.model_dump(by_alias=True, exclude_none=True)
    shown = ", ".join(f"`{name}: {json.dumps(hints.get(name))}`" for name in HINTS)
    title = f"Title: `{spec.title}`. " if spec.title else ""
    return f"{title}Annotations: {shown}.\n"


def expected_blocks(tools: Sequence[Spec]) -> dict[str, str]:
    """Block key (``"<tool> <kind>"``) -> the text that belongs between its markers."""
    out: dict[str, str] = {}
    for spec in tools:
        out[f"{spec.name} annotations"] = _annotations_block(spec)
        out[f"{spec.name} input schema"] = _json_block(spec.input_schema())
        out[f"{spec.name} output schema"] = _json_block(spec.output_schema())
    return out


def render(text: str, tools: Sequence[Spec]) -> str:
    """``text`` with every generated block of a known tool rewritten from the code."""
    expected = expected_blocks(tools)

    def fill(match: re.Match[str]) -> str:
        body = expected.get(match["key"], match["body"])
        return match["begin"] + body + match["end"]

    return _BLOCK.sub(fill, text)


def problems(text: str, tools: Sequence[Spec]) -> list[str]:
    """What is out of date in ``text``: one line per missing section, stale/missing/unknown block."""
    expected = expected_blocks(tools)
    found: dict[str, str] = {}
    out: list[str] = []
    for match in _BLOCK.finditer(text):
        key = match["key"]
        if key in found:
            out.append(f"duplicate block: {key}")
        found[key] = match["body"]
        if key not in expected:
            out.append(f"unknown block (no such tool or kind in ALL_TOOLS): {key}")
    for spec in tools:
        if not re.search(rf"^## {re.escape(spec.name)}\s*$", text, re.M):
            out.append(f"missing section: ## {spec.name}")
        for kind in KINDS:
            key = f"{spec.name} {kind}"
            if key not in found:
                out.append(f"missing block: {key}")
            elif found[key] != expected[key]:
                out.append(f"stale block: {key}")
    return out


def check(path: Path = DOC) -> list[str]:
    """The problems of ``path`` against ``ALL_TOOLS``; empty when the page is current."""
    return problems(path.read_text(encoding="utf-8"), load_tools())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report, do not write; exit 1 if stale")
    parser.add_argument("--doc", type=Path, default=DOC, help="the page (default: docs/tools.md)")
    args = parser.parse_args(argv)
    tools = load_tools()
    text = args.doc.read_text(encoding="utf-8")
    if not args.check:
        new = render(text, tools)
        if new != text:
            args.doc.write_text(new, encoding="utf-8")
            print(f"rewrote generated blocks in {args.doc}")
        text = new
    found = problems(text, tools)
    for line in found:
        print(f"{args.doc.name}: {line}", file=sys.stderr)
    if found and not args.check:
        print("write the sections and empty marker pairs above by hand, then run again", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
