""""Compare clauses" in the window, evidence first: the chat shows the short question
("Compare clauses: termination, liability, …"), the table comes from the search alone (a job
of its own, never behind the engine), then the engine is asked — with the internal prompt and
the table as its evidence — for the summary row, shown only when its citations back it."""
from __future__ import annotations

import logging
import time

from PySide6.QtCore import QObject, Signal

from app.qt import workers

log = logging.getLogger("pagewise.gui")


def _table(ctx, service, refs, topics, asked: float):
    return service.compare(refs, topics, started=asked)


class CompareFlow(QObject):
    sig_table_shown = Signal(object)
    """The comparison table is on screen (app.core.compare.ClauseTable), before any model."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window

    def start(self, topic_text: str = "") -> bool:
        """Compare the documents asked (two or more) on the topics typed (or the template's)."""
        from app.core.compare import parse_topics, short_question
        win = self.window
        infos = win.doc_infos()
        if len(infos) < 2 or win.chat.busy():
            return False
        refs, topics = win._refs(), parse_topics(topic_text)
        lang = "zh" if all(i.lang == "zh" for i in infos) else "en"
        question = short_question(topics, lang)
        win.chat.begin(question)
        win.citations.set_citations([])
        win._asked_ids = [i.id for i in infos]
        win.engine.service.library = win.library
        workers.run(_table, win.engine.service, refs, topics, time.perf_counter(),
                    on_done=lambda table: self._on_table(question, refs, table),
                    on_error=lambda exc, job=None: self._on_failed(question, exc))
        return True

    def _on_table(self, question: str, refs, table) -> None:
        from app.core.compare.summary import model_prompt
        win = self.window
        entries = win.chat.entries
        if not entries or entries[-1].question != question or entries[-1].state != "streaming":
            return          # stopped meanwhile
        evidence = table.evidence()
        win._on_evidence(evidence)        # in the transcript and the citations panel, the first shown
        self.sig_table_shown.emit(table)
        if win.engine.ready():
            win.engine.ask(win.library, refs, model_prompt(table), evidence=evidence)
        else:
            win.chat.finish("", [], "the table is from the search alone; no model is running")
            win.sig_answer_shown.emit()

    def _on_failed(self, question: str, exc: Exception) -> None:
        log.warning("compare %r: %s", question, exc)
        win = self.window
        if win.chat.busy() and win.chat.entries[-1].question == question:
            win.chat.fail(f"The comparison failed: {exc}")
            win._sync_chat()
