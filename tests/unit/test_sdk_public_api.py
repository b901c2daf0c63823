"""The server uses only the MCP SDK's public API, so an SDK upgrade cannot break it silently.

grimp finds the modules of ``memory_service`` that import the SDK (``mcp``, and ``mcp_types``, its
wire types); their import statements are then read one by one. An import is public when no part of
its module path and no name it takes starts with ``_``, the name is in the module's ``__all__``
(when the module has one), and it does not reach into the high-level server's internals
(``mcp.server.mcpserver.*``: its tool registration, function metadata, managers; the package
itself exports its public names). Nor may any module read a private attribute that an SDK class
defines (``server._lowlevel_server``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

PACKAGE = "memory_service"
SDK = ("mcp", "mcp_types")
# The high-level server's internals: only the package's own exports are public.
INTERNAL = ("mcp.server.mcpserver.", "mcp.server.fastmcp")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, include_external_packages=True, cache_dir=None)


def _source(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin)


def _sdk_imports(tree: ast.AST) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) for each SDK import: ``name`` None for ``import mcp.x``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in SDK:
                    yield node.lineno, alias.name, None
        elif (
            isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in SDK
        ):
            for alias in node.names:
                yield node.lineno, str(node.module), alias.name


def _problem(module: str, name: str | None) -> str | None:
    if any(part.startswith("_") for part in module.split(".")):
        return "private module"
    if module.startswith(INTERNAL):
        return "the high-level server's internals"
    if name is None:
        return None
    if name.startswith("_"):
        return "private name"
    exported = getattr(importlib.import_module(module), "__all__", None)
    if exported is not None and name not in exported and not _is_submodule(module, name):
        return f"not in {module}.__all__"
    return None


def _is_submodule(module: str, name: str) -> bool:
    return importlib.util.find_spec(f"{module}.{name}") is not None


def _private_sdk_attributes() -> set[str]:
    """The private attributes and methods the SDK's classes define (``self._x = ...``, ``def _x``)."""
    names: set[str] = set()
    for package in SDK:
        root = _source(package).parent
        for path in root.rglob("*.py"):
            for cls in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(cls, ast.ClassDef):
                    continue
                for node in ast.walk(cls):
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(node.name)
                    targets = node.targets if isinstance(node, ast.Assign) else []
                    targets += [node.target] if isinstance(node, ast.AnnAssign) else []
                    for target in targets:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                            names.add(target.attr)
                        elif isinstance(target, ast.Name):
                            names.add(target.id)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def test_the_sdk_is_imported_by_its_public_names_only(graph: grimp.ImportGraph) -> None:
    importers = sorted(
        module
        for package in SDK
        for module in graph.find_modules_that_directly_import(package)
        if module.split(".")[0] == PACKAGE
    )
    assert importers, "no module imports the SDK: the graph lost the external packages"
    problems = []
    for module in importers:
        path = _source(module)
        for line, imported, name in _sdk_imports(ast.parse(path.read_text(encoding="utf-8"))):
            problem = _problem(imported, name)
            if problem is not None:
                shown = imported if name is None else f"{imported}.{name}"
                problems.append(f"{module}:{line} {shown}: {problem}")
    assert problems == []


def test_no_private_attribute_of_the_sdk_is_read(graph: grimp.ImportGraph) -> None:
    private = _private_sdk_attributes()
    reads = []
    for module in sorted(graph.modules):
        if module.split(".")[0] != PACKAGE:
            continue
        path = _source(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute) or node.attr not in private:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue  # our own class's attribute
            reads.append(f"{module}:{node.lineno} {ast.unparse(node)}")
    assert reads == []
