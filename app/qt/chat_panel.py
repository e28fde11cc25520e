"""Ask box, one-click templates, and the transcript: questions, streamed answers, markers.

The transcript is rebuilt from `entries` (at most ~20 times a second while streaming),
which keeps the widget stateless and makes history from the library look identical
to answers given now.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.answer.streaming import partial_answer, readable_answer
from app.qt import compare_view, evidence_view, interface_language
from app.qt.conversation_bar import ConversationBar
from app.qt.scope_chips import ScopeChips


@dataclass
class Entry:
    question: str
    text: str = ""
    citations: list = field(default_factory=list)
    meta: str = ""                  # "retrieval · 3.1 s" or an error
    state: str = "streaming"        # streaming | done | stopped | failed
    raw: str = ""                   # what has streamed so far
    status: str = ""                # before the first word: "reading 2,100 tokens ≈ 9 s", then its progress
    evidence: object = None         # app.core.answer.evidence.Evidence: shown first, before the model's part
    headline: str = "answer"        # "evidence": the model's text is not backed by its citations
    shown_as: str = ""              # the answer's status: "answer" | "not_backed" | "not_addressed"
    data: dict | None = None        # the answer as stored (Answer.to_dict): what an export keeps
    when: float | None = None       # when it was answered


def markdown_html(text: str) -> str:
    """Markdown (tables from "Compare clauses", lists from reviews) as an HTML fragment."""
    doc = QTextDocument()
    doc.setMarkdown(text)
    full = doc.toHtml()
    start = full.find(">", full.find("<body")) + 1
    return full[start:full.rfind("</body>")]


class ChatPanel(QWidget):
    sig_ask = Signal(str)
    """The user asks this question."""
    sig_review = Signal(str, str)
    """A whole-document review template: its prompt key ("review_dates") and its title."""
    sig_compare = Signal(str)
    """"Compare clauses": the topics typed in the ask box ("" for the template's own)."""
    sig_stop = Signal()
    """The user wants generation to stop."""
    sig_marker_clicked = Signal(int, int)
    """An inline citation marker was clicked: entry index, citation index."""
    sig_evidence_clicked = Signal(int, int)
    """An evidence card in the transcript was clicked: entry index, card index."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.entries: list[Entry] = []
        self._templates: list = []
        self.transcript = QTextBrowser(objectName="transcript", openLinks=False)
        self.transcript.anchorClicked.connect(self._on_anchor)
        self.template_row = QHBoxLayout()
        self.template_row.setContentsMargins(0, 0, 0, 0)
        self.ask_box = QPlainTextEdit(objectName="askBox")
        self.ask_box.setPlaceholderText("Ask about the document…  (Ctrl+Enter)")
        self.ask_box.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 16)
        self.ask_button = QPushButton("Ask", objectName="askButton", default=True)
        self.ask_button.clicked.connect(self._on_ask)
        self.stop_button = QPushButton("Stop", objectName="stopButton", enabled=False)
        self.stop_button.setToolTip("Stop generating (Esc)")
        self.stop_button.clicked.connect(self.sig_stop.emit)
        self.hint = QLabel("", objectName="askHint", wordWrap=True)
        self.scope = ScopeChips(self)       # the documents asked, above the question box
        self.conversations = ConversationBar(self)   # the conversations about them, above the transcript
        self._build()
        self._render_timer = QTimer(self, singleShot=True, interval=50, timeout=self.render)
        self.render()

    def _build(self) -> None:
        buttons = QHBoxLayout()
        buttons.addWidget(self.hint, 1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.ask_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.conversations)
        layout.addWidget(self.transcript, 1)
        layout.addLayout(self.template_row)
        layout.addWidget(self.scope)
        layout.addWidget(self.ask_box)
        layout.addLayout(buttons)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):   # only while typing the question
            QShortcut(QKeySequence(keys), self.ask_box, self._on_ask,
                      context=Qt.ShortcutContext.WidgetShortcut)

    # -- input ----------------------------------------------------------------
    def set_templates(self, templates: list) -> None:
        """One button per template (app.qt.templates.Template)."""
        while self.template_row.count():
            item = self.template_row.takeAt(0)
            if item.widget():
                item.widget().deleteLater()
        self._templates = templates
        for template in templates:
            button = QPushButton(template.title, objectName="templateButton", flat=True)
            button.setToolTip(template.question("<topic from the ask box>")[:400])
            button.clicked.connect(lambda _=False, t=template: self.ask_template(t))
            self.template_row.addWidget(button)
        self.template_row.addStretch(1)
        self._sync_buttons()

    def ask_template(self, template) -> None:
        """Ask a template's question; compare templates take their topic from the ask box."""
        if template.key.startswith("review_"):    # the whole document, by parts when it is long
            self.sig_review.emit(template.key, template.title)
            return
        topic = self.ask_box.toPlainText() if "{topic}" in template.prompt else ""
        if topic:
            self.ask_box.clear()
        if template.key.startswith("compare"):   # evidence first: the table from the search alone
            self.sig_compare.emit(topic)
            return
        self.sig_ask.emit(template.question(topic))

    def _on_ask(self) -> None:
        question = self.ask_box.toPlainText().strip()
        if question and self.ask_button.isEnabled():
            self.ask_box.clear()
            self.sig_ask.emit(question)

    def set_ready(self, ready: bool, hint: str = "") -> None:
        """Whether questions can be asked now; the hint says why not (or what is going on)."""
        self._ready = ready
        self.hint.setText(hint)
        self._sync_buttons()

    def busy(self) -> bool:
        return bool(self.entries) and self.entries[-1].state == "streaming"

    def _sync_buttons(self) -> None:
        can_ask = getattr(self, "_ready", False) and not self.busy()
        self.ask_button.setEnabled(can_ask)
        self.stop_button.setEnabled(self.busy())
        self.conversations.set_enabled(not self.busy())
        for i in range(self.template_row.count()):
            widget = self.template_row.itemAt(i).widget()
            if widget:
                widget.setEnabled(can_ask)

    # -- answers --------------------------------------------------------------
    def begin(self, question: str) -> None:
        self.entries.append(Entry(question))
        self._sync_buttons()
        self.render()

    def stream(self, delta: str) -> None:
        entry = self.entries[-1]
        entry.raw += delta
        entry.text = partial_answer(entry.raw)
        if not self._render_timer.isActive():
            self._render_timer.start()

    def restart_stream(self, note: str) -> None:
        """The engine was restarted mid-answer and the question asked again: what streamed
        so far goes (the retry streams the answer from its start)."""
        if self.entries and self.entries[-1].state == "streaming":
            entry = self.entries[-1]
            entry.raw, entry.text, entry.status = "", "", note
            self.render()

    def set_status(self, text: str) -> None:
        """What the engine does before the answer's first word (shown in place of "…")."""
        if self.entries and self.entries[-1].state == "streaming" and not self.entries[-1].text:
            self.entries[-1].status = text
            if not self._render_timer.isActive():
                self._render_timer.start()

    def show_evidence(self, evidence) -> None:
        """The question's evidence cards, at the top of its entry (the model still reading)."""
        if self.entries and self.entries[-1].question == evidence.question:
            self.entries[-1].evidence = evidence
            self.render()
            # the question and its evidence in view, once laid out (the answer comes under them)
            anchor = f"q{len(self.entries) - 1}"
            QTimer.singleShot(0, lambda: self.transcript.scrollToAnchor(anchor))

    def finish(self, text: str, citations: list, meta: str, headline: str = "answer", shown_as: str = "") -> None:
        """The answer arrived; `headline` "evidence": its citations do not back it, so it is
        shown under the evidence as the model's unbacked summary."""
        text, cut = readable_answer(text)
        if cut:
            meta = f"{meta} · answer cut off" if meta else "answer cut off"
        entry = self.entries[-1]
        entry.text, entry.citations, entry.meta, entry.state = text, list(citations), meta, "done"
        entry.headline, entry.shown_as = headline, shown_as
        self._sync_buttons()
        self.render()

    def fail(self, message: str, stopped: bool = False) -> None:
        entry = self.entries[-1]
        entry.state = "stopped" if stopped else "failed"
        entry.meta = message
        self._sync_buttons()
        self.render()

    def set_history(self, entries: list[Entry]) -> None:
        self.entries = list(entries)
        self._sync_buttons()
        self.render()
        if self.entries and self.entries[-1].evidence is not None:     # the last question in view
            anchor = f"q{len(self.entries) - 1}"
            QTimer.singleShot(0, lambda: self.transcript.scrollToAnchor(anchor))

    def scroll_to_entry(self, index: int) -> None:
        """Entry `index`'s question at the top of the transcript, once laid out."""
        QTimer.singleShot(0, lambda: self.transcript.scrollToAnchor(f"q{index}"))

    # -- rendering ------------------------------------------------------------
    def render(self) -> None:
        bar = self.transcript.verticalScrollBar()
        kept = bar.value()
        # follow the text as it comes, except under evidence: the cards stay in view
        at_end = bar.value() >= bar.maximum() - 4 and not (self.entries and self.entries[-1].evidence is not None)
        if not self.entries:
            self.transcript.setHtml(interface_language.tr(
                "<p class='placeholder' style='color:gray'>Open a PDF and ask a question. "
                "Answers cite pages; click a citation to see the words in the document.</p>"))
        else:
            self.transcript.setHtml(interface_language.tr(    # its labels in the interface's language
                "".join(self._entry_html(i, e) for i, e in enumerate(self.entries))))
        bar.setValue(bar.maximum() if at_end else kept)     # setHtml went back to the top

    def _entry_html(self, index: int, entry: Entry) -> str:
        question = html.escape(entry.question).replace("\n", "<br>")
        top = "0" if index == 0 else "18px"
        parts = [f"<p style='margin-top:{top}; margin-bottom:6px'><a name='q{index}'><b>Q:&nbsp;</b></a>"
                 f"<b>{question}</b></p>"]
        if compare_view.is_table(entry.evidence):     # "Compare clauses": the table, then the model's row
            parts += [compare_view.table_html(index, entry.evidence), compare_view.model_html(entry, markdown_html)]
        elif entry.evidence is not None:
            if entry.state == "done" and entry.shown_as == "not_addressed" and entry.evidence.addressed:
                # The model found nothing, but the search found the cards on topic: say whose view it is,
                # not "the document does not address it" (a small model misses what the cards state).
                parts.append(evidence_view.heading("No answer found by the model", "#b9770e")      # above the cards
                             + "<p style='color:#b9770e; margin:0 0 4px 0'>The model found no answer in the "
                             "cards below; the search found them on this question's topic: read them.</p>")
            parts.append(evidence_view.evidence_html(index, entry.evidence))
            parts.append(self._model_html(entry))
        elif entry.state == "done" and entry.text:
            if entry.headline == "answer":
                parts.append(markdown_html(entry.text))
            else:       # a review its citations do not back: greyed and labelled, never as an answer
                parts.append(evidence_view.unchecked_review_html(entry.text))
        elif entry.text:    # being written: not checked yet
            parts.append(evidence_view.heading("The model's notes (being written, then checked)", "gray")
                         + f"<p style='color:gray'>{html.escape(entry.text).replace(chr(10), '<br>')}</p>")
        elif entry.state == "streaming":
            parts.append(f"<p style='color:gray'>{html.escape(entry.status) or '…'}</p>")
        # sources only for an answer its citations back: an unbacked one must not send the reader there
        backed = entry.headline == "answer" and bool(entry.text.strip())     # and the text it backs is shown
        markers = " ".join(f"<a href='cite:{index}:{n}'>[{n + 1}]</a>" for n in range(len(entry.citations))
                           if backed)
        if markers:
            parts.append(f"<p style='margin-top:4px'>Sources: {markers}</p>")
        if entry.meta:
            colour = "#d64541" if entry.state == "failed" else "gray"
            parts.append(f"<p style='color:{colour}; font-size:small; margin-top:2px'>{html.escape(entry.meta).replace(chr(10), '<br>')}</p>")
        return "".join(parts)

    @staticmethod
    def _model_html(entry: Entry) -> str:
        """The model's part under the evidence: "Answer" when its citations back it; greyed
        as an unbacked summary otherwise; greyed while it is still being written."""
        if entry.state == "done" and entry.shown_as == "not_addressed":     # said above the cards
            return evidence_view.unbacked_html(entry.text) if entry.text else ""
        if entry.state == "done" and entry.text:
            if entry.headline == "answer":
                return evidence_view.heading("Answer", "#1e8449") + markdown_html(entry.text)
            return evidence_view.unbacked_html(entry.text)
        if entry.text:
            return (evidence_view.heading("The model's answer (being written, then checked)", "gray")
                    + f"<p style='color:gray'>{html.escape(entry.text).replace(chr(10), '<br>')}</p>")
        if entry.state == "streaming":
            return f"<p style='color:gray'>{html.escape(entry.status) or 'the model is reading…'}</p>"
        return ""

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith(("cite:", "evidence:")):
            kind, entry, n = text.split(":")
            signal = self.sig_marker_clicked if kind == "cite" else self.sig_evidence_clicked
            signal.emit(int(entry), int(n))
