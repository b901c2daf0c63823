"""The manifest of a backup (``manifest.json``): what it holds, and the checks made before a
restore writes anything.

A backup is refused when it cannot be restored whole: no manifest, another format or version,
a listed file missing, of another size or hash, a file the manifest does not list, or a path
that would land outside the data directory. Each error names the file.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path, PurePosixPath
from typing import Any

from memory_service.backup.files import FileEntry, walk
from memory_service.core.errors import ValidationError

MANIFEST = "manifest.json"
FORMAT = "memory-service-backup"
FORMAT_VERSION = 1
SQLITE_FILE = "local.sqlite3"
_FIX = "Restore from another backup, or make a new one with memory-cli backup."


def damaged(message: str, code: str, suggestion: str = _FIX, **details: Any) -> ValidationError:
    return ValidationError(message, code=code, details=details, suggestion=suggestion)


def build(header: dict[str, Any], dirs: list[str], files: list[FileEntry]) -> dict[str, Any]:
    """The manifest: ``header`` (versions, settings, counts) plus every folder and file."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        **header,
        "directories": dirs,
        "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in files],
    }


def write(backup_dir: Path, manifest: dict[str, Any]) -> None:
    (backup_dir / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")


def read(backup_dir: Path) -> dict[str, Any]:
    """The manifest of ``backup_dir``, checked for format, version and shape."""
    path = backup_dir / MANIFEST
    if not backup_dir.is_dir():
        raise damaged(
            f"No backup at {backup_dir}: not a directory",
            "VAL_BACKUP_NOT_FOUND",
            "Give the directory memory-cli backup wrote.",
            path=str(backup_dir),
        )
    if not path.is_file():
        raise damaged(
            f"The backup at {backup_dir} has no {MANIFEST}: it is partial or not a backup",
            "VAL_BACKUP_MANIFEST_MISSING",
            file=MANIFEST,
        )
    try:
        manifest = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise damaged(
            f"{MANIFEST} is not valid JSON: {exc}", "VAL_BACKUP_MANIFEST_INVALID", file=MANIFEST
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise damaged(
            f"{MANIFEST} is not a memory-service backup manifest",
            "VAL_BACKUP_MANIFEST_INVALID",
            file=MANIFEST,
        )
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise damaged(
            f"The backup has format version {version!r}; this memory-service reads version {FORMAT_VERSION}",
            "VAL_BACKUP_VERSION",
            f"Restore it with the memory-service version that wrote it "
            f"({manifest.get('memory_service_version', 'unknown')}), then export and import.",
            file=MANIFEST,
            provided=version,
            allowed=[FORMAT_VERSION],
        )
    if not isinstance(manifest.get("files"), list) or not isinstance(manifest.get("directories"), list):
        raise damaged(f"{MANIFEST} lists no files", "VAL_BACKUP_MANIFEST_INVALID", file=MANIFEST)
    return manifest


def entries(manifest: dict[str, Any]) -> list[FileEntry]:
    """The listed files, each path checked to stay inside the tree it is restored into."""
    out = []
    for item in manifest["files"]:
        try:
            entry = FileEntry(path=str(item["path"]), size=int(item["size"]), sha256=str(item["sha256"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise damaged(
                f"{MANIFEST} has a malformed file entry: {item!r}",
                "VAL_BACKUP_MANIFEST_INVALID",
                file=MANIFEST,
            ) from exc
        safe_path(entry.path)
        out.append(entry)
    for d in manifest["directories"]:
        safe_path(str(d))
    return out


def safe_path(rel: str) -> None:
    p = PurePosixPath(rel)
    if not rel or p.is_absolute() or ".." in p.parts or rel in (MANIFEST, ".") or "\\" in rel:
        raise damaged(
            f"{MANIFEST} lists '{rel}', a path outside the data directory",
            "VAL_BACKUP_MANIFEST_INVALID",
            file=rel,
        )


def check_listing(backup_dir: Path, manifest: dict[str, Any]) -> list[FileEntry]:
    """Every listed file present with its size, and nothing unlisted (hashes are checked as
    the files are copied). Returns the entries."""
    listed = entries(manifest)
    names = {e.path for e in listed}
    _, present = walk(backup_dir, skip=frozenset({MANIFEST}))
    for entry in listed:
        path = backup_dir / entry.path
        if not path.is_file():
            raise damaged(
                f"The backup is missing '{entry.path}' (listed in {MANIFEST})",
                "VAL_BACKUP_FILE_MISSING",
                file=entry.path,
            )
        size = path.stat().st_size
        if size != entry.size:
            raise damaged(
                f"'{entry.path}' is {size} bytes; the manifest says {entry.size}: the file is damaged",
                "VAL_BACKUP_FILE_SIZE",
                file=entry.path,
                expected=entry.size,
                found=size,
            )
    for extra in present:
        if extra not in names:
            raise damaged(
                f"The backup holds '{extra}', which {MANIFEST} does not list",
                "VAL_BACKUP_FILE_UNKNOWN",
                "Remove that file from the backup directory if you added it; otherwise the backup "
                "was altered: restore from another one.",
                file=extra,
            )
    return listed


def hash_mismatch(entry: FileEntry, found: str) -> ValidationError:
    return damaged(
        f"'{entry.path}' does not match its SHA-256 in {MANIFEST}: the file is damaged",
        "VAL_BACKUP_CHECKSUM",
        file=entry.path,
        expected=entry.sha256,
        found=found,
    )


def sqlite_rows(db_file: Path) -> dict[str, int]:
    """Rows per table of a closed SQLite file (read-only, no journal files created)."""
    if not db_file.is_file():
        return {}
    conn = sqlite3.connect(f"{db_file.resolve().as_uri()}?immutable=1", uri=True)
    try:
        tables = [
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


def differences(expected: Any, found: Any, prefix: str = "", *, only_expected: bool = False) -> list[str]:
    """Where two count trees differ, as ``a.b: expected X, found Y`` lines. ``only_expected``
    (a backup of another version) skips figures the backup did not record."""
    if isinstance(expected, dict) and isinstance(found, dict):
        keys = set(expected) if only_expected else set(expected) | set(found)
        out: list[str] = []
        for key in sorted(keys):
            out += differences(
                expected.get(key), found.get(key), f"{prefix}{key}.", only_expected=only_expected
            )
        return out
    return [] if expected == found else [f"{prefix.rstrip('.')}: expected {expected}, found {found}"]
