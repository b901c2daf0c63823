"""How far an index pass is, by bytes of source rather than by files.

A file's share of the work is its size (known from the walk, before anything is read), so one
large file moves the bar as much as the work it takes, and a client can show an honest rate and
time left. A file that needs no embedding (unchanged, unreadable, unparsable) is done as soon as
it is looked at; a parsed one waits in the write batch, and the batch's bytes are counted as its
units are embedded (the slow part) and in full once it is stored. The cross-file linking at the
end is given a small share of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

UNIT = "bytes"
LINK_SHARE = 50  # the linking phase weighs 1/50 of the pass (at least one byte's worth)

# (done, total, phase): JobContext.progress with unit=UNIT.
Report = Callable[[int, int, str], None]


class IndexProgress:
    """Counts done bytes of one pass over files of ``sizes`` bytes and reports each move."""

    def __init__(self, sizes: Sequence[int], report: Report) -> None:
        self._sizes = [max(1, size) for size in sizes]  # an empty file is still a step
        self._files = files = sum(self._sizes)
        self.total = files + max(1, files // LINK_SHARE)
        self.done = 0
        self._pending = 0  # bytes of parsed files waiting in the write batch
        self._credited = 0  # of those, what the embedding has counted so far
        self._report = report

    def looked_at(self, index: int, *, batched: bool) -> None:
        """File ``index`` is read: done now, or (``batched``) once its batch is embedded and stored."""
        if batched:
            self._pending += self._sizes[index]
        else:
            self.done += self._sizes[index]
        self._send("indexing")

    def embedded(self, fraction: float) -> None:
        """That much of the waiting batch's units are embedded (0 to 1)."""
        credit = int(self._pending * min(1.0, max(0.0, fraction)))
        if credit > self._credited:
            self._credited = credit
            self._send("indexing")

    def stored(self) -> None:
        """The waiting batch is in the stores."""
        self.done += self._pending
        self._pending = self._credited = 0
        self._send("indexing")

    def linking(self) -> None:
        """Every file is done; the linking share remains."""
        self.done, self._pending, self._credited = self._files, 0, 0
        self._send("linking")

    def _send(self, phase: str) -> None:
        self._report(min(self.done + self._credited, self.total), self.total, phase)
