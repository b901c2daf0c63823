"""One pass over a syntax tree that yields everything hashed or searched per unit.

Clone detection needs a token stream in which identifiers and literals are abstracted (so a
copy with renamed variables hashes the same) while the structure stays; lexical search needs the
identifiers themselves, split into words. Both are collected in a single cursor walk over the
whole file, then sliced per unit by byte range, so a class and its methods do not re-walk the
same nodes (walking nodes from Python is the expensive part of indexing).
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cache

from tree_sitter import Language, Node

_IDENT, _LITERAL, _COMMENT, _BLOCK, _GROUP, _OTHER = 1, 2, 3, 4, 5, 0

# Literal node types whose inner structure must not leak into the stream (string contents,
# escape sequences, interpolations). Any other type ending in "_literal" is a literal too.
_LITERAL_TYPES = frozenset(
    {
        "string",
        "concatenated_string",
        "integer",
        "float",
        "number",
        "template_string",
        "regex",
        "interpreted_string_literal",
        "raw_string_literal",
        "string_literal",
        "char_literal",
        "system_lib_string",
        "imaginary_literal",
        "rune_literal",
        "int_literal",
        "float_literal",
    }
)

# Nodes whose own parentheses are layout unless they group an operand: ``x = (a + b)`` is
# ``x = a + b``, Python's ``return (x, y)`` is ``return x, y`` and ``for (a, b) in`` is
# ``for a, b in`` (formatters and ``ast.unparse`` add or drop them freely), while in
# ``(a + b) * c`` or ``not (a or b)`` they are structure. A generator that is a call's whole
# argument list (``f(x for x in y)``) keeps them too: they are the call's.
_GROUP_TYPES = frozenset({"parenthesized_expression", "tuple", "tuple_pattern", "generator_expression"})
# Parents (by words in their node type, across the grammars) in which parentheses group an operand.
_OPERAND_PARENT = re.compile(
    r"operator|binary|unary|attribute|subscript|call|member|field|selector|index|await|cast|"
    r"pointer|reference|try|range|update|new_|access|invocation|instanceof|assertion|splat|spread"
)
# Operands that bind tighter than any operator, so that parentheses around them are layout anyway.
_PRIMARY = re.compile(
    r"^(?:\w*identifier|attribute|call|subscript|string|integer|float|true|false|none|null|number|"
    r"list|dictionary|set|tuple|array|object|\w*literal|member_expression|"
    r"call_expression|field_expression|selector_expression|index_expression|subscript_expression)$"
)
# Python operands that bind tighter than their operator (what ``ast.unparse`` leaves bare).
_TIGHTER = frozenset(
    {
        ("not_operator", "boolean_operator"),
        ("comparison_operator", "boolean_operator"),
        ("comparison_operator", "not_operator"),
        ("binary_operator", "comparison_operator"),
        ("unary_operator", "comparison_operator"),
    }
)
_PARENS = frozenset({b"(", b")"})
_CLOSERS = frozenset({b")", b"]", b"}"})

# Receivers and keywords that say nothing about what a unit does.
_STOP_PARTS = frozenset({"self", "this", "cls"})

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


@cache
def _groups_operand(parent_type: str) -> bool:
    return _OPERAND_PARENT.search(parent_type) is not None


@cache
def _binds_tighter(inner_type: str, parent_type: str) -> bool:
    return _PRIMARY.match(inner_type) is not None or (inner_type, parent_type) in _TIGHTER


def _classify(node_type: str) -> int:
    if "comment" in node_type:
        return _COMMENT
    if node_type in _LITERAL_TYPES or node_type.endswith("_literal"):
        return _LITERAL
    if node_type.endswith("identifier"):
        return _IDENT
    return _OTHER


@cache
def kind_table(language: Language, indent_block: str | None = None) -> list[int]:
    """Token class per node kind id, so the walk does an index instead of string tests.

    Args:
        language: The grammar.
        indent_block: The node type of a block delimited by indentation alone (Python's
            ``block``), whose end must become a token.
    """
    table = []
    for kind_id in range(language.node_kind_count):
        name = language.node_kind_for_id(kind_id) or ""
        if not language.node_kind_is_named(kind_id):
            table.append(_OTHER)  # keywords spelled like node types: TypeScript's `string`
        elif name == indent_block:
            table.append(_BLOCK)
        else:
            table.append(_GROUP if name in _GROUP_TYPES else _classify(name))
    return table


_split_cache: dict[bytes, tuple[str, ...]] = {}


def split_identifier(name: str) -> list[str]:
    """Words of an identifier: ``getHTTPResponse_code`` → ``["get", "http", "response", "code"]``."""
    return [word.lower() for word in _WORD.findall(name)]


def _words(name: bytes) -> tuple[str, ...]:
    """Searchable words of an identifier, memoised: the same names recur across a project."""
    words = _split_cache.get(name)
    if words is None:
        text = name.decode("utf-8", "replace")
        words = tuple(w for w in split_identifier(text) if len(w) > 1 and w not in _STOP_PARTS)
        if len(_split_cache) < 200_000:  # bounded: a long-lived server indexes many projects
            _split_cache[name] = words
    return words


@dataclass
class TokenStream:
    """The abstracted tokens of one file, in source order, with their start bytes.

    Attributes:
        starts: Start byte of each token (sorted, for bisecting a unit's range).
        tokens: ``ID`` / ``LIT`` / the token text for keywords and punctuation.
        owners: Start byte of what each token belongs to: its own start, or for the ``}`` that
            closes an indentation block, the block's start (a method that ends its class shares
            the byte where the class's block closes; that ``}`` is the class's, not the method's).
        ident_starts: Start byte of each identifier occurrence.
        idents: The identifier texts.
        error_nodes: ERROR and MISSING nodes seen: a count of parse errors.
    """

    starts: list[int] = field(default_factory=list)
    tokens: list[bytes] = field(default_factory=list)
    owners: list[int] = field(default_factory=list)
    ident_starts: list[int] = field(default_factory=list)
    idents: list[bytes] = field(default_factory=list)
    error_nodes: int = 0

    def drop_tokens_at(self, starts: set[int]) -> None:
        """Forget the tokens starting at these bytes (Python docstrings, each one LIT token)."""
        for start in sorted(starts, reverse=True):  # from the end, so indices stay valid
            index = bisect_left(self.starts, start)
            if index < len(self.starts) and self.starts[index] == start:
                del self.starts[index], self.tokens[index], self.owners[index]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Token indices ``[lo, hi)`` of the unit at ``[start, end)``, without the closers of
        enclosing blocks that end where it ends."""
        lo, hi = bisect_left(self.starts, start), bisect_left(self.starts, end)
        while hi > lo and self.owners[hi - 1] <= start:  # a unit's own blocks start inside it
            hi -= 1
        return lo, hi

    def normalized_hash(self, start: int, end: int) -> str:
        """SHA-256 of the abstracted tokens of the unit at ``[start, end)``."""
        lo, hi = self.span(start, end)
        return hashlib.sha256(b" ".join(self.tokens[lo:hi])).hexdigest()

    def identifier_parts(self, start: int, end: int, limit: int = 200) -> list[str]:
        """Distinct lower-case words of the identifiers inside ``[start, end)``, first seen first."""
        lo, hi = bisect_left(self.ident_starts, start), bisect_left(self.ident_starts, end)
        seen: dict[str, None] = {}
        for name in dict.fromkeys(self.idents[lo:hi]):
            seen.update(dict.fromkeys(_words(name)))
            if len(seen) >= limit:
                break
        return list(seen)[:limit]


