"""The engine seen from the window: start it off the UI thread, relay its status,
ask questions with streaming and Stop, stop it on exit."""
from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QObject, Signal

from app.qt import workers

log = logging.getLogger("pagewise.gui")


def plan_summary(plan) -> tuple[str, list[str]]:
    """The plan in one line and its reasons (for the tooltip)."""
    try:
        from app.core.plan import planner
        line = planner.explain(plan)
    except Exception:  # noqa: BLE001 - the status bar must not fail on a plan it cannot word
        line = f"{getattr(plan, 'engine', '?')} · {getattr(plan, 'model_id', '?')}"
    return line, list(getattr(plan, "reasons", ()) or ())


def _start(ctx, runtime, closing: threading.Event) -> object:
    runtime.start()
    if closing.is_set():     # the window closed while the engine was loading: do not leave it running
        runtime.stop()
        raise RuntimeError("the window closed while the engine was starting")
    return runtime.plan


def _prepare(ctx, runtime, library, refs) -> bool:
    return runtime.prepare(library, refs)


def _ask(ctx, runtime, library, refs, question: str):
    return runtime.ask(library, refs, question, on_delta=ctx.emit, cancel=ctx.cancel_event)


class EngineController(QObject):
    sig_state = Signal(str, str)
    """Engine state and detail (launching, loading, ready, failed, …)."""
    sig_ready = Signal(object)
    """The engine is ready with this plan."""
    sig_failed = Signal(object)
    """The engine could not start: the exception (StartError carries the log tail)."""
    sig_delta = Signal(str)
    """A piece of the answer being generated."""
    sig_answer = Signal(str, object)
    """An answer arrived: the question, app.core.answer.qa.Answer."""
    sig_ask_failed = Signal(str, object, bool)
    """Asking failed: the question, the exception, whether the user stopped it."""

    def __init__(self, runtime_factory=None, parent=None) -> None:
        super().__init__(parent)
        self._factory = runtime_factory
        self.runtime = None
        self.plan = None
        self.state = "stopped"
        self._ask_job = None
        self._closing = threading.Event()

    def start(self) -> None:
        """Start the engine in the background (probe → plan → launch)."""
        if self.runtime is not None:
            return
        from app.worker.runtime import EngineRuntime

        factory = self._factory or (lambda on_status: EngineRuntime(on_status=on_status))
        self.runtime = factory(self._relay_status)
        self._relay_status("planning", "probing hardware and choosing a plan")
        workers.run(_start, self.runtime, self._closing, on_done=self._on_started,
                    on_error=self._on_start_failed)

    def _relay_status(self, state: str, detail: str) -> None:
        # Called from the engine's threads: a signal carries it to the UI thread.
        self.sig_state.emit(state, detail)

    def _on_started(self, plan) -> None:
        if self._closing.is_set():
            return
        self.plan, self.state = plan, "ready"
        self.sig_ready.emit(plan)

    def _on_start_failed(self, exc: Exception) -> None:
        if self._closing.is_set():
            return
        log.error("engine failed to start: %s", exc)
        self.state = "failed"
        self.sig_state.emit("failed", str(exc))
        self.sig_failed.emit(exc)

    def ready(self) -> bool:
        return self.plan is not None and getattr(self.runtime, "client", None) is not None

    def context_tokens(self) -> int:
        return int(getattr(self.plan, "max_model_len", 0) or 0)

    # -- questions ------------------------------------------------------------
    def ask(self, library, refs, question: str) -> None:
        self._ask_job = workers.run(
            _ask, self.runtime, library, refs, question,
            on_message=self.sig_delta.emit,
            on_done=lambda answer: self.sig_answer.emit(question, answer),
            on_error=lambda exc, job=None: self._on_ask_failed(question, exc))

    def prepare(self, library, refs) -> None:
        """Let the engine restore what it kept of these documents (see EngineRuntime.prepare);
        in the background, and a failure only costs the first answer its head start."""
        if not self.ready():
            return
        workers.run(_prepare, self.runtime, library, refs,
                    on_error=lambda exc, job=None: log.info("engine prepare: %s", exc))

    def _on_ask_failed(self, question: str, exc: Exception) -> None:
        stopped = self._ask_job is not None and self._ask_job.ctx.cancelled
        self.sig_ask_failed.emit(question, exc, stopped)

    def stop_answer(self) -> None:
        if self._ask_job is not None and not self._ask_job.finished:
            self._ask_job.cancel()

    def shutdown(self) -> None:
        """Stop generation and the engine process (called when the window closes)."""
        self._closing.set()
        self.stop_answer()
        if self.runtime is not None:
            try:
                self.runtime.stop()
            except Exception as exc:  # noqa: BLE001 - exit must go on
                log.warning("engine stop: %s", exc)
        self.runtime, self.plan, self.state = None, None, "stopped"
