"""The one read path: regular files under a root only, never blocking, never through a symlink."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from indexer.safe_read import FileTooLarge, NotRegularFile, OutsideRoot, open_source, read_source
from tests.fifo_guard import fifo_guard


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """root/pkg/mod.py inside the project, and outside/pkg/mod.py with other content."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    for base, text in ((root, "def inside(): pass\n"), (outside, "def secret(): pass\n")):
        (base / "pkg").mkdir(parents=True)
        (base / "pkg" / "mod.py").write_text(text)
    return root, outside


def test_reads_a_regular_file_under_its_root(tmp_path: Path) -> None:
    root, _ = _project(tmp_path)
    assert read_source(root / "pkg" / "mod.py", [root], max_bytes=1000) == b"def inside(): pass\n"
    assert read_source(root / "pkg" / "mod.py", [root], max_bytes=1000, head=3) == b"def"


def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_followed(tmp_path: Path) -> None:
    root, outside = _project(tmp_path)
    path = root / "pkg" / "mod.py"
    assert path.resolve().is_relative_to(root)  # the check a caller makes first passes...
    (root / "pkg").rename(root / "pkg.old")  # ...then the directory is swapped for a symlink
    (root / "pkg").symlink_to(outside / "pkg", target_is_directory=True)
    assert path.read_bytes() == b"def secret(): pass\n"  # a plain open would read outside
    with pytest.raises(OutsideRoot, match="'pkg' is a symlink"):
        read_source(path, [root], max_bytes=1000)


def test_a_file_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
    root, outside = _project(tmp_path)
    path = root / "pkg" / "mod.py"
    path.unlink()
    path.symlink_to(outside / "pkg" / "mod.py")
    with pytest.raises(OutsideRoot):
        open_source(path, [root])


def test_paths_outside_every_root_are_refused_even_through_dotdot(tmp_path: Path) -> None:
    root, outside = _project(tmp_path)
    with pytest.raises(OutsideRoot, match="not under an allowed root"):
        read_source(root / ".." / "outside" / "pkg" / "mod.py", [root], max_bytes=1000)
    assert read_source(outside / "pkg" / "mod.py", [root, outside], max_bytes=1000)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    with fifo_guard(fifo) as unblocked, pytest.raises(NotRegularFile, match="FIFO") as info:
        read_source(fifo, [tmp_path], max_bytes=1000)
    assert unblocked == []
    assert info.value.kind == "FIFO (named pipe)"


def test_sockets_directories_and_devices_are_refused(tmp_path: Path) -> None:
    sock_path = tmp_path / "s.py"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(NotRegularFile, match="socket"):
            read_source(sock_path, [tmp_path], max_bytes=1000)
    (tmp_path / "d.py").mkdir()
    with pytest.raises(NotRegularFile, match="directory"):
        read_source(tmp_path / "d.py", [tmp_path], max_bytes=1000)
    try:
        os.mknod(tmp_path / "null.py", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("not applicable: creating a device file needs CAP_MKNOD (run as root)")
    with pytest.raises(NotRegularFile, match="character device"):
        read_source(tmp_path / "null.py", [tmp_path], max_bytes=1000)


def test_files_over_the_limit_are_refused(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(b"x" * 1001)
    with pytest.raises(FileTooLarge) as info:
        read_source(tmp_path / "big.py", [tmp_path], max_bytes=1000)
    assert (info.value.size, info.value.limit) == (1001, 1000)
    assert read_source(tmp_path / "big.py", [tmp_path], max_bytes=1001) == b"x" * 1001
