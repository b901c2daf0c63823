"""Plain domain objects produced by the indexer.

Pure pydantic with no store or embedding logic: the service layer maps them to its own records
and graph nodes. Ids are readable strings (``path::Qualified.name#kind``) rather than UUIDs so
that they are stable across runs, diff well in tests, and can be turned into a store's key
format (e.g. uuid5) by the caller.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class UnitKind(StrEnum):
    """What a code unit is. Interfaces, structs, enums, traits... are classes with a subkind."""

    FUNCTION = "function"
    METHOD = "method"
    CLASS = "class"


class RelationType(StrEnum):
    """The edges the indexer emits."""

    CONTAINS = "CONTAINS"
    CALLS = "CALLS"
    IMPORTS = "IMPORTS"
    INHERITS = "INHERITS"


def unit_id(file_path: str, qualified_name: str, kind: str, start_line: int | None = None) -> str:
    """The stable id of a unit; the start line is added only to tell overloads apart."""
    base = f"{file_path}::{qualified_name}#{kind}"
    return f"{base}@L{start_line}" if start_line is not None else base


class CodeUnit(BaseModel):
    """A function, method or class-like definition.

    Attributes:
        id: Stable id from file path, qualified name and kind (see `unit_id`).
        qualified_name: Dotted path inside the file (``Inventory.add``, ``geo.Circle.area``).
        subkind: The language construct for class-kind units (interface, struct, enum, trait...).
        signature: Header text up to the body, whitespace-normalised.
        docstring: Python docstring, or the comment block right above the definition.
        start_line / end_line: 1-based and inclusive, decorators and `export` included.
        body_hash: SHA-256 of the unit's exact source text: exact-change detection.
        normalized_hash: SHA-256 of the token stream with identifiers and literals abstracted
            and comments dropped: equal for clones that only rename or change constants.
        identifiers: Distinct lower-case words of the identifiers used, for lexical search.
        parent: Qualified name of the enclosing class (or function, for nested functions).
        calls: Names called directly inside the unit (not inside nested units).
        shingles: The unit's token-gram hashes for near-miss clone detection, packed
            (`indexer.shingles.Shingles.encode`); not dumped: stores keep them apart.
    """

    id: str
    name: str
    qualified_name: str
    kind: UnitKind
    subkind: str | None = None
    signature: str
    docstring: str | None = None
    file_path: str
    start_line: int
    end_line: int
    language: str
    body_hash: str
    normalized_hash: str
    identifiers: list[str] = Field(default_factory=list)
    parent: str | None = None
    calls: list[str] = Field(default_factory=list)
    shingles: bytes = Field(default=b"", exclude=True, repr=False)


class CodeRelation(BaseModel):
    """A directed edge. File-level edges use the file's path as `source_id`.

    Unresolved edges (call or base-class names found in one file) carry only `target_name`;
    `resolve_calls` / `resolve_inherits` turn them into edges with a `target_id`.
    """

    type: RelationType
    source_id: str
    target_id: str | None = None
    target_name: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)


class FileIndex(BaseModel):
    """Everything extracted from one source file.

    Attributes:
        path: Path relative to the project root, with forward slashes; also the file's node id.
        content_hash: SHA-256 of the file bytes: unchanged files are skipped on reindex.
        imports: Imported module names as written (``os.path``, ``./util``, ``fmt``).
        parse_errors: Number of ERROR/MISSING nodes; the units are still those that parsed.
    """

    path: str
    language: str
    content_hash: str
    line_count: int
    units: list[CodeUnit] = Field(default_factory=list)
    relations: list[CodeRelation] = Field(default_factory=list)
    imports: list[str] = Field(default_factory=list)
    parse_errors: int = 0

    @property
    def id(self) -> str:
        """The file's node id in relations: its relative path."""
        return self.path

    @property
    def has_parse_errors(self) -> bool:
        return self.parse_errors > 0


_EMBED_MAX_CHARS = 900  # ~256 tokens of code-ish text for a MiniLM-sized model


def embedding_text(unit: CodeUnit, max_chars: int = _EMBED_MAX_CHARS) -> str:
    """Short, information-dense text to embed for a unit.

    The body itself is left out: models with a 256-token window would only see its first lines,
    while the signature, the docstring's opening and the identifier words summarise all of it.
    """
    head = f"{unit.language} {unit.subkind or unit.kind.value} {unit.qualified_name}"
    parts = [head, unit.signature]
    if unit.docstring:
        parts.append(" ".join(unit.docstring.split())[:400])
    text = "\n".join(parts)
    if unit.identifiers and len(text) < max_chars:
        words: list[str] = []
        budget = max_chars - len(text) - 1
        for word in unit.identifiers:
            budget -= len(word) + 1
            if budget < 0:
                break
            words.append(word)
        if words:
            text += "\n" + " ".join(words)
    return text[:max_chars]
