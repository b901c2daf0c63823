"""Where the embedded (LadybugDB) graph keeps its files: one database file and its companions.

LadybugDB wants a file path: given a directory, the store opens ``graph.lbug`` in it. Beside the
database file the engine keeps ``<file>.wal`` and friends. The store (its size) and ``memory-cli
repair`` (``salvage``: moving a damaged graph aside) both find the files here, so they agree.
"""

from __future__ import annotations

from pathlib import Path

GRAPH_FILE = "graph.lbug"


def database_file(path: Path) -> Path:
    """``path`` itself, unless it is a directory: then ``graph.lbug`` in it."""
    return path / GRAPH_FILE if path.is_dir() else path


def graph_files(path: Path) -> list[Path]:
    """The database file and its companions (``.wal``, ``.shadow``, ...)."""
    if not path.parent.is_dir():
        return []
    return sorted(
        p for p in path.parent.iterdir() if p.name == path.name or p.name.startswith(path.name + ".")
    )
