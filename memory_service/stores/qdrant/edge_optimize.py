"""Out-of-process ``optimize()`` for qdrant-edge shards: copy, build in a child, replay, swap.

The binding holds the GIL for every call, so an in-process HNSW build (4.7 s at 12k x 384) would
freeze every Python thread, the MCP event loop too. :class:`ShardOptimizer` therefore works on a
copy of the shard in ``root/.<name>.optimizing``:

1. :meth:`~ShardOptimizer.copy` (under the collection lock): flush, copy (keeping the WAL's holes:
   76 ms at 12k x 384) and start a journal of the writes made from now on.
2. :meth:`~ShardOptimizer.build`: a niced child process loads the copy, optimises and flushes it,
   while the adapter keeps serving searches and writes from the live shard.
3. :meth:`~ShardOptimizer.swap` (under the lock): the live shard is renamed to ``.<name>.old``, the
   copy moved in and loaded, the journal replayed and flushed; only then is ``.old`` renamed to
   ``.<name>.trash`` (the commit point) and removed.
4. :meth:`~ShardOptimizer.recover` (on open): a crash at any point leaves one complete shard;
   ``.old`` is put back if the swap had not committed, and leftover work dirs are removed.

Engine failures surface as plain exceptions; the adapter translates them into service errors.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import qdrant_edge as qe

from memory_service.core.ports import CollectionSpec

_ZEROS = bytes(1 << 20)
# The child dies with the server (PR_SET_PDEATHSIG, Linux): a server killed with -9 must not leave
# an HNSW build running, eating the CPU its successor needs, in a work dir the successor removes.
_OPTIMIZER = (
    "import ctypes, os, signal, sys\n"
    "try:\n    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "except (OSError, AttributeError):\n    pass\n"
    "if os.getppid() != int(sys.argv[2]):\n    sys.exit(1)\n"
    "from qdrant_edge import EdgeShard\nos.nice(10)\n"
    "s = EdgeShard.load(sys.argv[1]); changed = s.optimize(); s.flush(); s.close(); print(changed)\n"
)


@dataclass(eq=False)
class EdgeCollection:
    """One open collection: its shard, the lock serialising calls to it, and an optimize's state."""

    spec: CollectionSpec
    path: Path
    shard: qe.EdgeShard
    lock: threading.RLock = field(default_factory=threading.RLock)
    closed: bool = False
    journal: list[qe.UpdateOperation] | None = None  # set while an out-of-process optimize runs
    indexed: bool = True  # payload indexes created (an empty collection has none: EdgeVectorStore._index)
    optimizer: subprocess.Popen[str] | None = None
    written_at: float | None = None  # last update (monotonic) not yet paged out (upkeep)
    unflushed_since: float | None = None  # first update since the segments were last flushed
    wal_paged: float | None = None  # the written_at whose WAL upkeep paged out
    quiet_seen: float | None = None  # the written_at after which upkeep reported writes quiet


def _sparse_copy(src: str, dst: str) -> str:
    """``copy2`` that keeps holes: the WAL preallocates 32 MB files that are mostly zeros."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        while chunk := fin.read(len(_ZEROS)):
            if chunk == _ZEROS[: len(chunk)]:
                fout.seek(len(chunk), os.SEEK_CUR)
            else:
                fout.write(chunk)
        fout.truncate()
    shutil.copystat(src, dst)
    return dst


class ShardOptimizer:
    """Runs the copy/build/swap steps for the shards under ``root`` (one per collection)."""

    def __init__(self, root: Path, timeout_s: float) -> None:
        """Args:
        root: the directory holding ``<name>/`` shards and the ``.<name>.*`` dirs of this module.
        timeout_s: the child process building HNSW is killed after this long.
        """
        self._root = root
        self._timeout = timeout_s

    def _aside(self, name: str, kind: str) -> Path:
        return self._root / f".{name}.{kind}"

    def recover(self, name: str) -> None:
        """Finish or undo a shard swap cut short by a crash: ``.old`` exists until the swap commits."""
        path, old = self._root / name, self._aside(name, "old")
        if old.exists():
            shutil.rmtree(path, ignore_errors=True)
            os.rename(old, path)
        for kind in ("optimizing", "trash"):
            shutil.rmtree(self._aside(name, kind), ignore_errors=True)

    def copy(self, coll: EdgeCollection) -> Path:
        """Copy the flushed shard to the work dir and start journalling; caller holds ``coll.lock``."""
        coll.shard.flush()
        work = self._aside(coll.spec.name, "optimizing")
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(coll.path, work, copy_function=_sparse_copy)
        coll.journal = []
        return work

    def build(self, coll: EdgeCollection, work: Path) -> bool:
        """Optimise the copy in a niced child process; True when it changed something."""
        with coll.lock:  # close() kills the child under this lock: spawn none once closed
            if coll.closed:
                return False
            proc = coll.optimizer = subprocess.Popen(  # never our stdio: it is the MCP channel
                [sys.executable, "-c", _OPTIMIZER, str(work), str(os.getpid())],
                text=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        try:
            out, err = proc.communicate(timeout=self._timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RuntimeError(f"HNSW build exceeded {self._timeout:.0f} s") from None
        if coll.closed:
            return False
        if proc.returncode != 0:
            raise RuntimeError(f"optimizer process exited {proc.returncode}: {err.strip()[-500:]}")
        return out.strip().endswith("True")

    def swap(self, coll: EdgeCollection, work: Path) -> bool:
        """Put the optimised copy in place of the live shard and replay the journal onto it."""
        name, old = coll.spec.name, self._aside(coll.spec.name, "old")
        with coll.lock:
            if coll.closed:
                return False
            coll.shard.flush()
            coll.shard.close()
            os.rename(coll.path, old)
            os.rename(work, coll.path)
            try:
                coll.shard = qe.EdgeShard.load(str(coll.path))
                for op in coll.journal or []:
                    coll.shard.update(op)
                coll.shard.flush()
            except Exception:
                coll.shard.close()
                self.recover(name)
                coll.shard = qe.EdgeShard.load(str(coll.path))
                raise
            trash = self._aside(name, "trash")
            os.rename(old, trash)  # the commit point
            shutil.rmtree(trash, ignore_errors=True)
            return True

    @staticmethod
    def finish(coll: EdgeCollection, work: Path) -> None:
        """End a run, swapped or not: stop journalling and remove the work dir."""
        with coll.lock:
            coll.journal, coll.optimizer = None, None
        shutil.rmtree(work, ignore_errors=True)

    @staticmethod
    def stop(coll: EdgeCollection) -> None:
        """Kill a running child (the store is closing); caller holds ``coll.lock``."""
        if coll.optimizer is not None and coll.optimizer.poll() is None:
            coll.optimizer.kill()  # its work dir is removed by optimize() or on next open
