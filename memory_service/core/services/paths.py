"""Which paths the indexer may read: the project root and the configured roots, nothing else.

Paths are resolved (``..`` and symlinks followed) before the check, so neither can escape.
Files are keyed by their path relative to the project root; files under another allowed root
are keyed by their absolute path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from memory_service.core.errors import NotFoundError, ValidationError


class PathPolicy:
    def __init__(
        self, project_root: Path, allowed_roots: list[Path], max_file_bytes: int = 1_000_000
    ) -> None:
        self.project_root = project_root.resolve()
        self.roots = [self.project_root, *(r.resolve() for r in allowed_roots)]
        self.max_file_bytes = max_file_bytes

    def resolve(self, raw: str, *, field: str, want: Literal["file", "dir"]) -> Path:
        """An existing file or directory inside an allowed root, or a seed-001 error saying why not."""
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.project_root / candidate
        path = candidate.resolve()
        if not any(path == root or path.is_relative_to(root) for root in self.roots):
            raise ValidationError(
                f"Path '{raw}' is outside the allowed roots",
                code="VAL_PATH_OUTSIDE_ROOTS",
                details={
                    "field": field,
                    "provided": raw,
                    "resolved": str(path),
                    "allowed_roots": [str(r) for r in self.roots],
                },
                suggestion="Index files inside the project root, or add the directory to "
                "MEMORY_INDEXER__ALLOWED_ROOTS (a JSON list) and restart the server.",
            )
        if not path.exists():
            raise NotFoundError(
                f"Path '{raw}' does not exist",
                code="NF_PATH",
                details={"field": field, "provided": raw, "resolved": str(path)},
                suggestion="Check the spelling; relative paths are taken from the project root "
                f"({self.project_root}).",
            )
        if want == "file" and not path.is_file():
            raise ValidationError(
                f"'{raw}' is a directory, not a file",
                code="VAL_NOT_A_FILE",
                details={"field": field, "provided": raw},
                suggestion="Use index_directory for directories (it runs as a background job).",
            )
        if want == "dir" and not path.is_dir():
            raise ValidationError(
                f"'{raw}' is a file, not a directory",
                code="VAL_NOT_A_DIRECTORY",
                details={"field": field, "provided": raw},
                suggestion="Use index_file for a single file.",
            )
        return path

    def key(self, path: Path) -> str:
        path = path.resolve()
        if path == self.project_root:
            return ""
        if path.is_relative_to(self.project_root):
            return path.relative_to(self.project_root).as_posix()
        return path.as_posix()

    def root_of(self, key: str) -> str:
        if not key.startswith("/"):
            return str(self.project_root)
        path = Path(key)
        for root in self.roots[1:]:
            if path.is_relative_to(root):
                return str(root)
        return str(self.project_root)
