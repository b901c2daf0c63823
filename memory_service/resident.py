"""Give back memory the process holds but does not use: file pages an engine faulted in and will not
read again, and heap that was freed but kept by the allocator.

Both are hints to the kernel and the C library, never a loss of data:

* :func:`page_out` asks the kernel (``madvise(MADV_PAGEOUT)``, Linux 5.4+) to reclaim the pages of
  *shared* file mappings under a folder: the file holds their contents (dirty pages are written
  back first), and a later read or write faults them back in. Private mappings are left alone.
* :func:`trim_heap` asks glibc to return free heap pages to the kernel (``malloc_trim``).

On other systems (no ``/proc/self/maps``, no glibc) both do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import re
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

MADV_PAGEOUT = 21  # linux/mman.h
_MAPS = Path("/proc/self/maps")


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None


_LIBC = _libc()
if _LIBC is not None and hasattr(_LIBC, "madvise"):
    _LIBC.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    _LIBC.madvise.restype = ctypes.c_int


def page_out(root: Path, wanted: Callable[[str], bool] | re.Pattern[str]) -> int:
    """Reclaim this process's pages of the shared file mappings under ``root`` whose path
    ``wanted`` accepts (a predicate, or a pattern searched in the path). Returns the bytes
    mapped by the mappings advised (0 where the kernel or the system cannot)."""
    if _LIBC is None or not hasattr(_LIBC, "madvise") or not _MAPS.exists():
        return 0
    accept = wanted.search if isinstance(wanted, re.Pattern) else wanted
    prefix = f"{Path(root).resolve()}/"
    advised = 0
    try:
        lines = _MAPS.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[1][3:4] != "s":  # private or anonymous: not ours to drop
            continue
        path = fields[5]
        if not path.startswith(prefix) or not accept(path):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if _LIBC.madvise(start, end - start, MADV_PAGEOUT) != 0:
            # EINVAL: a kernel before 5.4; EAGAIN and the like: a hint, so give up quietly
            logger.debug("madvise(MADV_PAGEOUT) failed with errno %d on %s", ctypes.get_errno(), path)
            return advised
        advised += end - start
    return advised


def trim_heap() -> bool:
    """Return freed heap to the kernel (glibc); False where there is no ``malloc_trim``."""
    if _LIBC is None or not hasattr(_LIBC, "malloc_trim"):
        return False
    return bool(_LIBC.malloc_trim(0))
