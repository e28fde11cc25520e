"""The process's one scheduler: who runs now — a question, its evidence, the app's background
work and the engine's background reading — as typed jobs under one lock.

On 2 cores, two compute pools side by side (the embedder's OpenMP threads and llama.cpp's)
slowed each other ~10×: a first token at 75 s instead of 5 s while a new document's search
vectors were computed beside the prompt. So the app's background work — search vectors, OCR,
table detection, the background reading — runs in *turns*, one job at a time, and foreground
work (a question, its evidence search, the engine measuring its speed) pre-empts all of it at
once: every job waits at its next checkpoint (a batch of vectors, a page, a slice of a reading)
until the foreground is done, then resumes. Jobs ask for turns in short units, so foreground
work waits at most one unit; a unit that can stop sooner (a reading, a table child) watches
its `cut` flag, set the moment it should stop — by the foreground arriving, a more urgent job
waiting or the user (a linked Cancel) — so nothing polls for it.

The engine is one more thing scheduled here: a question and a background reading each hold
its slot (`question`, `turn(..., engine=...)`), so one question at a time reaches it and a
question takes it before any reading.

Kinds, most urgent first: a question, then its evidence, then ingestion (OCR, tables) before
vectors before the reading: a document must be searchable before it is worth embedding or
reading. Per process: the window, `pagewise ask` and `pagewise index` each have their own.
"""
from __future__ import annotations

import contextlib
import enum
import threading
import time
from typing import Callable

from app.core.cancel import Cancel


class Kind(enum.IntEnum):
    """A job's kind: lower is more urgent. QUESTION and EVIDENCE are foreground (they pause all
    background kinds); the rest take turns, one at a time."""
    QUESTION = 0     # a question or a review: the cores and the engine
    EVIDENCE = 1     # a question's evidence search, the engine measuring its speed: the cores
    INGESTION = 2    # OCR, table detection
    VECTORS = 3      # search vectors
    READING = 4      # the engine reading documents ahead of the questions


# kept as plain names: what the user is told ("search vectors paused while answering")
INGESTION, VECTORS, READING = Kind.INGESTION, Kind.VECTORS, Kind.READING
RANKS = {"OCR": INGESTION, "table detection": INGESTION, "search vectors": VECTORS,
         "background reading": READING}

GRACE_S = 0.2   # after a unit of an urgent job, a less urgent one waits this long for its next unit
Listener = Callable[[str], None]
CancelLike = Callable[[], bool] | threading.Event | None


def kind_of(job: str) -> Kind:
    return RANKS.get(job, VECTORS)


class Unit:
    """One turn under way: `cut` is set when the unit should stop at once (foreground work or a
    more urgent job waits, or the caller's Cancel was set)."""

    def __init__(self, job: str) -> None:
        self.job = job
        self.cut = Cancel()


