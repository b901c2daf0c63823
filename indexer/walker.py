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
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from fnmatch import fnmatch
from pathlib import Path
from typing import NamedTuple

from pathspec import GitIgnoreSpec

from indexer.languages import language_for_path
from indexer.safe_read import FileTooLarge, NotRegularFile, OutsideRoot, open_dir, read_source


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
    SPECIAL = "special"  # a FIFO, socket or device: never opened (a FIFO would block the walk)
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
_IGNORE_FILE_BYTES = 16_000_000  # a .gitignore is never source; dropping a big one would index too much


def iter_source_files(
    root: Path,
    include_globs: Iterable[str] | None = None,
    exclude_globs: Iterable[str] | None = None,
    max_file_bytes: int = 1_000_000,
    skip_dirs: frozenset[str] = DEFAULT_SKIP_DIRS,
    roots: Sequence[Path] | None = None,
) -> Iterator[WalkEntry]:
    """Walk `root` in sorted order, yielding every file and every pruned directory.

    Directories are listed and files sniffed through `indexer.safe_read`, so a directory swapped
    for a symlink mid-walk is skipped (SYMLINK), not followed, and a FIFO is never opened.

    Args:
        root: Project root; `.gitignore` files at and below it are honoured.
        include_globs: Gitignore-style patterns relative to root; when given, only files
            matching one are indexed (e.g. ``["src/**/*.py"]``).
        exclude_globs: Gitignore-style patterns relative to root to leave out (``tests/``).
        max_file_bytes: Larger files are skipped as TOO_LARGE (minified or data-like).
        skip_dirs: Directory names pruned anywhere as VENDORED.
        roots: Resolved directories the walk may read in (the caller's allowed roots);
            default: `root` itself.

    Raises:
        InvalidGlobError: A pattern in `include_globs` or `exclude_globs` does not compile.
    """
    root = root.resolve()
    rules = _Rules(
        compile_globs(include_globs),
        compile_globs(exclude_globs),
        max_file_bytes,
        skip_dirs,
        tuple(roots) if roots is not None else (root,),
    )
    if not any(root.is_relative_to(r) for r in rules.roots):  # e.g. swapped for a symlink
        yield WalkEntry(root, SkipReason.SYMLINK)
        return
    root_lines = _read_lines(root / ".git" / "info" / "exclude", rules.roots)
    yield from _walk(root, "", [], root_lines, rules)


class InvalidGlobError(ValueError):
    """A gitignore-style pattern that does not compile; `pattern` says which."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"invalid pattern {pattern!r}: {reason}")
        self.pattern = pattern
        self.reason = reason


def compile_globs(patterns: Iterable[str] | None) -> GitIgnoreSpec | None:
    """The patterns as one spec (None when there are none), or `InvalidGlobError` for a bad one."""
    if not patterns:
        return None
    patterns = list(patterns)
    for pattern in patterns:  # one at a time, to name the culprit
        try:
            GitIgnoreSpec.from_lines([pattern])
        except (ValueError, re.error) as exc:
            raise InvalidGlobError(pattern, str(exc)) from None
    return GitIgnoreSpec.from_lines(patterns)


def skip_reason(exc: OSError) -> SkipReason:
    """Why a file that `read_source` refused (or failed to read) is skipped."""
    if isinstance(exc, FileTooLarge):
        return SkipReason.TOO_LARGE
    if isinstance(exc, NotRegularFile):
        return SkipReason.SPECIAL
    if isinstance(exc, OutsideRoot):
        return SkipReason.SYMLINK
    return SkipReason.UNREADABLE


class _Rules(NamedTuple):
    """What stays the same for a whole walk."""

    include: GitIgnoreSpec | None
    exclude: GitIgnoreSpec | None
    max_file_bytes: int
    skip_dirs: frozenset[str]
    roots: tuple[Path, ...]


def _read_lines(path: Path, roots: Sequence[Path]) -> list[str]:
    try:
        raw = read_source(path, roots, max_bytes=_IGNORE_FILE_BYTES)
    except OSError:
        return []
    return raw.decode("utf-8", errors="replace").splitlines()


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, GitIgnoreSpec]]) -> bool:
    """Git's rule: the deepest .gitignore with a matching pattern decides, its last match wins."""
    for base, spec in reversed(specs):
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check_file(f"{sub}/" if is_dir else sub)
        if result.include is not None:
            return bool(result.include)
    return False


