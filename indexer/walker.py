"""Which files of a project to index, and why the others are not.

Every file and pruned directory is reported with a `SkipReason` (or None when it should be
parsed), so that a caller can count skips by reason and show the user why something is missing
from the index instead of silently dropping it. ``.gitignore`` files (root and nested) follow
git's rules via `pathspec`'s GitIgnoreSpec: negation, directory-only patterns, anchoring, ``**``;
as in git, a file inside an ignored directory cannot be re-included, because the directory is
pruned before its contents are seen.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from enum import StrEnum
from fnmatch import fnmatch
from pathlib import Path
from typing import NamedTuple

from pathspec import GitIgnoreSpec

from indexer.languages import language_for_path


class SkipReason(StrEnum):
    """Why a file (or a whole directory, reported once) is not indexed."""

    GITIGNORED = "gitignored"
    EXCLUDED = "excluded"  # exclude_globs matched, or include_globs given and none matched
    VENDORED = "vendored"  # node_modules, vendor, virtualenvs, build output...
    GENERATED = "generated"  # *.min.js, *_pb2.py, "Code generated ... DO NOT EDIT", @generated
    BINARY = "binary"
    TOO_LARGE = "too_large"
    UNSUPPORTED = "unsupported"  # no grammar for the extension
    SYMLINK = "symlink"  # not followed: avoids cycles and files outside the project
    UNREADABLE = "unreadable"


class WalkEntry(NamedTuple):
    """One walked path. `skipped` is None for a file to parse; `language` is then set."""

    path: Path
    skipped: SkipReason | None
    language: str | None = None


DEFAULT_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "vendor",
        "third_party",
        "third-party",
        ".venv",
        "venv",
        "__pycache__",
        "site-packages",
        "dist",
        "build",
        "target",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        ".next",
        ".nuxt",
        ".gradle",
    }
)
_GENERATED_NAMES = (
    "*.min.js",
    "*.min.mjs",
    "*-min.js",
    "*.bundle.js",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.pb.cc",
    "*.pb.h",
)
# Only comment lines count, so code or docs that merely mention the markers are still indexed.
_GENERATED_HEADER = re.compile(
    rb"^[ \t]*(?://|#|/\*|\*|--)[^\n]*(?:\bgenerated\b[^\n]*\bdo not edit\b|@generated\b)",
    re.IGNORECASE | re.MULTILINE,
)
_HEAD_BYTES = 8192


def iter_source_files(
    root: Path,
    include_globs: Iterable[str] | None = None,
    exclude_globs: Iterable[str] | None = None,
    max_file_bytes: int = 1_000_000,
    skip_dirs: frozenset[str] = DEFAULT_SKIP_DIRS,
) -> Iterator[WalkEntry]:
    """Walk `root` in sorted order, yielding every file and every pruned directory.

    Args:
        root: Project root; `.gitignore` files at and below it are honoured.
        include_globs: Gitignore-style patterns relative to root; when given, only files
            matching one are indexed (e.g. ``["src/**/*.py"]``).
        exclude_globs: Gitignore-style patterns relative to root to leave out (``tests/``).
        max_file_bytes: Larger files are skipped as TOO_LARGE (minified or data-like).
        skip_dirs: Directory names pruned anywhere as VENDORED.
    """
    root = root.resolve()
    include = GitIgnoreSpec.from_lines(include_globs) if include_globs else None
    exclude = GitIgnoreSpec.from_lines(exclude_globs) if exclude_globs else None
    root_lines = _read_lines(root / ".git" / "info" / "exclude")
    yield from _walk(root, "", [], root_lines, include, exclude, max_file_bytes, skip_dirs)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, GitIgnoreSpec]]) -> bool:
    """Git's rule: the deepest .gitignore with a matching pattern decides, its last match wins."""
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(f"{sub}/" if is_dir else sub)
        if result.include is not None:
            return bool(result.include)
    return False


def _walk(
    directory: Path,
    rel_dir: str,
    specs: list[tuple[str, GitIgnoreSpec]],
    extra_lines: list[str],
    include: GitIgnoreSpec | None,
    exclude: GitIgnoreSpec | None,
    max_file_bytes: int,
    skip_dirs: frozenset[str],
) -> Iterator[WalkEntry]:
    lines = extra_lines + _read_lines(directory / ".gitignore")
    if lines:
        specs = [*specs, (rel_dir, GitIgnoreSpec.from_lines(lines))]
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        yield WalkEntry(directory, SkipReason.UNREADABLE)
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        path = Path(entry.path)
        if entry.is_symlink():
            yield WalkEntry(path, SkipReason.SYMLINK)
        elif entry.is_dir():
            if entry.name in skip_dirs or entry.name.endswith(".egg-info") or (path / "pyvenv.cfg").exists():
                yield WalkEntry(path, SkipReason.VENDORED)
            elif _ignored(rel, True, specs):
                yield WalkEntry(path, SkipReason.GITIGNORED)
            elif exclude is not None and exclude.match_file(f"{rel}/"):
                yield WalkEntry(path, SkipReason.EXCLUDED)
            else:
                yield from _walk(path, rel, specs, [], include, exclude, max_file_bytes, skip_dirs)
        else:
            yield _check_file(entry, path, rel, specs, include, exclude, max_file_bytes)


def _check_file(
    entry: os.DirEntry[str],
    path: Path,
    rel: str,
    specs: list[tuple[str, GitIgnoreSpec]],
    include: GitIgnoreSpec | None,
    exclude: GitIgnoreSpec | None,
    max_file_bytes: int,
) -> WalkEntry:
    """Cheap checks first (names, size), then the first 8 KB (NUL bytes, generated headers)."""
    if _ignored(rel, False, specs):
        return WalkEntry(path, SkipReason.GITIGNORED)
    if (exclude is not None and exclude.match_file(rel)) or (
        include is not None and not include.match_file(rel)
    ):
        return WalkEntry(path, SkipReason.EXCLUDED)
    language = language_for_path(entry.name)
    if language is None:
        return WalkEntry(path, SkipReason.UNSUPPORTED)
    if any(fnmatch(entry.name, pattern) for pattern in _GENERATED_NAMES):
        return WalkEntry(path, SkipReason.GENERATED, language)
    try:
        if entry.stat().st_size > max_file_bytes:
            return WalkEntry(path, SkipReason.TOO_LARGE, language)
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return WalkEntry(path, SkipReason.UNREADABLE, language)
    if b"\x00" in head:
        return WalkEntry(path, SkipReason.BINARY, language)
    if _GENERATED_HEADER.search(head, 0, 2048):
        return WalkEntry(path, SkipReason.GENERATED, language)
    return WalkEntry(path, None, language)
