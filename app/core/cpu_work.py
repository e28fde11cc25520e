"""One scheduler for the app's CPU work: a question first, then background work one job at a time.

On 2 cores, two compute pools side by side (the embedder's OpenMP threads and llama.cpp's)
slowed each other ~10×: a first token at 75 s instead of 5 s while a new document's search
vectors were computed beside the prompt. So the app's background work — search vectors, OCR,
table detection, the background reading — runs in *turns*, one job at a time, and a question
(or the engine measuring its speed) pre-empts all of it at once: every job waits at its next
checkpoint (a batch of vectors, a page, a slice of a reading) until the answer is done, then
resumes. Jobs ask for turns in short units, so a question waits at most one unit.

Between background jobs the lower rank goes first (ingestion before vectors before the
reading: a document must be searchable before it is worth embedding or reading), and a
running reading is cut when a more urgent job waits, as it is for a question.

Per process: the window, `pagewise ask` and `pagewise index` each have their own.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable

# Ranks: lower first. Names are what the user is told ("search vectors paused while answering").
INGESTION, VECTORS, READING = 0, 1, 2
RANKS = {"OCR": INGESTION, "table detection": INGESTION, "search vectors": VECTORS,
         "background reading": READING}

GRACE_S = 0.2   # after a unit of an urgent job, a less urgent one waits this long for its next unit
Listener = Callable[[str], None]


class CpuWork:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._foreground: list[str] = []          # what holds the machine now ("answering")
        self._holder: tuple[int, str] | None = None   # (thread id, job name) whose turn it is
        self._depth = 0                           # re-entry by the holder's own thread
        self._waiting: dict[str, int] = {}        # job name → threads waiting for a turn
        self._listeners: list[Listener] = []
        self._released = (READING, 0.0)          # (rank, when) of the last unit that ended

    # --- a question -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def foreground(self, why: str = "answering"):
        """Held while a question (or the engine's speed measurement) runs: every background job
        stops at its next checkpoint and waits until the last foreground holder leaves."""
        with self._cond:
            self._foreground.append(why)
            self._cond.notify_all()
        self._changed()
        try:
            yield
        finally:
            with self._cond:
                self._foreground.remove(why)
                self._cond.notify_all()
            self._changed()

    def busy(self) -> bool:
        """A question holds the machine now."""
        with self._cond:
            return bool(self._foreground)

    # --- background jobs ------------------------------------------------------------------------
    @contextlib.contextmanager
    def turn(self, job: str, cancelled: Callable[[], bool] | None = None):
        """One unit of background work (a batch, a page, a reading): waits while a question
        runs, another job has its turn or a more urgent one waits. The holder's own thread
        may nest turns (OCR inside an ingestion). `cancelled()` ends the wait early (the
        unit then runs: the caller checks its own cancel flag right after)."""
        me = threading.get_ident()
        with self._cond:
            if self._holder and self._holder[0] == me:
                self._depth += 1
                nested = True
            else:
                nested = False
                self._waiting[job] = self._waiting.get(job, 0) + 1
                if not self._may_run(job):
                    self._changed()              # the condition's lock is re-entrant
                try:
                    while not self._may_run(job) and not (cancelled and cancelled()):
                        self._cond.wait(GRACE_S)
                finally:
                    self._waiting[job] -= 1
                    if not self._waiting[job]:
                        del self._waiting[job]
                self._holder, self._depth = (me, job), 1
        self._changed()
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._holder = None
                    self._released = (RANKS.get(job, VECTORS), time.monotonic())
                self._cond.notify_all()
            if not nested:
                self._changed()

    def _may_run(self, job: str) -> bool:
        if self._foreground or self._holder is not None:
            return False
        rank = RANKS.get(job, VECTORS)
        if any(RANKS.get(other, VECTORS) < rank for other in self._waiting):
            return False
        # the urgent job is between two units (storing, reporting): leave it the next one, or a
        # reading would start only to be cut again at once
        last_rank, when = self._released
        return not (last_rank < rank and time.monotonic() - when < GRACE_S)

    def should_yield(self, job: str) -> bool:
        """For a long unit under way (a reading): stop at the next checkpoint, because a
        question or a more urgent job is waiting."""
        with self._cond:
            rank = RANKS.get(job, VECTORS)
            return bool(self._foreground) or any(RANKS.get(o, VECTORS) < rank for o in self._waiting)

    def checkpoint(self, job: str, cancelled: Callable[[], bool] | None = None) -> None:
        """Wait here while a question runs (for jobs that do not hold turns themselves)."""
        with self.turn(job, cancelled):
            pass

    # --- what the user is told ------------------------------------------------------------------
    def paused(self) -> list[str]:
        """Background jobs waiting because a question runs."""
        with self._cond:
            if not self._foreground:
                return []
            jobs = set(self._waiting) | ({self._holder[1]} if self._holder else set())
            return sorted(jobs, key=lambda j: (RANKS.get(j, VECTORS), j))

    def describe(self) -> str:
        """"search vectors paused while answering", or "" when nothing waits for a question."""
        with self._cond:
            why = self._foreground[-1] if self._foreground else ""
        jobs = self.paused()
        return f"{' and '.join(jobs)} paused while {why}" if jobs else ""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """`listener(describe())` on every change (from any thread); returns the unsubscribe."""
        with self._cond:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._cond:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    def _changed(self) -> None:
        with self._cond:
            listeners = list(self._listeners)
        if listeners:
            text = self.describe()
            for listener in listeners:
                try:
                    listener(text)
                except RuntimeError:   # a window already closed (its Qt object is gone)
                    pass


scheduler = CpuWork()     # the process's one scheduler
