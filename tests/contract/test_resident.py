"""memory_service.resident against the real kernel: paging out shared file mappings gives their
memory back and loses nothing; private mappings and other folders are left alone."""

from __future__ import annotations

import mmap
import re
import sys
from pathlib import Path

import pytest

from memory_service.resident import page_out, trim_heap
from tests.conftest import resident_kb

pytestmark = [
    pytest.mark.contract,
    pytest.mark.skipif(sys.platform != "linux", reason="not applicable: MADV_PAGEOUT is Linux's"),
]
SIZE = 8 * 1024 * 1024


def mapped(path: Path, flags: int) -> tuple[mmap.mmap, object]:
    path.write_bytes(b"\0" * SIZE)
    handle = path.open("r+b")
    view = mmap.mmap(handle.fileno(), SIZE, flags=flags)
    for offset in range(0, SIZE, mmap.PAGESIZE):  # fault every page in, dirty
        view[offset] = 7
    return view, handle


def test_shared_file_pages_are_given_back_and_their_writes_kept(tmp_path: Path) -> None:
    inside, outside = tmp_path / "store", tmp_path / "other"
    inside.mkdir(), outside.mkdir()
    shared, h1 = mapped(inside / "index.dat", mmap.MAP_SHARED)
    private, h2 = mapped(inside / "private.dat", mmap.MAP_PRIVATE)
    elsewhere, h3 = mapped(outside / "index.dat", mmap.MAP_SHARED)
    assert min(resident_kb(p) for p in (inside / "index.dat", inside / "private.dat")) > 7000
    advised = page_out(inside, re.compile(r"\.dat$"))
    assert advised == SIZE  # the shared mapping under the folder, not the private one
    assert resident_kb(inside / "index.dat") < 1000
    assert resident_kb(inside / "private.dat") > 7000  # copy-on-write pages: never dropped
    assert resident_kb(outside / "index.dat") > 7000  # not under the folder
    assert all(shared[o] == 7 for o in range(0, SIZE, 64 * mmap.PAGESIZE))  # faulted back in
    assert (inside / "index.dat").read_bytes()[mmap.PAGESIZE] == 7  # the writes reached the file
    assert page_out(inside, lambda path: path.endswith(".none")) == 0
    for view, handle in ((shared, h1), (private, h2), (elsewhere, h3)):
        view.close()
        handle.close()  # type: ignore[attr-defined]


def test_trim_heap_runs_on_glibc() -> None:
    blocks = [bytearray(64 * 1024) for _ in range(2000)]
    del blocks
    assert isinstance(trim_heap(), bool)
