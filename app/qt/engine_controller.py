"""The engine seen from the window: start it off the UI thread, relay its status,
ask questions with streaming and Stop, stop it on exit."""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.answer.progress import DoesNotFit, ProgressEstimate, Writing, what_is_read
from app.core.answer.evidence.judge import CardsJudged
from app.core.answer.evidence.rewrite import CardsFound
from app.service import Assistant, EngineState
from app.qt import workers
from app.qt.answer_progress import AnswerProgress

log = logging.getLogger("pagewise.gui")


def _start(ctx, service, closing: threading.Event) -> object:
    return service.start(closing)


def _use_model(ctx, service, model_id: str | None, closing: threading.Event) -> object:
    return service.use_model(model_id, closing)


def _prepare(ctx, service, refs) -> bool:
    return service.prepare(refs)


def _evidence(ctx, service, refs, question: str, asked: float, found: Future):
    """The question's evidence cards from the search alone: never behind the engine (which
    may be busy reading); `found` hands them to the ask job (None when the search failed)."""
    try:
        evidence = service.evidence(refs, question, started=asked)
    except BaseException:
        found.set_result(None)
        raise
    found.set_result(evidence)
    return evidence


def _warm_evidence(ctx, service, refs) -> None:
    service.warm_evidence(refs)


def _ask(ctx, service, refs, question: str, conversation, evidence: Future):
    return service.ask(refs, question, on_delta=ctx.emit, cancel=ctx.cancel_event, conversation=conversation,
                       on_reading=ctx.emit, on_progress=ctx.progress, evidence=evidence, on_writing=ctx.emit)


def _review(ctx, service, refs, template: str):
    return service.review_answer(refs, template, on_part=lambda k, n, part: ctx.emit((k, n, part)),
                                 cancel=ctx.cancel_event)


def _read(ctx, service, refs):
    return service.read(refs, on_progress=ctx.progress, cancel=ctx.cancel_event)


