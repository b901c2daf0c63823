"""Tree-sitter code indexer: source files → plain `CodeUnit` / `CodeRelation` objects.

Pure parsing: nothing here knows about stores, embeddings or the MCP server, so the service layer
can run it in a worker thread or process and decide what to persist. Typical use::

    files = [parse_file(entry.path, root) for entry in iter_source_files(root) if entry.skipped is None]
    calls = resolve_calls(files)
"""

from indexer.languages import (
    UnsupportedLanguageError,
    language_for_path,
    supported_languages,
)
from indexer.models import (
    CodeRelation,
    CodeUnit,
    FileIndex,
    RelationType,
    UnitKind,
    embedding_text,
    unit_id,
)
from indexer.parser import parse_file, parse_source
from indexer.resolve import resolve_calls, resolve_inherits, resolve_relations
from indexer.tokens import split_identifier
from indexer.walker import SkipReason, WalkEntry, iter_source_files

__all__ = [
    "CodeRelation",
    "CodeUnit",
    "FileIndex",
    "RelationType",
    "SkipReason",
    "UnitKind",
    "UnsupportedLanguageError",
    "WalkEntry",
    "embedding_text",
    "iter_source_files",
    "language_for_path",
    "parse_file",
    "parse_source",
    "resolve_calls",
    "resolve_inherits",
    "resolve_relations",
    "split_identifier",
    "supported_languages",
    "unit_id",
]