def _list(directory: Path, roots: Sequence[Path]) -> list[tuple[str, str]]:
    """(name, kind) of each entry, sorted; kind is "symlink", "dir", "file" or "special".

    The directory is opened by descriptor without following links, and the kinds are taken
    while it is open, so what is listed is the directory that was checked.
    """
    fd = open_dir(directory, roots)
    try:
        with os.scandir(fd) as entries:
            return sorted((entry.name, _kind(entry)) for entry in entries)
    finally:
        os.close(fd)


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    return "file" if entry.is_file(follow_symlinks=False) else "special"


def _walk(
    directory: Path,
    rel_dir: str,
    specs: list[tuple[str, GitIgnoreSpec]],
    extra_lines: list[str],
    rules: _Rules,
) -> Iterator[WalkEntry]:
    try:
        entries = _list(directory, rules.roots)
    except OSError as exc:
        yield WalkEntry(directory, skip_reason(exc))  # SYMLINK when it was swapped for one
        return
    lines = extra_lines + _read_lines(directory / ".gitignore", rules.roots)
    if lines:
        specs = [*specs, (rel_dir, GitIgnoreSpec.from_lines(lines))]
    for name, kind in entries:
        rel = f"{rel_dir}/{name}" if rel_dir else name
        path = directory / name
        if kind == "symlink":
            yield WalkEntry(path, SkipReason.SYMLINK)
        elif kind == "dir":
            if name in rules.skip_dirs or name.endswith(".egg-info") or (path / "pyvenv.cfg").exists():
                yield WalkEntry(path, SkipReason.VENDORED)
            elif _ignored(rel, True, specs):
                yield WalkEntry(path, SkipReason.GITIGNORED)
            elif rules.exclude is not None and rules.exclude.match_file(f"{rel}/"):
                yield WalkEntry(path, SkipReason.EXCLUDED)
            else:
                yield from _walk(path, rel, specs, [], rules)
        else:
            yield _check_file(path, rel, kind == "special", specs, rules)


def _check_file(
    path: Path, rel: str, special: bool, specs: list[tuple[str, GitIgnoreSpec]], rules: _Rules
) -> WalkEntry:
    """Cheap checks first (names, type), then the first 8 KB (size, NUL bytes, generated headers)."""
    if _ignored(rel, False, specs):
        return WalkEntry(path, SkipReason.GITIGNORED)
    if (rules.exclude is not None and rules.exclude.match_file(rel)) or (
        rules.include is not None and not rules.include.match_file(rel)
    ):
        return WalkEntry(path, SkipReason.EXCLUDED)
    language = language_for_path(path.name)
    if language is None:
        return WalkEntry(path, SkipReason.UNSUPPORTED)
    if any(fnmatch(path.name, pattern) for pattern in _GENERATED_NAMES):
        return WalkEntry(path, SkipReason.GENERATED, language)
    if special:
        return WalkEntry(path, SkipReason.SPECIAL, language)
    try:
        head = read_source(path, rules.roots, max_bytes=rules.max_file_bytes, head=_HEAD_BYTES)
    except OSError as exc:
        return WalkEntry(path, skip_reason(exc), language)
    if b"\x00" in head:
        return WalkEntry(path, SkipReason.BINARY, language)
    if _GENERATED_HEADER.search(head, 0, 2048):
        return WalkEntry(path, SkipReason.GENERATED, language)
    return WalkEntry(path, None, language)
