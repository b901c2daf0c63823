"""The package's import graph (grimp, import-linter's engine; imports under TYPE_CHECKING and
inside functions count): no cycles, and the core imports nothing of the surfaces or adapters.

Dependencies run one way: surfaces (tools, daemon, transport, observability, CLI) -> core ->
ports; adapters (stores, embeddings) implement the ports; ``app`` wires them all together.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGE = "memory_service"
# What the core may never import, directly or under TYPE_CHECKING.
OUTSIDE_CORE = ("stores", "tools", "profiles", "transport", "daemon", "observability", "cli", "backup", "app")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, cache_dir=None)


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_graph_has_no_cycles(graph: grimp.ImportGraph) -> None:
    assert cycles(graph) == []


def test_the_core_imports_no_surface_and_no_adapter(graph: grimp.ImportGraph) -> None:
    banned = tuple(f"{PACKAGE}.{name}" for name in OUTSIDE_CORE)
    arrows = sorted(
        (module, target)
        for module in graph.modules
        if module == f"{PACKAGE}.core" or module.startswith(f"{PACKAGE}.core.")
        for target in graph.find_modules_directly_imported_by(module)
        if target in banned or target.startswith(tuple(f"{b}." for b in banned))
    )
    assert arrows == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: two modules importing each other are one cycle."""
    graph = grimp.ImportGraph()
    for module in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    assert cycles(graph) == [["p.a", "p.b"]]


def test_the_ports_import_nothing_but_other_ports(graph: grimp.ImportGraph) -> None:
    ports = f"{PACKAGE}.core.ports"
    arrows = sorted(
        (module, target)
        for module in graph.modules
        if module == ports or module.startswith(f"{ports}.")
        for target in graph.find_modules_directly_imported_by(module)
        if target.startswith(f"{PACKAGE}.") and target != ports and not target.startswith(f"{ports}.")
    )
    assert arrows == []
