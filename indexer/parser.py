"""Source file → `FileIndex`: units, hashes, and the file's unresolved relations.

`captures` nests the query's definitions; this module turns them into `CodeUnit`s and edges.
Every call and base-class name is attributed to its innermost unit by bisecting the sorted
definitions (O(log n) each). Bad source never raises: tree-sitter recovers, the units that
parsed are returned, and ERROR/MISSING nodes are counted in `FileIndex.parse_errors`.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path

from tree_sitter import Node

from indexer.captures import Container, collect, nest, node_text, type_name
from indexer.headers import comment_docstring, outer_node, python_docstring, python_docstring_node, signature
from indexer.languages import (
    UnsupportedLanguageError,
    get_language,
    get_parser,
    get_spec,
    language_for_path,
)
from indexer.models import CodeRelation, CodeUnit, FileIndex, RelationType, UnitKind, unit_id
from indexer.shingles import Shingler
from indexer.tokens import TokenStream, kind_table, tokenize


def parse_file(path: Path, root: Path, source: bytes | None = None) -> FileIndex:
    """Parse one file; `source` saves a read when the caller already has the bytes.

    Args:
        path: The file (absolute, or relative to the working directory as usual).
        root: The project root; the stored path is relative to it, with forward slashes.
        source: The file's bytes, if already read.

    Raises:
        UnsupportedLanguageError: No grammar for the file's extension.
        OSError: The file could not be read (only when `source` is None).
    """
    language = language_for_path(path)
    if language is None:
        raise UnsupportedLanguageError(f"no grammar for {path.suffix or path.name!r} files ({path})")
    return parse_source(path.read_bytes() if source is None else source, language, _relative(path, root))


def _relative(path: Path, root: Path) -> str:
    """`path` relative to `root`, trying the paths as given before resolving symlinks."""
    for full, base in ((path.absolute(), root.absolute()), (path.resolve(), root.resolve())):
        if full.is_relative_to(base):
            return full.relative_to(base).as_posix()
    return path.as_posix()


def parse_source(source: bytes, language: str, rel_path: str) -> FileIndex:
    """Parse source bytes of a known language into a `FileIndex` (never raises for bad code)."""
    spec = get_spec(language)
    tree = get_parser(language).parse(source)
    root = tree.root_node
    found = collect(root, source, language)
    ordered = sorted(found.containers, key=lambda c: (c.node.start_byte, -c.node.end_byte))
    nest(ordered)
    starts = [c.node.start_byte for c in ordered]
    stream = tokenize(root, source, kind_table(get_language(language), spec.indent_block))

    def innermost(node: Node) -> Container | None:
        index = bisect_right(starts, node.start_byte) - 1
        container = ordered[index] if index >= 0 else None
        while container is not None and container.node.end_byte <= node.start_byte:
            container = container.parent
        return container

    file_calls: dict[str, int] = {}
    for call, name in found.calls:
        owner = innermost(call)
        while owner is not None and owner.kind is None:
            owner = owner.parent  # calls in a namespace or impl scope belong to the next unit up
        (owner.calls if owner else file_calls).setdefault(name, call.start_point.row + 1)

    units = _build_units(ordered, source, rel_path, language, spec.comment_docs, stream)
    relations = _contains(ordered, rel_path)
    for owner_id, calls in [(rel_path, file_calls)] + [(c.unit_id, c.calls) for c in ordered if c.kind]:
        relations.extend(
            CodeRelation(
                type=RelationType.CALLS, source_id=owner_id, target_name=name, properties={"line": line}
            )
            for name, line in calls.items()
        )
    imports = list(dict.fromkeys(_import_name(node, source) for node in found.imports))
    relations.extend(
        CodeRelation(type=RelationType.IMPORTS, source_id=rel_path, target_name=name)
        for name in imports
        if name
    )
    relations.extend(_inherits(found.inherits, innermost, ordered, source))
    return FileIndex(
        path=rel_path,
        language=language,
        content_hash=hashlib.sha256(source).hexdigest(),
        line_count=source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0),
        units=units,
        relations=relations,
        imports=[name for name in imports if name],
        parse_errors=max(stream.error_nodes, 1 if root.has_error else 0),
    )


def _build_units(
    ordered: list[Container],
    source: bytes,
    rel_path: str,
    language: str,
    comment_docs: bool,
    stream: TokenStream,
) -> list[CodeUnit]:
    units: list[CodeUnit] = []
    used: set[str] = set()
    doc_nodes: dict[int, Node | None] = {}
    if not comment_docs:  # docstrings are documentation: like comments, not part of a clone's code
        doc_nodes = {id(c): python_docstring_node(c.node) for c in ordered if c.kind is not None}
        stream.drop_tokens_at({n.start_byte for n in doc_nodes.values() if n is not None})
    shingler = Shingler(stream)
    for c in ordered:
        if c.kind is None:
            continue
        node, outer = c.node, outer_node(c.node)
        start_line = outer.start_point.row + 1
        c.unit_id = unit_id(rel_path, c.qualified_name, c.kind.value)
        if c.unit_id in used:  # overloads, property setters: same name, told apart by line
            c.unit_id = unit_id(rel_path, c.qualified_name, c.kind.value, start_line)
        used.add(c.unit_id)
        doc = comment_docstring(outer, source) if comment_docs else python_docstring(doc_nodes[id(c)], source)
        units.append(
            CodeUnit(
                id=c.unit_id,
                name=c.name,
                qualified_name=c.qualified_name,
                kind=c.kind,
                subkind=None if c.tag in ("class", "function", "method") else c.tag,
                signature=signature(node, outer, source),
                docstring=doc,
                file_path=rel_path,
                start_line=start_line,
                end_line=outer.end_point.row + 1,
                language=language,
                body_hash=hashlib.sha256(source[outer.start_byte : outer.end_byte]).hexdigest(),
                normalized_hash=stream.normalized_hash(node.start_byte, node.end_byte),
                identifiers=stream.identifier_parts(node.start_byte, node.end_byte),
                parent=c.parent_name,
                calls=list(c.calls),
                shingles=shingler.unit(node.start_byte, node.end_byte).encode(),
            )
        )
    return units


def _class_units(ordered: list[Container]) -> dict[str, Container]:
    by_name: dict[str, Container] = {}
    for c in ordered:
        if c.kind is UnitKind.CLASS:
            by_name.setdefault(c.qualified_name, c)
    return by_name


def _contains(ordered: list[Container], rel_path: str) -> list[CodeRelation]:
    """File → top-level units, class → methods, function → nested functions."""
    classes = _class_units(ordered)
    relations = []
    for c in ordered:
        if c.kind is None:
            continue
        holder = c.parent if c.parent is not None and c.parent.kind is not None else None
        if holder is None and c.parent_name is not None:  # Go receivers, impl blocks, Foo::bar
            holder = classes.get(c.parent_name)
        source_id = holder.unit_id if holder is not None else rel_path
        relations.append(CodeRelation(type=RelationType.CONTAINS, source_id=source_id, target_id=c.unit_id))
    return relations


def _inherits(
    nodes: list[Node],
    innermost: Callable[[Node], Container | None],
    ordered: list[Container],
    source: bytes,
) -> list[CodeRelation]:
    classes = _class_units(ordered)
    relations: dict[tuple[str, str], CodeRelation] = {}
    for node in nodes:
        owner = innermost(node)
        if owner is not None and owner.tag == "impl":
            owner = classes.get(owner.qualified_name)  # impl Trait for Type: Type inherits Trait
        if owner is None or owner.kind is not UnitKind.CLASS:
            continue
        base = type_name(node_text(node, source))
        if base and (owner.unit_id, base) not in relations:
            relations[(owner.unit_id, base)] = CodeRelation(
                type=RelationType.INHERITS, source_id=owner.unit_id, target_name=base
            )
    return list(relations.values())


def _import_name(node: Node, source: bytes) -> str:
    """The module an import names: quotes, Rust use-lists and aliases stripped."""
    text = node_text(node, source).strip().strip("\"'<>`")
    text = text.split("::{")[0].split("{")[0]
    text = re.sub(r"(?<!\s)\s+as\s+\w+$", "", text)  # look-behind: linear on long blanks
    return text.removesuffix("::*").removesuffix(".*").strip()
