"""Which project a server serves, found from where it starts: git's top level, origin remote and
checked-out branch, else the folder's name; and the names derived from it (the data directory,
the collection prefix, graph namespace and key prefix). Settings fill their missing scope from here.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

# "setting": MEMORY_PROJECT (or an argument); "git remote" / "git folder": the repository's origin
# remote or top-level folder; "folder": no git repository, the folder the server started in;
# "default": neither, nor a folder with a usable name (the file system's root).
PROJECT_SOURCES = ("setting", "git remote", "git folder", "folder", "default")
DEFAULT_PROJECT = "default"


def folder_project(root: Path) -> str:
    """The project a folder outside git stands for: its name, or ``default`` when it has no name
    a scope can hold (the root, control characters, over 200 characters)."""
    name = root.name.strip()
    usable = name and len(name) <= 200 and name.isprintable() and name not in (".", "..")
    return name if usable else DEFAULT_PROJECT


def project_slug(project: str) -> str:
    """The project name as collection prefix, graph namespace and key prefix: letters, digits,
    ``-`` and ``_``, at most 48 characters (a longer name keeps 39 and a hash of the whole)."""
    slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in project) or "default"
    if len(slug) > 48:
        slug = f"{slug[:39]}-{hashlib.sha256(project.encode()).hexdigest()[:8]}"
    return slug


def default_data_dir(project: str, project_root: Path) -> Path:
    """``$XDG_DATA_HOME/memory-service/<project>-<hash of root>`` (two repos may share a name)."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    digest = hashlib.sha256(str(project_root).encode()).hexdigest()[:8]
    return base / "memory-service" / f"{project}-{digest}"


def git_toplevel(path: Path) -> Path | None:
    return _git(path, "rev-parse", "--show-toplevel", to_path=True)  # type: ignore[return-value]


def head_branch(root: Path) -> str | None:
    """The branch checked out in the git work tree at ``root``, read from ``.git/HEAD`` (a worktree's
    ``.git`` file points to its own HEAD): no process is started, so it can be asked often. None
    on a detached HEAD or when ``root`` is not a work tree's top level."""
    dot_git = root / ".git"
    try:
        if dot_git.is_file():  # a linked worktree or a submodule: "gitdir: <path>"
            target = dot_git.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
            dot_git = (root / target).resolve()
        head = (dot_git / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    prefix = "ref: refs/heads/"
    return head[len(prefix) :] if head.startswith(prefix) else None


def git_remote(path: Path) -> tuple[str | None, str | None]:
    """(org, project) of the ``origin`` remote: ``git@host:acme/shop.git`` → (acme, shop)."""
    url = _git(path, "config", "--get", "remote.origin.url")
    return parse_remote(str(url)) if url else (None, None)


def parse_remote(url: str) -> tuple[str | None, str | None]:
    """(org, project) of a git remote URL (ssh, scp-like or http; a path without org: (None, name))."""
    text = url.strip().rstrip("/")
    if text.endswith(".git"):
        text = text[:-4]
    if "://" in text:
        text = text.split("://", 1)[1].split("/", 1)[1] if "/" in text.split("://", 1)[1] else ""
    elif ":" in text and not text.startswith("/"):
        text = text.split(":", 1)[1]
    parts = [p for p in text.split("/") if p]
    if not parts:
        return None, None
    return (parts[-2] if len(parts) >= 2 else None), parts[-1]


def _git(path: Path, *args: str, to_path: bool = False) -> Path | str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    value = out.stdout.strip()
    return Path(value) if to_path else value
