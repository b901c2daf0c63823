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

_IDENT, _LITERAL, _COMMENT, _BLOCK, _OTHER = 1, 2, 3, 4, 0

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

# Receivers and keywords that say nothing about what a unit does.
_STOP_PARTS = frozenset({"self", "this", "cls"})

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")


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
        else:
            table.append(_BLOCK if name == indent_block else _classify(name))
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
        ident_starts: Start byte of each identifier occurrence.
        idents: The identifier texts.
        error_nodes: ERROR and MISSING nodes seen: a count of parse errors.
    """

    starts: list[int] = field(default_factory=list)
    tokens: list[bytes] = field(default_factory=list)
    ident_starts: list[int] = field(default_factory=list)
    idents: list[bytes] = field(default_factory=list)
    error_nodes: int = 0

    def drop_tokens_at(self, starts: set[int]) -> None:
        """Forget the tokens starting at these bytes (Python docstrings, each one LIT token)."""
        for start in sorted(starts, reverse=True):  # from the end, so indices stay valid
            index = bisect_left(self.starts, start)
            if index < len(self.starts) and self.starts[index] == start:
                del self.starts[index], self.tokens[index]

    def normalized_hash(self, start: int, end: int) -> str:
        """SHA-256 of the abstracted tokens inside ``[start, end)``."""
        lo, hi = bisect_left(self.starts, start), bisect_left(self.starts, end)
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


def tokenize(root: Node, source: bytes, kinds: list[int]) -> TokenStream:
    """Walk the tree once; comments are dropped and literals are not descended into.

    This loop visits every node of every file, so it is written for speed: kind ids index a
    table (`kind_table`), bound methods are hoisted, and tokens stay bytes until hashed.
    Indentation blocks (Python) get a closing ``}`` token placed on their last byte: without it
    ``if a: f()`` followed by ``g()`` would hash like ``g()`` indented under the ``if``.
    """
    out = TokenStream()
    add_start, add_token = out.starts.append, out.tokens.append
    add_ident_start, add_ident = out.ident_starts.append, out.idents.append
    open_blocks: list[int] = []  # end bytes of the indentation blocks we are inside
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
            if node.child_count:  # including composite identifiers (a::b): their parts count
                if kind == _BLOCK:
                    open_blocks.append(node.end_byte)
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
        if token:
            while open_blocks and open_blocks[-1] <= start:
                add_start(open_blocks.pop() - 1)
                add_token(b"}")
            add_start(start)
            add_token(token)
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                while open_blocks:
                    add_start(open_blocks.pop() - 1)
                    add_token(b"}")
                return out
