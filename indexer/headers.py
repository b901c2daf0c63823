"""Signatures and docstrings: the human-readable head of a definition.

The grammar wheels' tags.scm files attach doc comments with ``#strip!``/``#select-adjacent!``
directives that py-tree-sitter does not evaluate, so docstrings are read here from the tree:
Python's first string statement, else the block of comments directly above the definition.
"""

from __future__ import annotations

import inspect
import re

from tree_sitter import Node

# Nodes that wrap a definition without changing what it is: the wrapper's range is the unit's
# range (so `export`, decorators and `template <...>` are part of it) and comments sit above it.
_WRAPPERS = frozenset(
    {
        "export_statement",
        "decorated_definition",
        "template_declaration",
        "type_declaration",
        "lexical_declaration",
        "variable_declaration",
    }
)

_MULTI_WRAPPERS = frozenset({"lexical_declaration", "variable_declaration", "type_declaration"})

# Nodes skipped between a doc comment and its definition (Rust `#[derive(...)]`).
_SKIPPABLE = frozenset({"attribute_item", "decorator", "annotation", "marker_annotation"})

_BODY_TYPES = frozenset(
    {
        "block",
        "statement_block",
        "compound_statement",
        "class_body",
        "interface_body",
        "enum_body",
        "field_declaration_list",
        "declaration_list",
        "enumerator_list",
        "enum_variant_list",
        "constructor_body",
        "record_declaration_body",
    }
)

_MAX_SIGNATURE = 400
_STRING_PREFIX = re.compile(r"^[rRbBuUfF]*")


def outer_node(node: Node) -> Node:
    """The definition plus its wrappers (``export``, decorators, ``const x =``, ``template``)."""
    while node.parent is not None and node.parent.type in _WRAPPERS:
        parent = node.parent
        # `const a = () => 1, b = 2` or Go's `type ( A ...; B ... )` declare several things:
        # keep the one definition alone.
        if parent.type in _MULTI_WRAPPERS and parent.named_child_count > 1:
            break
        node = parent
    return node


def body_node(node: Node) -> Node | None:
    """The body of a definition, to cut the signature before it."""
    body = node.child_by_field_name("body")
    if body is None and node.type in {"variable_declarator", "field_definition", "public_field_definition"}:
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    if body is not None:
        return body
    frontier = list(node.named_children)
    for _ in range(3):  # Go's `type_spec > struct_type > field_declaration_list`, C's typedefs
        nested: list[Node] = []
        for child in frontier:
            if child.type in _BODY_TYPES:
                return child
            nested.extend(child.named_children)
        frontier = nested
    for child in node.children:  # Go interfaces put their `{` directly in interface_type
        for grandchild in child.children:
            if grandchild.type == "{":
                return grandchild
    return None


def signature(node: Node, outer: Node, source: bytes) -> str:
    """Header text from the start of the unit to its body, whitespace-normalised."""
    body = body_node(node)
    if body is None:
        text = source[outer.start_byte : node.end_byte].decode("utf-8", "replace")
    else:
        head = source[outer.start_byte : body.start_byte]
        for child in reversed(node.children):  # `def f():  # note` puts the comment before the body
            if "comment" in child.type and outer.start_byte <= child.start_byte < body.start_byte:
                offset = child.start_byte - outer.start_byte
                head = head[:offset] + head[offset + child.end_byte - child.start_byte :]
        text = head.decode("utf-8", "replace")
        tail = source[body.end_byte : node.end_byte].decode("utf-8", "replace").strip()
        if tail and body.is_named:  # typedef struct { ... } name_t
            text = f"{text} {{ ... }} {tail}"
    text = " ".join(text.split()).rstrip(";{: ").rstrip()
    return text[:_MAX_SIGNATURE]


def python_docstring_node(node: Node) -> Node | None:
    """The string node of a Python function's or class's docstring: its body's first statement."""
    body = node.child_by_field_name("body")
    if body is None or body.named_child_count == 0:
        return None
    first = body.named_children[0]
    if first.type != "expression_statement" or first.named_child_count != 1:
        return None
    string = first.named_children[0]
    return string if string.type == "string" else None


def python_docstring(string: Node | None, source: bytes) -> str | None:
    """The text of a docstring node, unquoted and dedented like `inspect.getdoc`."""
    if string is None:
        return None
    text = source[string.start_byte : string.end_byte].decode("utf-8", "replace")
    text = _STRING_PREFIX.sub("", text)
    quote = text[:3] if text[:3] in ('"""', "'''") else text[:1]
    text = text[len(quote) : -len(quote)] if text.endswith(quote) and len(text) >= 2 * len(quote) else text
    return inspect.cleandoc(text) or None


def comment_docstring(outer: Node, source: bytes) -> str | None:
    """The block of comments directly above a definition (no blank line between), cleaned."""
    comments: list[Node] = []
    expected_row = outer.start_point.row
    sibling = outer.prev_named_sibling
    while sibling is not None:
        if sibling.end_point.row < expected_row - 1:
            break  # a blank line: the comment belongs to something else
        if sibling.type in _SKIPPABLE:
            expected_row = sibling.start_point.row
        elif "comment" in sibling.type:
            before = sibling.prev_sibling
            if before is not None and before.end_point.row == sibling.start_point.row:
                break  # a trailing comment of the previous line's code
            comments.append(sibling)
            expected_row = sibling.start_point.row
        else:
            break
        sibling = sibling.prev_named_sibling
    if not comments:
        return None
    lines: list[str] = []
    for comment in reversed(comments):
        lines.extend(_clean_comment(source[comment.start_byte : comment.end_byte].decode("utf-8", "replace")))
    text = "\n".join(lines).strip("\n")
    return inspect.cleandoc(text) or None


def _clean_comment(text: str) -> list[str]:
    """Strip comment markers: ``/** */``, leading ``*``, ``///``, ``//!``, ``//``, ``#``."""
    text = text.strip()
    if text.startswith("/*"):
        text = re.sub(r"^/\*+!?", "", text)
        text = re.sub(r"(?<!\*)\*+/$", "", text)  # look-behind: linear on long runs of stars
        return [re.sub(r"^\s*\*(?!/) ?", "", line).rstrip() for line in text.splitlines()]
    out = []
    for line in text.splitlines():
        line = line.strip()
        line = re.sub(r"^(//[/!]?|#+) ?", "", line)
        out.append(line.rstrip())
    return out
