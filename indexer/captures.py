"""Tag-query captures → nested definitions with qualified names and kinds.

The tag query (``queries/<lang>.scm``) says *what* is a definition, a scope, a call, an import
or a base class; this module decides *where* each belongs. Definitions and scopes (namespaces,
Rust ``impl`` blocks) are sorted by position and nested with a stack, which gives qualified
names (``Class.method``, ``geo.Circle.area``) and method-vs-function kinds in one pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node, QueryCursor

from indexer.languages import get_query
from indexer.models import UnitKind

_CALLABLE_TAGS = frozenset({"function", "method"})
_GENERIC_ARGS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_TYPE_PREFIX = re.compile(r"^(?:[\s*&]+|'\w+\s+|mut\s+|dyn\s+)+")


@dataclass(eq=False)
class Container:
    """A definition or a scope while the file is being assembled."""

    node: Node
    tag: str  # function, method, class, interface, ... or namespace / impl for scopes
    name: str
    receiver: str | None = None
    parent: Container | None = None
    qualified_name: str = ""
    parent_name: str | None = None
    kind: UnitKind | None = None  # None for scopes
    unit_id: str = ""
    calls: dict[str, int] = field(default_factory=dict)  # name → first line


@dataclass
class Matches:
    """One file's captures, sorted by role; calls keep the name the query captured."""

    containers: list[Container] = field(default_factory=list)
    calls: list[tuple[Node, str]] = field(default_factory=list)
    imports: list[Node] = field(default_factory=list)
    inherits: list[Node] = field(default_factory=list)


def node_text(node: Node, source: bytes) -> str:
    """A node's source text (tree-sitter works on bytes; bad UTF-8 is replaced, not fatal)."""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def type_name(text: str) -> str:
    """``*Circle[T]`` / ``Repository<string>`` / ``&'a mut Foo`` → the bare type name."""
    previous = None
    while previous != text:
        previous, text = text, _GENERIC_ARGS.sub("", text)
    text = _TYPE_PREFIX.sub("", text)
    return " ".join(text.split())


def collect(root: Node, source: bytes, language: str) -> Matches:
    """Run the tag query once and sort its captures by role."""
    found = Matches()
    seen: dict[int, Container] = {}
    for _, captures in QueryCursor(get_query(language)).matches(root):
        names = captures.get("name", [])
        for capture, nodes in captures.items():
            role, _, tag = capture.partition(".")
            if role in ("definition", "scope") and names:
                node = nodes[0]
                if node.id in seen:
                    if tag == "method":
                        seen[node.id].tag = tag  # the more specific pattern wins
                    continue
                receivers = captures.get("receiver")
                container = Container(
                    node,
                    tag,
                    node_text(names[0], source),
                    receiver=type_name(node_text(receivers[0], source)) if receivers else None,
                )
                seen[node.id] = container
                found.containers.append(container)
            elif capture == "reference.call" and names:
                found.calls.append((nodes[0], node_text(names[0], source)))
            elif capture == "reference.import":
                found.imports.extend(nodes)
            elif capture == "reference.inherit":
                found.inherits.extend(nodes)
    return found


def nest(ordered: list[Container]) -> None:
    """Give every container its parent, qualified name and kind.

    `ordered` must be sorted by (start byte, -end byte), so that parents come before children.
    """
    stack: list[Container] = []
    namespaces: set[str] = set()
    for c in ordered:
        while stack and stack[-1].node.end_byte <= c.node.start_byte:
            stack.pop()
        c.parent = stack[-1] if stack else None
        stack.append(c)
        parent = c.parent
        prefix = f"{parent.qualified_name}." if parent else ""
        if c.tag == "namespace":  # namespace a::b { ... }
            c.name = type_name(c.name)
            c.qualified_name = prefix + c.name.replace("::", ".")
            namespaces.add(c.qualified_name)
            continue
        if c.tag == "impl":  # impl<T> path::Type<T>: the type as its own file would name it
            c.name = type_name(c.name).split("::")[-1]
            c.qualified_name = prefix + c.name
            continue
        c.name = name = c.name.strip()
        if "::" in name:  # C++ out-of-line definition: Circle::print
            *scopes, name = (type_name(part) for part in name.split("::"))
            c.name, c.receiver = name, ".".join(scopes)
        callable_ = c.tag in _CALLABLE_TAGS
        if c.receiver:
            owner = prefix + c.receiver
            c.qualified_name = f"{owner}.{name}"
            if owner in namespaces:  # void ns::helper() after `namespace ns {...}`: a function
                c.kind = UnitKind.FUNCTION if callable_ else UnitKind.CLASS
            else:
                c.parent_name = owner
                c.kind = UnitKind.METHOD if callable_ else UnitKind.CLASS
            continue
        c.qualified_name = prefix + name
        in_class = parent is not None and (parent.tag == "impl" or parent.kind is UnitKind.CLASS)
        if parent is not None and parent.tag != "namespace":
            c.parent_name = parent.qualified_name
        if not callable_:
            c.kind = UnitKind.CLASS
        else:
            c.kind = UnitKind.METHOD if in_class else UnitKind.FUNCTION
