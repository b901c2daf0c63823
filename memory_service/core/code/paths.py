"""Which paths the indexer may read: the project root and the configured roots, nothing else.

Paths are resolved (``..`` and symlinks followed) before the check, so neither can escape.
Files are keyed by their path relative to the project root; files under another allowed root
are keyed by their absolute path. A path the operating system cannot take (a NUL byte, a name
over NAME_MAX, a path over PATH_MAX) is a validation error, never an ``OSError``. Reading goes
through `indexer.safe_read`, which re-checks at open time what `resolve` checked: the file is
still regular, under a root and reached without a symlink, and within the size limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Literal

from indexer.safe_read import FileTooLarge, NotRegularFile, OutsideRoot, file_kind, read_source
from memory_service.core.errors import NotFoundError, ValidationError

# Linux's limits (ext4, xfs, btrfs, tmpfs): a name of 255 bytes, a path of 4096 bytes with its NUL.
NAME_MAX = 255
PATH_MAX = 4096
_ECHO_CHARS = 80  # what an error repeats of a provided path


class PathPolicy:
    def __init__(
        self, project_root: Path, allowed_roots: list[Path], max_file_bytes: int = 1_000_000
    ) -> None:
        self.project_root = project_root.resolve()
        self.roots = [self.project_root, *(r.resolve() for r in allowed_roots)]
        self.max_file_bytes = max_file_bytes

    def resolve(self, raw: str, *, field: str, want: Literal["file", "dir"]) -> Path:
        """An existing file or directory inside an allowed root, or a seed-001 error saying why not."""
        path = self._inside(raw, field)
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(
                f"Path '{echo(raw)}' does not exist",
                code="NF_PATH",
                details={**_provided(raw, field), "resolved": echo(str(path))},
                suggestion="Check the spelling; relative paths are taken from the project root "
                f"({self.project_root}).",
            ) from None
        except OSError as exc:  # permission denied on the way, ENAMETOOLONG after a link...
            raise _invalid(raw, field, f"cannot be examined: {exc.strerror}") from None
        if want == "file" and stat.S_ISDIR(mode):
            raise ValidationError(
                f"'{echo(raw)}' is a directory, not a file",
                code="VAL_NOT_A_FILE",
                details=_provided(raw, field),
                suggestion="Use index_directory for directories (it runs as a background job).",
            )
        if want == "file" and not stat.S_ISREG(mode):
            raise not_regular(raw, field, file_kind(mode))
        if want == "dir" and not stat.S_ISDIR(mode):
            raise ValidationError(
                f"'{echo(raw)}' is a {file_kind(mode)}, not a directory",
                code="VAL_NOT_A_DIRECTORY",
                details=_provided(raw, field),
                suggestion="Use index_file for a single file.",
            )
        return path

    def make_dir(self, raw: str, *, field: str) -> Path:
        """A directory inside an allowed root, created (with its missing parents) when it does not
        exist yet; checked again once made, so a symlink swapped in meanwhile cannot lead out."""
        path = self._inside(raw, field)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file in the way, no permission, a read-only file system
            raise _invalid(raw, field, f"cannot be created: {exc.strerror}") from None
        return self.resolve(raw, field=field, want="dir")

    def _inside(self, raw: str, field: str) -> Path:
        """``raw`` resolved (``..`` and symlinks followed; it need not exist), if inside a root."""
        _check_syntax(raw, field)
        try:
            candidate = Path(raw).expanduser()
            if not candidate.is_absolute():
                candidate = self.project_root / candidate
            _check_length(raw, str(candidate), field)
            path = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # "~nobody/x", a symlink loop
            raise _invalid(raw, field, f"cannot be resolved: {exc}") from None
        if not any(path == root or path.is_relative_to(root) for root in self.roots):
            raise ValidationError(
                f"Path '{echo(raw)}' is outside the allowed roots",
                code="VAL_PATH_OUTSIDE_ROOTS",
                details={
                    **_provided(raw, field),
                    "resolved": echo(str(path)),
                    "allowed_roots": [str(r) for r in self.roots],
                },
                suggestion="Index files inside the project root, or add the directory to "
                "MEMORY_INDEXER__ALLOWED_ROOTS (a JSON list) and restart the server.",
            )
        return path

    def read(self, path: Path) -> bytes:
        """A walked file's bytes, through the one safe read path.

        Raises:
            indexer.safe_read.RefusedFile: not a regular file, not under a root, or too large.
            OSError: it could not be read.
        """
        return read_source(path, self.roots, max_bytes=self.max_file_bytes)

    def read_input(self, path: Path, raw: str, *, field: str) -> bytes:
        """The bytes of a file the caller named (``raw``, resolved to ``path``): refusals become
        seed-001 errors; other ``OSError`` propagate for the caller to report."""
        try:
            return self.read(path)
        except FileTooLarge as exc:
            raise ValidationError(
                f"'{echo(raw)}' is {exc.size:,} bytes, over the {exc.limit:,}-byte limit for source files",
                code="VAL_FILE_TOO_LARGE",
                details={**_provided(raw, field), "size_bytes": exc.size, "max_file_bytes": exc.limit},
                suggestion="Large files are usually generated or data; to index it anyway, raise "
                f"MEMORY_INDEXER__MAX_FILE_BYTES (now {exc.limit}) and restart the server.",
            ) from None
        except NotRegularFile as exc:
            raise not_regular(raw, field, exc.kind) from None
        except OutsideRoot as exc:
            raise ValidationError(
                f"'{echo(raw)}' was not read: {exc.strerror} (it changed after it was checked)",
                code="VAL_PATH_OUTSIDE_ROOTS",
                details={**_provided(raw, field), "allowed_roots": [str(r) for r in self.roots]},
                suggestion="Give the file's real path, with no symlink on the way, inside the "
                "project root or MEMORY_INDEXER__ALLOWED_ROOTS.",
            ) from None

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


def not_regular(raw: str, field: str, kind: str) -> ValidationError:
    return ValidationError(
        f"'{echo(raw)}' is a {kind}, not a regular file",
        code="VAL_NOT_REGULAR_FILE",
        details={**_provided(raw, field), "file_type": kind},
        suggestion="Give the path of a regular source file; FIFOs, sockets and devices are never read.",
    )


def _check_syntax(raw: str, field: str) -> None:
    """Refuse what no file system takes, before the operating system raises about it."""
    if "\x00" in raw:
        raise _invalid(raw, field, f"contains a NUL byte (at character {raw.index(chr(0))})")
    try:
        os.fsencode(raw)
    except UnicodeError:
        raise _invalid(raw, field, "contains characters that cannot be encoded (lone surrogates)") from None


def _check_length(raw: str, absolute: str, field: str) -> None:
    longest = max((len(os.fsencode(part)) for part in absolute.split("/")), default=0)
    if longest > NAME_MAX:
        problem = f"has a file or directory name of {longest} bytes, over the {NAME_MAX}-byte limit"
    elif (size := len(os.fsencode(absolute))) >= PATH_MAX:
        problem = f"is {size} bytes long (from the root), over the {PATH_MAX - 1}-byte limit"
    else:
        return
    raise ValidationError(
        f"Path '{echo(raw)}' {problem}",
        code="VAL_PATH_TOO_LONG",
        details={**_provided(raw, field), "name_max": NAME_MAX, "path_max": PATH_MAX - 1},
        suggestion=f"Use a path of real, shorter names: at most {NAME_MAX} bytes per name and "
        f"{PATH_MAX - 1} bytes in all; relative paths start at the project root.",
    )


def _invalid(raw: str, field: str, problem: str) -> ValidationError:
    return ValidationError(
        f"Path '{echo(raw)}' {problem}",
        code="VAL_INVALID_PATH",
        details=_provided(raw, field),
        suggestion="Give a plain file system path (absolute, or relative to the project root), "
        "without NUL bytes or control characters.",
    )


def _provided(raw: str, field: str) -> dict[str, Any]:
    return {"field": field, "provided": echo(raw), "length": len(raw)}


def echo(raw: str) -> str:
    """A printable prefix of ``raw``: control characters escaped, long input cut (length is in details)."""
    head = "".join(c if c.isprintable() else repr(c)[1:-1] for c in raw[:_ECHO_CHARS])
    return head + "…" if len(raw) > _ECHO_CHARS else head
