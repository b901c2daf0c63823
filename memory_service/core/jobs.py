"""One job mechanism for all background work (indexing now; normalization and cleanup later).

A job runs in a worker thread, so the tool call that started it returns at once and other
calls are never blocked. Its state (status, progress, phase, stats, error) is kept in memory
and written through to the cache, so ``index_status`` still answers after a restart; a job that
was running when its process stopped reads as ``interrupted``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from pydantic import BaseModel, Field

from memory_service.core.errors import MemoryServiceError
from memory_service.core.models import utcnow
from memory_service.core.ports import Cache
from memory_service.core.write.gate import WriteGate

logger = logging.getLogger(__name__)

JOBS_NAMESPACE = "jobs"
JobStatus = Literal["queued", "running", "completed", "failed", "cancelled", "interrupted"]
FINISHED = ("completed", "failed", "cancelled", "interrupted")


class JobState(BaseModel):
    job_id: str
    kind: str
    status: JobStatus = "queued"
    progress: int = 0
    # The work behind ``progress``, when the job measures it (index jobs: bytes of source).
    done: int = 0
    total: int = 0
    unit: str | None = None
    phase: str = "queued"
    stats: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    created_at: str = Field(default_factory=lambda: utcnow().isoformat())
    started_at: str | None = None
    finished_at: str | None = None


class JobCancelled(Exception):
    """Raised inside a job when cancellation was requested."""


class JobContext:
    """What a running job sees: report progress, read and update stats, check for cancellation."""

    def __init__(self, manager: JobManager, state: JobState, cancel: threading.Event) -> None:
        self._manager = manager
        self.state = state
        self._cancel = cancel
        self._last_save = 0.0

    @property
    def stats(self) -> dict[str, Any]:
        return self.state.stats

    def progress(self, done: int, total: int, phase: str | None = None, *, unit: str | None = None) -> None:
        """``done`` of ``total`` units of work; with ``unit`` (e.g. "bytes") they are kept in the
        job's state, for a client to show the amount and estimate the time left."""
        if self._cancel.is_set():
            raise JobCancelled
        self.state.progress = 100 if total <= 0 else min(99, int(done * 100 / total))
        if unit is not None:
            self.state.done, self.state.total, self.state.unit = done, total, unit
        if phase:
            self.state.phase = phase
        now = time.monotonic()
        if now - self._last_save > 1.0:  # write-through at most once a second
            self._last_save = now
            self._manager.save(self.state)
        self._manager.notify(self.state, done, total)


ProgressListener = Callable[[JobState, int, int], None]


class JobManager:
    """Runs jobs one at a time per manager (index jobs share the stores, so they serialise). Each
    job runs inside the write gate: an online backup waits for it to end."""

    def __init__(self, cache: Cache, *, workers: int = 1, gate: WriteGate | None = None) -> None:
        self._cache = cache
        self._gate = gate or WriteGate()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="job")
        self._jobs: dict[str, JobState] = {}
        self._done: dict[str, threading.Event] = {}
        self._cancel = threading.Event()
        self._listeners: dict[str, list[ProgressListener]] = {}
        self._lock = threading.Lock()

    def submit(self, kind: str, work: Callable[[JobContext], dict[str, Any]]) -> JobState:
        state = JobState(job_id=str(uuid.uuid4()), kind=kind)
        with self._lock:
            self._jobs[state.job_id] = state
            self._done[state.job_id] = threading.Event()
        self.save(state)
        self._pool.submit(self._run, state, work)
        return state

    def get(self, job_id: str) -> JobState | None:
        with self._lock:
            state = self._jobs.get(job_id)
        if state is not None:
            return state.model_copy(deep=True)
        raw = self._cache.get(JOBS_NAMESPACE, job_id)
        if raw is None:
            return None
        stored = JobState.model_validate_json(raw)
        if stored.status not in FINISHED:  # its process stopped before it finished
            stored.status = "interrupted"
        return stored

    def active(self) -> list[JobState]:
        """Jobs of this process queued or running now, oldest first."""
        with self._lock:
            states = [s.model_copy(deep=True) for s in self._jobs.values() if s.status not in FINISHED]
        return sorted(states, key=lambda s: s.created_at)

    def known(self) -> list[tuple[str, str, int]]:
        """(kind, status, progress) of every job this process has run or runs, oldest first (/metrics)."""
        with self._lock:
            states = sorted(self._jobs.values(), key=lambda s: s.created_at)
            return [(s.kind, s.status, s.progress) for s in states]

    def wait(self, job_id: str, timeout: float | None = None) -> bool:
        event = self._done.get(job_id)
        return event.wait(timeout) if event else True

    def listen(self, job_id: str, listener: ProgressListener) -> Callable[[], None]:
        """Call ``listener`` on each progress report of a job; returns an unsubscribe function."""
        with self._lock:
            self._listeners.setdefault(job_id, []).append(listener)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners.get(job_id, []).remove(listener)

        return unsubscribe

    def notify(self, state: JobState, done: int, total: int) -> None:
        with self._lock:
            listeners = list(self._listeners.get(state.job_id, ()))
        for listener in listeners:
            listener(state, done, total)

    def save(self, state: JobState) -> None:
        try:
            self._cache.set(JOBS_NAMESPACE, state.job_id, state.model_dump_json().encode())
        except MemoryServiceError as exc:  # state stays in memory; only restart visibility is lost
            logger.warning("could not persist job %s: %s", state.job_id, exc.message)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Ask running jobs to stop at their next progress report, and wait a while for them."""
        self._cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + timeout
        for event in list(self._done.values()):
            event.wait(max(0.0, deadline - time.monotonic()))

    def _run(self, state: JobState, work: Callable[[JobContext], dict[str, Any]]) -> None:
        with self._gate.passing(f"the {state.kind} job {state.job_id}", long=True):
            self._run_inside(state, work)

    def _run_inside(self, state: JobState, work: Callable[[JobContext], dict[str, Any]]) -> None:
        state.status, state.phase, state.started_at = "running", "starting", utcnow().isoformat()
        self.save(state)
        ctx = JobContext(self, state, self._cancel)
        try:
            state.stats.update(work(ctx))
            state.status, state.progress, state.phase = "completed", 100, "done"
            state.done = state.total  # all of the work it measured
        except JobCancelled:
            state.status, state.phase = "cancelled", "cancelled"
        except MemoryServiceError as exc:
            state.status, state.error = "failed", f"{exc.code}: {exc.message}"
        except Exception as exc:
            logger.exception("job %s failed", state.job_id)
            state.status, state.error = "failed", f"INT_UNEXPECTED: {type(exc).__name__}: {exc}"
        state.finished_at = utcnow().isoformat()
        self.save(state)
        self.notify(state, 1, 1)
        self._done[state.job_id].set()


def job_json(state: JobState) -> str:
    return json.dumps(state.model_dump(mode="json"))