def _redundant_parentheses(node: Node, field_name: str | None) -> bool:
    """Whether a grouping node's parentheses can go (see `_GROUP_TYPES`)."""
    if field_name == "arguments":
        return False
    parent = node.parent
    if parent is None or not _groups_operand(parent.type):
        return True
    if node.type != "parenthesized_expression" or node.named_child_count != 1:
        return False
    inner = node.named_children[0]
    return _binds_tighter(inner.type, parent.type)


def tokenize(root: Node, source: bytes, kinds: list[int]) -> TokenStream:
    """Walk the tree once; comments are dropped and literals are not descended into.

    This loop visits every node of every file, so it is written for speed: kind ids index a
    table (`kind_table`), bound methods are hoisted, and tokens stay bytes until hashed.
    Indentation blocks (Python) get a closing ``}`` token placed on their last byte: without it
    ``if a: f()`` followed by ``g()`` would hash like ``g()`` indented under the ``if``.
    Layout that formatters change is left out: grouping parentheses (`_GROUP_TYPES`) and a
    trailing comma before a closing bracket.
    """
    out = TokenStream()
    starts, tokens, owners = out.starts, out.tokens, out.owners
    add_start, add_token, add_owner = starts.append, tokens.append, owners.append
    add_ident_start, add_ident = out.ident_starts.append, out.idents.append
    open_blocks: list[tuple[int, int]] = []  # (end, start) of the indentation blocks we are inside
    grouping: set[int] = set()  # start bytes of the parentheses of grouping nodes
    known = len(kinds)
    cursor = root.walk()
    while True:
        node = cursor.node
        assert node is not None  # a cursor always points at a node
        kind_id = node.kind_id
        if kind_id < known:
            kind = kinds[kind_id]
        else:  # ERROR's id (0xFFFF) lies past the table
            kind = _OTHER
            out.error_nodes += 1
        token = b""
        start = node.start_byte
        if kind == _LITERAL:
            token = b"LIT"
        elif kind != _COMMENT:
            children = node.child_count
            if children:  # including composite identifiers (a::b): their parts count
                if kind == _BLOCK:
                    open_blocks.append((node.end_byte, start))
                elif kind == _GROUP and children > 2 and _redundant_parentheses(node, cursor.field_name):
                    grouping.update((start, node.end_byte - 1))
                if cursor.goto_first_child():
                    continue
            else:
                end = node.end_byte
                if end == start:
                    out.error_nodes += node.is_missing  # tokens the parser had to invent
                elif kind == _IDENT:
                    token = b"ID"
                    add_ident_start(start)
                    add_ident(source[start:end])
                else:
                    token = source[start:end]
                    if token in _PARENS and start in grouping:
                        token = b""
                    elif token in _CLOSERS and tokens and tokens[-1] == b",":
                        del starts[-1], tokens[-1], owners[-1]
        if token:
            while open_blocks and open_blocks[-1][0] <= start:
                block_end, block_start = open_blocks.pop()
                add_start(block_end - 1)
                add_token(b"}")
                add_owner(block_start)
            add_start(start)
            add_token(token)
            add_owner(start)
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                while open_blocks:
                    block_end, block_start = open_blocks.pop()
                    add_start(block_end - 1)
                    add_token(b"}")
                    add_owner(block_start)
                return out
