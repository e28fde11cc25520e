"""`pagewise gui --screenshot OUT.png [-q QUESTION]`: wait until the documents are shown
(and the answer with its highlight has arrived), grab the window, save it, quit."""
from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

log = logging.getLogger("pagewise.gui")
TIMEOUT_S = 600           # a first whole-document answer on a slow CPU can take minutes
SETTLE_MS = 400           # let the last pages and overlays paint
ENGINE_WAIT_S = 120       # without a question, wait this long for the engine's state to settle


class ScreenshotRunner(QObject):
    def __init__(self, window, out: str, question: str | None, has_files: bool) -> None:
        super().__init__(window)
        self.window, self.out, self.question = window, out, question
        self.code = 0
        self._asked = False
        self._finishing = False
        self._polling = False
        self._docs_ready = not has_files
        self._deadline = time.monotonic() + TIMEOUT_S
        self._engine_deadline = time.monotonic() + ENGINE_WAIT_S
        self._open_failed = False
        window.loader.sig_failed.connect(lambda *_: setattr(self, "_open_failed", True))
        window.loader.sig_refused.connect(self._on_refused)
        window.sig_documents_ready.connect(self._on_docs)
        window.sig_answer_shown.connect(self._on_answer)
        window.engine.sig_ready.connect(lambda plan: self._maybe_ask())
        window.engine.sig_failed.connect(lambda exc: self._finish(1) if self.question else None)
        self._watchdog = QTimer(self, interval=1000, timeout=self._check_deadline)

    def _on_refused(self, *_) -> None:
        """A file refused before it was opened: no documents-ready follows, so settle now."""
        self._open_failed = True
        self._on_docs()

    def start(self) -> None:
        self._watchdog.start()
        if self._docs_ready:
            QTimer.singleShot(SETTLE_MS, self._on_docs)

    def _on_docs(self) -> None:
        self._docs_ready = True
        if self.question:
            self._maybe_ask()
        elif not self._polling:
            self._polling = True
            self._await_engine()

    def _await_engine(self) -> None:
        """Show the engine's real state (ready or failed), not "loading"."""
        if self._engine_settled():
            self._finish(1 if self._open_failed else 0)
        else:
            QTimer.singleShot(250, self._await_engine)

    def _engine_settled(self) -> bool:
        engine = self.window.engine
        return engine.ready() or engine.state == "failed" or time.monotonic() > self._engine_deadline

    def _maybe_ask(self) -> None:
        if self.question and self._docs_ready and not self._asked and self.window.engine.ready():
            if not self.window.doc_infos():
                return self._finish(1)
            self._asked = True
            self.window.ask(self.question)

    def _on_answer(self) -> None:
        if self._asked:
            self._finish(0 if self.window.chat.entries[-1].state == "done" else 1)

    def _check_deadline(self) -> None:
        if time.monotonic() > self._deadline:
            log.error("screenshot: gave up waiting after %s s", TIMEOUT_S)
            self._finish(1)

    def _finish(self, code: int) -> None:
        if self._finishing:
            return
        self._finishing = True
        self.code = code
        self._watchdog.stop()
        QTimer.singleShot(SETTLE_MS, self._wait_for_pages)

    def _wait_for_pages(self, tries: int = 20) -> None:
        """Grab once the visible pages are rendered (or after ~2 s, whichever first)."""
        panes = [p for p in (self.window.pane_a, self.window.pane_b) if p.isVisible() and p.path]
        if tries and not all(p.view.settled() for p in panes):
            QTimer.singleShot(100, lambda: self._wait_for_pages(tries - 1))
            return
        saved = self.window.grab().save(self.out)
        log.info("screenshot %s saved=%s", self.out, saved)
        self.window.close()
        QApplication.instance().exit(self.code if saved else 1)
