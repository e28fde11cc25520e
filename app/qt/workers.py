"""Run long work off the UI thread and hand results back to it through Qt signals.

The core exposes plain callbacks (progress, streamed text); a `Job` turns them into
signals, and signals emitted from a worker thread reach slots on the UI thread as
queued calls, so widgets are only ever touched on the thread that owns them.
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.core.cancel import Cancel

_POOL: QThreadPool | None = None
_LIVE: set["Job"] = set()   # keeps running jobs (and their signal objects) alive


def pool() -> QThreadPool:
    """Our own pool: the global one has as many threads as cores (2 here), and a
    long engine start or a streamed answer must not starve ingestion or search."""
    global _POOL
    if _POOL is None:
        _POOL = QThreadPool()
        _POOL.setMaxThreadCount(6)
    return _POOL


class Job(QObject):
    """One function run on the pool. It receives a `JobContext` as its first argument."""

    sig_done = Signal(object)
    """The function returned this value."""
    sig_failed = Signal(object)
    """The function raised this exception."""
    sig_progress = Signal(int, int)
    """Progress: done, total."""
    sig_message = Signal(object)
    """A value the function passed to ctx.emit (streamed text, a status)."""
    _sig_released = Signal()

    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self.ctx = JobContext(self)
        self.finished = False
        # Emitted last, so by the time it arrives every queued result slot has run.
        self._sig_released.connect(self._release)

    def start(self) -> "Job":
        _LIVE.add(self)
        pool().start(_Runnable(self))
        return self

    def cancel(self) -> None:
        self.ctx.cancel_event.set()

    def _run(self) -> None:
        try:
            result = self._fn(self.ctx, *self._args, **self._kwargs)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the UI
            self._finish(self.sig_failed, exc)
        else:
            self._finish(self.sig_done, result)

    def _finish(self, signal, value) -> None:
        self.finished = True
        try:
            signal.emit(value)
            self._sig_released.emit()
        except RuntimeError:
            pass    # the app is exiting and Qt already deleted the receiver side

    def _release(self) -> None:
        _LIVE.discard(self)


class JobContext:
    """What the running function may use: cancellation and callbacks that are safe
    to call from its thread (they only emit signals)."""

    def __init__(self, job: Job) -> None:
        self.cancel_event = Cancel()          # a Stop also cuts the engine's request it is linked to
        self._job = job

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def progress(self, done: int, total: int) -> None:
        self._job.sig_progress.emit(int(done), int(total))

    def emit(self, value: Any) -> None:
        self._job.sig_message.emit(value)


class _Runnable(QRunnable):
    def __init__(self, job: Job) -> None:
        super().__init__()
        self._job = job
        self.setAutoDelete(True)

    def run(self) -> None:
        self._job._run()


def run(fn: Callable[..., Any], *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        on_message: Callable[[Any], None] | None = None,
        **kwargs: Any) -> Job:
    """Start `fn(ctx, *args, **kwargs)` on the pool; callbacks run on the UI thread."""
    job = Job(fn, *args, **kwargs)
    if on_done:
        job.sig_done.connect(on_done)
    if on_error:
        job.sig_failed.connect(on_error)
    if on_progress:
        job.sig_progress.connect(on_progress)
    if on_message:
        job.sig_message.connect(on_message)
    return job.start()


def wait_all(timeout_ms: int = 5000) -> bool:
    """For shutdown and tests: wait until the pool is idle."""
    return pool().waitForDone(timeout_ms)