class EngineController(QObject):
    sig_state = Signal(str, str)
    """Engine state and detail (launching, loading, ready, failed, …)."""
    sig_ready = Signal(object)
    """The engine is ready with this plan."""
    sig_failed = Signal(object)
    """The engine could not start: the exception (StartError carries the log tail)."""
    sig_delta = Signal(str)
    """A piece of the answer being generated."""
    sig_evidence = Signal(object)
    """A question's evidence cards were found (app.core.answer.evidence.Evidence), before
    the engine reads anything."""
    sig_answer = Signal(str, object)
    """An answer arrived: the question, app.core.answer.qa.Answer."""
    sig_ask_failed = Signal(str, object, bool)
    """Asking failed: the question, the exception, whether the user stopped it."""
    sig_reading = Signal(str)
    """Before the first word: what the engine reads and how far it is."""
    sig_background = Signal(str)
    """Background reading of the open documents: "reading the contract: 45%", "" when done."""
    sig_answer_progress = Signal(str)
    """Where the question (or review) running stands, ticking every second: "writing the
    answer · 14 s · 96 tokens (6.9/s)"; "" when it ended."""

    READING_GRACE_MS = 10_000
    """A document just opened is usually asked about at once: its background reading waits
    this long (and again after each question), so the first question has the machine alone."""

    def __init__(self, runtime_factory=None, parent=None, service: Assistant | None = None) -> None:
        super().__init__(parent)
        self.service = service or Assistant(runtime_factory=runtime_factory)
        self.service.subscribe(self._relay)
        self.state = "stopped"
        self._starting = False
        self._ask_job = None
        self._evidence_job = None
        self._read_job = None
        self._closing = threading.Event()
        self.progress = AnswerProgress(self)            # the running question's ticking line
        self.progress.sig_line.connect(self._tell_progress)
        self._reading_key: tuple | None = None          # the document set read (or to read) in the background
        self._reading_args: tuple | None = None
        self._reading_timer = QTimer(self, singleShot=True, interval=self.READING_GRACE_MS,
                                     timeout=self._start_reading)

    @property
    def plan(self):
        """The plan that runs now, as the service has it (never a copy that goes stale)."""
        return self.service.plan

    @property
    def conversations(self) -> dict:
        """Per document set: the append-only context (the service's)."""
        return self.service.conversations

    def start(self, model_id: str | None = None, switch: bool = False) -> None:
        """Start the engine in the background (probe → plan → launch); `switch`: restart it
        with `model_id` preferred."""
        if self._starting or (self.service.started and not switch):
            return
        self._closing.clear()
        self._starting = True
        self.sig_state.emit("planning", "probing hardware and choosing a plan")
        if switch:
            workers.run(_use_model, self.service, model_id, self._closing, on_done=self._on_started,
                        on_error=self._on_start_failed)
        else:
            workers.run(_start, self.service, self._closing, on_done=self._on_started,
                        on_error=self._on_start_failed)

    def use_model(self, model_id: str) -> None:
        """Restart the engine with `model_id` preferred: the planner makes a new plan and says why.
        The conversations stay (they are kept per document set)."""
        self._stop_jobs()
        self.state = "stopped"
        self.start(model_id, switch=True)

    def _relay(self, event) -> None:
        # Called from the engine's threads: a signal carries it to the UI thread.
        if isinstance(event, EngineState):
            self.sig_state.emit(event.state, event.detail)

    def _on_started(self, plan) -> None:
        self._starting = False
        if self._closing.is_set():
            return
        self.state = "ready"
        self.sig_ready.emit(plan)

    def _on_start_failed(self, exc: Exception) -> None:
        self._starting = False
        if self._closing.is_set():
            return
        log.error("engine failed to start: %s", exc)
        self.state = "failed"
        self.sig_state.emit("failed", str(exc))
        self.sig_failed.emit(exc)

    def ready(self) -> bool:
        return self.state == "ready" and self.service.running

    def context_tokens(self) -> int:
        return int(getattr(self.plan, "max_model_len", 0) or 0)

    # -- questions ------------------------------------------------------------
    def conversation(self, refs):
        """This document set's conversation, as it was left (also after a restart)."""
        return self.service.conversation(refs)

    def ask(self, library, refs, question: str, evidence=None) -> None:
        """The evidence first (a job of its own, started first: it never waits for the engine),
        then the engine's answer, whose prompt starts with the evidence's pages. `evidence`:
        already found and shown (a comparison's table): the prompt starts with it."""
        self.service.library = library
        asked, found = time.perf_counter(), Future()
        if evidence is not None:
            found.set_result(evidence)
        else:
            self._evidence_job = workers.run(
                _evidence, self.service, refs, question, asked, found,
                on_done=self.sig_evidence.emit,
                on_error=lambda exc, job=None: log.warning("evidence for %r: %s", question, exc))
        conv = self.conversation(refs)
        estimate = ProgressEstimate(what_is_read("retrieval"))
        self._question_began()

        def message(value) -> None:
            if isinstance(value, str):
                self.sig_delta.emit(value)
            elif isinstance(value, Writing):        # the prompt is read: the answer is being generated
                self.progress.writing(value)
            elif isinstance(value, (CardsJudged, CardsFound)):    # the model chose or re-found the cards: shown now
                self.sig_evidence.emit(value.evidence)
                self.progress.say(value.line())
            else:                                   # qa.Reading (or Choosing): said before the engine reads
                estimate.what = what_is_read(value.mode)
                self.progress.say(value.line())

        def done(answer) -> None:
            self.service.save_conversation(conv)
            self._question_ended()
            self.sig_answer.emit(question, answer)

        self._ask_job = workers.run(
            _ask, self.service, refs, question, conv, found,
            on_message=message,
            on_progress=lambda read, total: self.progress.say(estimate(read, total).line()),
            on_done=done,
            on_error=lambda exc, job=None: self._on_ask_failed(question, exc))

    def _tell_progress(self, line: str) -> None:
        """The running question's line: in its answer bubble (until words show) and the status bar."""
        if line:
            self.sig_reading.emit(line)
        self.sig_answer_progress.emit(line)

    def _question_began(self) -> None:
        """A question holds the machine: the background reading's line would be stale (it is cut
        until the answer is done), and its grace starts again after the answer."""
        if self._reading_key is not None:
            self.sig_background.emit("")
        if self._reading_timer.isActive():
            self._reading_timer.stop()

    def _question_ended(self) -> None:
        self.progress.stop()
        if self._reading_args is not None and (self._read_job is None or self._read_job.finished):
            self._reading_timer.start()

    def warm_evidence(self, library, refs) -> None:
        """Ready the evidence search for these documents (their first question's cards come
        at once); in the background, and a failure costs only that head start."""
        self.service.library = library
        workers.run(_warm_evidence, self.service, refs,
                    on_error=lambda exc, job=None: log.info("evidence warm-up: %s", exc))

    def review(self, library, refs, template: str, label: str) -> None:
        """A review template by map-reduce (parts said as they are read); the result arrives
        on sig_answer like any answer, with `label` as its question."""
        self.service.library = library
        self._question_began()

        def part(value) -> None:
            finished = self.progress.part(*value)    # the part before this one is done: shown now
            if finished is not None and (finished.notes or "").strip():
                self.sig_delta.emit(f"{finished.pages_label}: {finished.notes.strip()}\n\n")

        def done(answer) -> None:
            self._question_ended()
            self.sig_answer.emit(label, answer)

        self._ask_job = workers.run(
            _review, self.service, refs, template,
            on_message=part, on_done=done,
            on_error=lambda exc, job=None: self._on_ask_failed(label, exc))

    def read_in_background(self, library, refs, label: str) -> None:
        """Read the open documents whole while the user looks at them (ARCHITECTURE §2), once
        READING_GRACE_MS passed without a question: a document just opened is usually asked
        about at once, and that question comes first. A question pre-empts a reading that
        runs (the runtime cuts it and resumes it afterwards). Other documents than the ones
        read or waiting: that reading is dropped and its line cleared (it spoke of a
        document no longer asked)."""
        if not self.ready():
            return
        key = tuple(sorted(r.doc_id for r in refs))
        if key != self._reading_key:
            if self._read_job is not None and not self._read_job.finished:
                self._read_job.cancel()
            self.sig_background.emit("")
        elif self._read_job is not None and not self._read_job.finished:
            return
        self._reading_key, self._reading_args = key, (library, refs, label)
        if not (self._ask_job is not None and not self._ask_job.finished):
            self._reading_timer.start()

    def _start_reading(self) -> None:
        if self._reading_args is None or not self.ready() or \
                (self._ask_job is not None and not self._ask_job.finished):
            return
        library, refs, label = self._reading_args
        self.service.library = library
        key, estimate = self._reading_key, ProgressEstimate(f"reading {label}")

        def say(line: str) -> None:                 # a reading of documents no longer asked says nothing
            if key == self._reading_key:
                self.sig_background.emit(line)

        def done(result) -> None:
            if key == self._reading_key:
                self._reading_args = None
            say("" if result.get("already") else f"read {label}: answers use the whole document")

        self._read_job = workers.run(
            _read, self.service, refs,
            on_progress=lambda read, total: say(estimate(read, total).line()),
            on_done=done, on_error=lambda exc, job=None: self._on_read_failed(exc, key))

    def _on_read_failed(self, exc: Exception, key: tuple | None = None) -> None:
        from app.core.failures import BadInput
        log.info("background reading: %s", exc)
        if key is not None and key != self._reading_key:
            return
        self._reading_args = None
        if isinstance(exc, BadInput):
            share = f" (about {exc.share:.0%} fits)" if isinstance(exc, DoesNotFit) else ""
            self.sig_background.emit(f"too long to read whole{share}: answers use passages")
        else:
            self.sig_background.emit("")

    def prepare(self, library, refs) -> None:
        """Let the engine restore what it kept of these documents (see EngineRuntime.prepare);
        in the background, and a failure only costs the first answer its head start."""
        if not self.ready():
            return
        self.service.library = library
        workers.run(_prepare, self.service, refs,
                    on_error=lambda exc, job=None: log.info("engine prepare: %s", exc))

    def _on_ask_failed(self, question: str, exc: Exception) -> None:
        self._question_ended()
        stopped = self._ask_job is not None and self._ask_job.ctx.cancelled
        self.sig_ask_failed.emit(question, exc, stopped)

    def stop_answer(self) -> None:
        if self._ask_job is not None and not self._ask_job.finished:
            self._ask_job.cancel()

    def shutdown(self) -> None:
        """Stop generation and the engine process (called when the window closes)."""
        self._closing.set()
        self._stop_jobs()
        try:
            self.service.stop()
        except Exception as exc:  # noqa: BLE001 - exit must go on
            log.warning("engine stop: %s", exc)
        self.state = "stopped"

    def _stop_jobs(self) -> None:
        self._reading_timer.stop()
        self.progress.stop()
        self.stop_answer()
        if self._read_job is not None and not self._read_job.finished:
            self._read_job.cancel()
