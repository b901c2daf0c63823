"""Every suggestion names only what ships: tools the server lists, memory-cli commands that exist.

A hint that sends a user to ``memory-cli restore`` or an unbuilt tool is worse than none. The
suggestions are read from the source (every ``suggestion=`` argument and ``"suggestion"`` entry,
f-strings included), so a new one is checked the day it is written.
"""

from __future__ import annotations

import ast
import re

import typer.main

from memory_service.cli.main import app
from memory_service.tools.profiles import PROFILES
from tests.conftest import REPO

SOURCES = [*(REPO / "memory_service").rglob("*.py"), *(REPO / "indexer").rglob("*.py")]
CLI_COMMANDS = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
# Every profile's tools (a compatibility profile's hints name its own tools).
TOOLS = {spec.name for specs in PROFILES.values() for spec in specs}
# Names of tools (seed 001 and ours), shipped or not: any such name in a hint must be shipped.
TOOL_LIKE = re.compile(
    r"\b(?:memory_[a-z_]+|index_[a-z_]+|graph_query|get_related|get_design_context|trace_[a-z_]+|"
    r"code_search|find_duplicates|find_similar[a-z_]*|reindex|analyze_[a-z_]+|normalize_[a-z_]+|"
    r"export_[a-z_]+|import_[a-z_]+|backup_[a-z_]+|restore_[a-z_]+|validate_[a-z_]+)\b"
)
# Words of that shape that are settings or fields, not tools.
NOT_TOOLS = {"memory_id", "memory_ids", "memory_types", "index_status_job"}


def _text(node: ast.AST) -> str:
    """The literal text of a string or f-string expression (placeholders dropped)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(v) for v in node.values)
    if isinstance(node, ast.BinOp):
        return _text(node.left) + " " + _text(node.right)
    if isinstance(node, ast.IfExp):
        return _text(node.body) + " " + _text(node.orelse)
    return " ".join(_text(child) for child in ast.iter_child_nodes(node))


def suggestions() -> list[tuple[str, str]]:
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "suggestion":
                found.append((f"{path.relative_to(REPO)}:{node.value.lineno}", _text(node.value)))
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == "suggestion":
                        found.append((f"{path.relative_to(REPO)}:{value.lineno}", _text(value)))
    return found


def test_suggestions_are_found() -> None:
    assert len(suggestions()) > 50


def test_every_memory_cli_command_named_exists() -> None:
    wrong = [
        (where, command)
        for where, text in suggestions()
        for command in re.findall(r"memory-cli ([a-z][a-z-]*)", text)
        if command not in CLI_COMMANDS
    ]
    assert not wrong, f"suggestions name memory-cli commands that do not exist: {wrong}"


def test_every_tool_named_ships() -> None:
    wrong = [
        (where, name)
        for where, text in suggestions()
        for name in TOOL_LIKE.findall(text)
        if name not in TOOLS and name not in NOT_TOOLS
    ]
    assert not wrong, f"suggestions name tools the server does not list: {wrong}"


def test_the_checker_catches_a_bad_hint() -> None:
    bad = 'raise X("m", suggestion="Run memory-cli restore, then graph_query.")'
    text = _text(next(n for n in ast.walk(ast.parse(bad)) if isinstance(n, ast.keyword)).value)
    assert re.findall(r"memory-cli ([a-z][a-z-]*)", text) == ["restore"]
    assert TOOL_LIKE.findall(text) == ["graph_query"]