class Scheduler:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._foreground: list[tuple[Kind, str]] = []   # what holds the machine now ("answering")
        self._holder: tuple[int, str] | None = None      # (thread id, job name) whose turn it is
        self._unit: Unit | None = None                   # the holder's unit (its cut flag)
        self._depth = 0                                  # re-entry by the holder's own thread
        self._waiting: dict[str, int] = {}               # job name → threads waiting for a turn
        self._engines: dict[object, list[int]] = {}      # engine → [holding thread, depth]
        self._listeners: list[Listener] = []
        self._released = (READING, 0.0)                 # (kind, when) of the last unit that ended

    # --- foreground: a question, its evidence ---------------------------------------------------
    @contextlib.contextmanager
    def foreground(self, why: str = "answering", kind: Kind = Kind.QUESTION):
        """Held while foreground work runs: every background job stops at its next checkpoint
        (a unit under way is cut) and waits until the last foreground holder leaves."""
        entry = (kind, why)
        with self._cond:
            self._foreground.append(entry)
            if self._unit is not None:
                self._unit.cut.set()
            self._cond.notify_all()
        self._changed()
        try:
            yield
        finally:
            with self._cond:
                self._foreground.remove(entry)
                self._cond.notify_all()
            self._changed()

    @contextlib.contextmanager
    def question(self, engine: object, why: str = "answering"):
        """A question (or a review) on `engine`: foreground first — a background reading of that
        engine is cut at its next slice — then the engine's slot, one question at a time."""
        with self.foreground(why, Kind.QUESTION), self._engine_slot(engine):
            yield

    @contextlib.contextmanager
    def engine_if_free(self, engine: object):
        """The engine's slot if nothing holds it now (yields True), else nothing (yields False)."""
        me = threading.get_ident()
        with self._cond:
            free = engine not in self._engines
            if free:
                self._engines[engine] = [me, 1]
        try:
            yield free
        finally:
            if free:
                self._release_engine(engine)

    @contextlib.contextmanager
    def _engine_slot(self, engine: object):
        me = threading.get_ident()
        with self._cond:
            while engine in self._engines and self._engines[engine][0] != me:
                self._cond.wait()
            held = self._engines.setdefault(engine, [me, 0])
            held[1] += 1
        try:
            yield
        finally:
            self._release_engine(engine)

    def _release_engine(self, engine: object) -> None:
        with self._cond:
            held = self._engines[engine]
            held[1] -= 1
            if not held[1]:
                del self._engines[engine]
            self._cond.notify_all()

    def busy(self) -> bool:
        """Foreground work holds the machine now."""
        with self._cond:
            return bool(self._foreground)

    # --- background jobs ------------------------------------------------------------------------
    @contextlib.contextmanager
    def turn(self, job: str, cancelled: CancelLike = None, engine: object = None):
        """One unit of background work (a batch, a page, a slice of a reading): waits while
        foreground work runs, another job has its turn or a more urgent one waits; with
        `engine`, also for that engine's slot, held for the unit. The holder's own thread may
        nest turns (OCR inside an ingestion). `cancelled` (a callable or an Event) ends the
        wait early (the unit then runs: the caller checks its own flag right after); a Cancel
        also sets the unit's `cut`. Yields the Unit."""
        me = threading.get_ident()
        is_cancelled = cancelled.is_set if isinstance(cancelled, threading.Event) else cancelled
        with self._cond:
            if self._holder and self._holder[0] == me:
                self._depth += 1
                nested, unit = True, self._unit
            else:
                nested, unit = False, Unit(job)
                self._waiting[job] = self._waiting.get(job, 0) + 1
                self._cut_for(kind_of(job))
                if not self._may_run(job, engine):
                    self._changed()              # the condition's lock is re-entrant
                try:
                    while not self._may_run(job, engine) and not (is_cancelled and is_cancelled()):
                        self._cond.wait(self._wait_s(is_cancelled))
                finally:
                    self._waiting[job] -= 1
                    if not self._waiting[job]:
                        del self._waiting[job]
                    self._cond.notify_all()      # a less urgent job may be waiting on this one
                self._holder, self._depth, self._unit = (me, job), 1, unit
                if engine is not None:
                    self._engines[engine] = [me, 1]
        unlink = cancelled.link(unit.cut) if isinstance(cancelled, Cancel) and not nested else (lambda: None)
        self._changed()
        try:
            yield unit
        finally:
            unlink()
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._holder, self._unit = None, None
                    self._released = (kind_of(job), time.monotonic())
                    if engine is not None and not nested:
                        del self._engines[engine]
                self._cond.notify_all()
            if not nested:
                self._changed()

    def _wait_s(self, is_cancelled) -> float | None:
        """How long a waiting turn sleeps before it looks again without being told: until a
        more urgent job's grace ends, or briefly when only a plain callable can cancel it."""
        left = GRACE_S - (time.monotonic() - self._released[1])
        if is_cancelled is not None:
            return GRACE_S if left <= 0 else min(left, GRACE_S)
        return left if left > 0 else None

    def _cut_for(self, kind: Kind) -> None:
        """A job of `kind` waits: the unit under way stops now if it is less urgent."""
        if self._unit is not None and self._holder is not None and kind < kind_of(self._holder[1]):
            self._unit.cut.set()

    def _may_run(self, job: str, engine: object = None) -> bool:
        if self._foreground or self._holder is not None:
            return False
        if engine is not None and engine in self._engines:
            return False
        kind = kind_of(job)
        if any(kind_of(other) < kind for other in self._waiting):
            return False
        # the urgent job is between two units (storing, reporting): leave it the next one, or a
        # reading would start only to be cut again at once
        last_kind, when = self._released
        return not (last_kind < kind and time.monotonic() - when < GRACE_S)

    def should_yield(self, job: str) -> bool:
        """For a long unit under way: stop at the next checkpoint, because foreground work or
        a more urgent job is waiting (what sets the unit's `cut`)."""
        with self._cond:
            kind = kind_of(job)
            return bool(self._foreground) or any(kind_of(o) < kind for o in self._waiting)

    def checkpoint(self, job: str, cancelled: CancelLike = None) -> None:
        """Wait here while foreground work runs (for jobs that do not hold turns themselves)."""
        with self.turn(job, cancelled):
            pass

    # --- what the user is told ------------------------------------------------------------------
    def paused(self) -> list[str]:
        """Background jobs waiting because foreground work runs."""
        with self._cond:
            if not self._foreground:
                return []
            jobs = set(self._waiting) | ({self._holder[1]} if self._holder else set())
            return sorted(jobs, key=lambda j: (kind_of(j), j))

    def describe(self) -> str:
        """"search vectors paused while answering", or "" when nothing waits for the foreground
        (named by its most urgent holder, the latest of that kind)."""
        with self._cond:
            why = ""
            if self._foreground:
                first = min(kind for kind, _ in self._foreground)
                why = [w for kind, w in self._foreground if kind == first][-1]
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


CpuWork = Scheduler        # the name its callers and tests know
scheduler = Scheduler()    # the process's one scheduler
