"""An index pass's progress is counted in bytes of source, so one large file weighs what it costs."""

from __future__ import annotations

from memory_service.core.code.progress import LINK_SHARE, IndexProgress


def _meter(sizes: list[int]) -> tuple[IndexProgress, list[tuple[int, int, str]]]:
    reports: list[tuple[int, int, str]] = []
    return IndexProgress(sizes, lambda done, total, phase: reports.append((done, total, phase))), reports


def test_a_large_file_weighs_its_bytes_not_one_file() -> None:
    sizes = [1_000] * 9 + [91_000]  # nine small files, then one large: 100,000 bytes
    meter, reports = _meter(sizes)
    files = sum(sizes)
    assert meter.total == files + files // LINK_SHARE
    for i in range(9):  # unchanged files: done when looked at
        meter.looked_at(i, batched=False)
    done, total, phase = reports[-1]
    assert (done, phase) == (9_000, "indexing")
    assert done / total < 0.1  # by files it would read 90 %
    meter.looked_at(9, batched=True)  # parsed, waiting to be embedded and stored
    assert reports[-1][0] == 9_000
    meter.embedded(0.5)  # half of its units embedded: half of its bytes counted
    assert reports[-1][0] == 9_000 + 45_500
    meter.embedded(0.25)  # never backwards
    assert reports[-1][0] == 9_000 + 45_500
    meter.stored()
    assert reports[-1][0] == files and reports[-1][0] < total
    meter.linking()
    assert reports[-1] == (files, total, "linking")
    assert [r[0] for r in reports] == sorted(r[0] for r in reports)  # monotonic
    assert all(r[1] == total for r in reports)


def test_empty_files_and_batches_still_move() -> None:
    meter, reports = _meter([0, 0, 10])
    meter.looked_at(0, batched=True)
    meter.looked_at(1, batched=True)
    meter.embedded(1.0)
    assert reports[-1][0] == 2  # an empty file counts as one byte of work
    meter.stored()
    meter.looked_at(2, batched=False)
    assert reports[-1][0] == 12 and meter.total == 13
