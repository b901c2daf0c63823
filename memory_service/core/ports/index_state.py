"""The code index's state port: what was indexed, file by file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass
class IndexedFile:
    """What the index knows of one source file: its content hash and the parse it produced.

    ``path`` is the file's key (relative to the project root, or absolute outside it);
    ``data`` is the indexer's FileIndex as JSON, kept so that cross-file names can be resolved
    again when only some files change.
    """

    path: str
    root: str
    language: str
    content_hash: str
    indexed_at: str
    units: int = 0
    parse_errors: int = 0
    data: dict[str, Any] | None = None


@runtime_checkable
class IndexState(Protocol):
    """Per-file bookkeeping of the code index (incremental reindex by content hash)."""

    def get(self, path: str) -> IndexedFile | None: ...

    def list(self, root: str | None = None, *, with_data: bool = False) -> list[IndexedFile]: ...

    def put(self, files: Sequence[IndexedFile]) -> None: ...

    def delete(self, paths: Sequence[str]) -> None: ...

    def totals(self) -> dict[str, Any]:
        """files, languages {name: files}, last_indexed (ISO or None)."""
        ...

    def close(self) -> None: ...
