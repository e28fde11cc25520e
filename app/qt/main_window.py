"""The main window: PDF pane(s) in the centre, chat and citations on the right, status below.

It wires the parts together; the work itself lives in the loader (documents), the engine
controller (answers), the panes (rendering) and the panels (what the user reads).
"""
from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.library.library import path_text
from app.qt import context_notice, transcript_entries as history, interface_language, templates, workers
from app.qt.transcript_entries import is_review, shown_status
from app.qt import export_actions as answer_export
from app.qt import window_state as gui_settings
from app.qt.chat_panel import ChatPanel
from app.qt.citation_panel import CitationPanel
from app.qt.compare_flow import CompareFlow
from app.qt.compare_layout import SideBySide
from app.qt.conversations import Conversations
from app.qt.doc_loader import DocumentLoader, original_path
from app.qt.library_panel import LibraryPanel
from app.qt.engine_controller import EngineController
from app.qt.error_dialog import one_line, show_error
from app.qt.pdf_pane import PdfPane
from app.qt.start_page import StartPage
from app.qt.status_bar import ReadingsPoller, StatusBar
from app.qt.window_actions import build_actions
from app.service.events import plan_summary
from app.qt.screen_fit import resize_within_screen

log = logging.getLogger("pagewise.gui")


class MainWindow(QMainWindow):
    sig_documents_ready = Signal()
    """Every open pane's document is displayed and indexed (or has failed)."""
    sig_evidence_shown = Signal()
    """A question's evidence cards are in the transcript (before its answer)."""
    sig_answer_shown = Signal()
    """An answer (or its failure) is on screen, citations included."""
    sig_closed = Signal()
    """The window closed (layout saved, engine stopped)."""

    def __init__(self, library=None, engine: EngineController | None = None, start_engine: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("Pagewise")
        self.setAcceptDrops(True)
        if library is None:
            from app.core.library import Library
            library = Library()
        self.library = library
        self.docs: dict[PdfPane, object] = {}          # pane → DocumentInfo once indexed
        self.opened_from: dict[PdfPane, str] = {}      # pane → the file opened (a scan shows its OCR copy)
        self._pending: set[PdfPane] = set()
        self.settings = gui_settings.gui_settings()
        self._all_templates = templates.load()
        self._build()
        self.loader = DocumentLoader(library, self)
        self.loader.sig_indexed.connect(self._on_indexed)
        self.loader.sig_unsearchable.connect(self._on_unsearchable)
        self.loader.sig_failed.connect(self._on_open_failed)
        self.loader.sig_refused.connect(lambda path, exc: self.statusBar().showMessage(
            f"Not opened: {str(exc).splitlines()[0] if str(exc) else path}", 15000))
        self.engine = engine or EngineController(parent=self)
        self._connect_engine()
        self.poller = ReadingsPoller(parent=self)
        self.poller.sig_readings.connect(self.status.update_readings)
        self.actions_by_name = build_actions(self)
        self.conversations = Conversations(self)             # the list above the transcript (issue 33)
        self.answer_export = answer_export.install(self)   # File menu: copy/export the answer
        from app.qt import model_manager
        model_manager.install(self)                          # Engine menu: Models…, Settings…
        self._restore_layout()
        self._sync_chat()
        self.poller.start()
        interface_language.attach(self)                      # English / 中文, from Settings
        if start_engine:
            self.engine.start()

    # -- layout ---------------------------------------------------------------
    def _build(self) -> None:
        self.pane_a, self.pane_b = (PdfPane(self, "Drop a PDF here or press Ctrl+O"),
                                    PdfPane(self, "Drop the second PDF here or press Ctrl+Shift+O"))
        self.pane_b.hide()
        self.active_pane = self.pane_a
        self.panes = QSplitter(Qt.Orientation.Horizontal, objectName="paneSplitter")
        self.panes.addWidget(self.pane_a)
        self.panes.addWidget(self.pane_b)
        self.chat = ChatPanel(self)
        self.chat.sig_ask.connect(self.ask)
        self.chat.sig_review.connect(self.review)
        self.compare = CompareFlow(self)
        self.chat.sig_compare.connect(self.compare.start)
        self.chat.sig_stop.connect(self.stop_answer)
        self.chat.sig_marker_clicked.connect(self._on_marker)
        self.chat.sig_evidence_clicked.connect(self._on_evidence_clicked)
        self.chat.scope.sig_remove.connect(self._drop_from_scope)
        self.chat.scope.sig_ask_on_screen.connect(lambda: self.set_library_scope([]))
        self.citations = CitationPanel(self)
        self.citations.sig_citation_activated.connect(self.show_citation)
        right = QSplitter(Qt.Orientation.Vertical, objectName="rightSplitter")
        right.addWidget(self._titled("Answer", self.chat))
        right.addWidget(self._titled("Citations", self.citations))
        # the answer first: the citations repeat its cards, so they get the smaller share
        right.setSizes([700, 180])
        right.setStretchFactor(0, 4)
        right.setStretchFactor(1, 1)
        self.right = right
        self.main_split = QSplitter(Qt.Orientation.Horizontal, objectName="mainSplitter")
        self.side_by_side = SideBySide(self)
        self.main_split.addWidget(self._with_start_page(self.side_by_side.wrap(self.panes)))
        self.main_split.addWidget(right)
        self.main_split.setStretchFactor(0, 3)
        self.main_split.setStretchFactor(1, 2)
        self.setCentralWidget(self._with_library_panel(self.main_split))
        self.status = StatusBar(self)
        self.setStatusBar(self.status)
        for pane in (self.pane_a, self.pane_b):
            pane.view.installEventFilter(self)
            pane.sig_open_here.connect(lambda p=pane: self.open_dialog(p))

    def _with_library_panel(self, rest: QWidget) -> QWidget:
        """The library panel (issue 18) left of everything, in a splitter of its own (the
        main splitter's saved sizes stay as they were)."""
        self.library_scope: list[int] = []       # documents chosen in the panel for the question
        self.library_panel = LibraryPanel(self.library, self)
        self.library_panel.sig_open.connect(lambda path: self.open_path(path, self.target_pane()))
        self.library_panel.sig_scope.connect(self.set_library_scope)
        self.library_panel.sig_removed.connect(self._on_library_removed)
        split = QSplitter(Qt.Orientation.Horizontal, objectName="librarySplitter")
        split.addWidget(self.library_panel)
        split.addWidget(rest)
        split.setStretchFactor(1, 1)
        split.setSizes([380, 1020])
        self.library_split = split
        return split

    def set_library_scope(self, doc_ids: list[int]) -> None:
        """Questions go to these library documents (any number) instead of the open ones."""
        self.library_scope = list(doc_ids)
        self._documents_changed()

    def _drop_from_scope(self, doc_id: int) -> None:
        """A chip's ×: the other documents asked stay; none left → the documents on screen."""
        self.set_library_scope([i.id for i in self.doc_infos() if i.id != doc_id])

    def on_screen_infos(self) -> list:
        panes = (self.pane_a, self.pane_b) if self.compare_mode() else (self.pane_a,)
        return [self.docs[p] for p in panes if p in self.docs]

    def _on_library_removed(self, doc_id: int) -> None:
        if doc_id in self.library_scope:
            self.set_library_scope([d for d in self.library_scope if d != doc_id])
        for pane, info in list(self.docs.items()):
            if info.id == doc_id:
                self.docs.pop(pane)
                pane.close_document()
        self._documents_changed()

    def _with_start_page(self, panes: QWidget) -> QWidget:
        """The start page stands where the documents go until one is opened."""
        self.start_page = StartPage(self)
        self.start_page.sig_open_path.connect(lambda path: self.open_path(path, self.pane_a))
        self.start_page.sig_open_dialog.connect(lambda: self.open_dialog(self.pane_a))
        self.doc_stack = QStackedWidget(objectName="docStack")
        self.doc_stack.addWidget(self.start_page)
        self.doc_stack.addWidget(panes)
        self._show_start_page_if_idle()
        return self.doc_stack

    def _show_start_page_if_idle(self) -> None:
        idle = not (self.pane_a.path or self.pane_b.path or not self.pane_b.isHidden())
        if idle:
            self.start_page.set_recent(gui_settings.recent_files(self.settings))
            self.start_page.set_library(self.library.documents())
        self.doc_stack.setCurrentIndex(0 if idle else 1)

    def restore_session(self) -> list[str]:
        """Reopen the documents that were open when the window last closed (those still there)."""
        files = [p for p in gui_settings.open_documents(self.settings) if Path(p).is_file()]
        if files:
            self.open_files(files, compare=len(files) > 1)
        return files

    @staticmethod
    def _titled(title: str, widget: QWidget) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addWidget(QLabel(title, objectName="sectionTitle"))
        layout.addWidget(widget, 1)
        return box

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == event.Type.FocusIn:      # zoom shortcuts act on the pane last used
            self.active_pane = self.pane_b if watched is self.pane_b.view else self.pane_a
            self.side_by_side.mark_active()
        return super().eventFilter(watched, event)

    # -- documents --------------------------------------------------------------
    def compare_mode(self) -> bool:
        return self.pane_b.isVisible()

    def set_compare(self, on: bool) -> None:
        self.pane_b.setVisible(on)
        self.side_by_side.set_on(on)
        self._show_start_page_if_idle()
        if not on and self.pane_b in self.docs:
            self.docs.pop(self.pane_b)
            self.pane_b.close_document()
        self._documents_changed()

    def open_files(self, files: list[str], compare: bool = False) -> None:
        files = [str(f) for f in files]
        if compare or len(files) >= 2:
            self.set_compare(True)
        for pane, path in zip((self.pane_a, self.pane_b) if self.compare_mode() else (self.pane_a,), files):
            self.open_path(path, pane)

    def target_pane(self) -> PdfPane:
        """Where a PDF opened without a pane named goes: side by side, the pane last used."""
        return self.active_pane if self.compare_mode() else self.pane_a

    def open_path(self, path: str, pane: PdfPane | None = None) -> None:
        pane = pane or self.target_pane()
        path = original_path(self.library, str(path))   # never our OCR copy (issue 33.2)
        # a name that is not UTF-8 in the library's \xe9 form: Qt drops lone surrogates from a str
        # (signals, settings), and every opening reads that form back to the file (pdf.on_disk)
        path = path_text(path)
        # what was open stays until the file is known to open (a bad file is refused first)
        self.loader.open(pane, path, on_accepted=lambda: self._open_accepted(pane, path))

    def _open_accepted(self, pane: PdfPane, path: str) -> None:
        self.opened_from[pane] = path
        # a document opened (Ctrl+O, recent, the library's Open, a drop) is the one asked:
        # a scope chosen in the library before must not stick behind a different page
        self.library_scope = []
        self._keep_page(pane)
        self.docs.pop(pane, None)
        self._pending.add(pane)
        pane.set_notice("")
        gui_settings.add_recent(self.settings, path)
        self.doc_stack.setCurrentIndex(1)
        self._sync_chat()

    def open_dialog(self, pane: PdfPane | None = None) -> None:
        pane = pane or self.target_pane()
        start = str(Path(pane.path).parent) if pane and pane.path else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Open PDF", start, "PDF documents (*.pdf)")
        if path:
            if pane is self.pane_b:
                self.set_compare(True)
            self.open_path(path, pane)

    def _on_indexed(self, pane: PdfPane, info) -> None:
        self.docs[pane] = info
        page = gui_settings.page_of(self.settings, info.sha256)
        if page > 1:            # where the reader left it
            pane.go_to_page(page)
        self.library_panel.refresh()
        self._show_searchable_copy(pane, info)
        self._opening_done(pane)

    @staticmethod
    def _show_searchable_copy(pane: PdfPane, info) -> None:
        """A scanned document OCR'd at ingestion is shown from its copy with the invisible
        text layer, so quotes are found and highlighted on the scanned words."""
        from app.core.documents import ocr
        copy = ocr.searchable_copy(info.sha256)
        if copy is None:
            return
        if pane.path != str(copy):
            pane.open(str(copy), None)
        original = info.last_path if ocr.copied_from(info.last_path) is None else info.path
        pane.title.setText(f"{Path(original).name} (OCR)")

    def _on_unsearchable(self, pane: PdfPane, message: str) -> None:
        self._opening_done(pane)
        pane.set_notice("⚠ " + message + ". The pages are shown, but questions cannot be answered from them.")

    def _on_open_failed(self, pane: PdfPane, path: str, exc: Exception) -> None:
        self.docs.pop(pane, None)
        self._opening_done(pane)

    def _documents_changed(self) -> None:
        """Templates, history and the long-document notice follow the open documents."""
        infos = self.doc_infos()
        lang = interface_language.current()     # the review buttons speak the interface's language
        self.chat.set_templates(templates.for_language(self._all_templates, lang, compare=len(infos) > 1))
        if hasattr(self, "conversations"):      # the conversation shown of these documents, with its answers
            self.conversations.refresh()
        self._update_notices()
        self._sync_chat()

    def _opening_done(self, pane: PdfPane) -> None:
        """An opening finished (shown, failed or unsearchable); announce when none is left."""
        self._pending.discard(pane)
        self._documents_changed()
        if not self._pending:
            if self.doc_infos():
                self.engine.warm_evidence(self.library, self._refs())
            self._prepare_engine()
            self.sig_documents_ready.emit()

    def doc_infos(self) -> list:
        if getattr(self, "library_scope", None):   # chosen in the library panel
            return [self.library.get(i) for i in self.library_scope]
        return self.on_screen_infos()

    def _update_notices(self) -> None:
        context = self.engine.context_tokens()
        for pane, info in self.docs.items():
            context_notice.update(self.library, pane, info, context)

    # -- asking ---------------------------------------------------------------
    def _sync_scope(self) -> None:
        """The chips above the question box: what is asked, and a warning when the page on
        screen is not among it."""
        def named(infos):
            return [(i.id, Path(i.last_path or i.path).name) for i in infos]
        asked = self.doc_infos()
        self.chat.scope.set_scope(named(asked), named(self.on_screen_infos()),
                                  removable=bool(self.library_scope) or len(asked) > 1)

    def _sync_chat(self) -> None:
        self._sync_scope()
        if self.engine.state == "failed":
            self.chat.set_ready(False, "The engine failed to start (see the status bar).")
        elif self._pending:
            self.chat.set_ready(False, "Reading the document…")
        elif not self.doc_infos():
            self.chat.set_ready(False, "Open a PDF to ask questions about it.")
        elif not self.engine.ready():
            self.chat.set_ready(False, "The engine is starting…")
        else:
            names = " and ".join(Path(i.last_path or i.path).name for i in self.doc_infos())
            self.chat.set_ready(True, f"Asking {names}")

    def _refs(self) -> list:
        from app.service import doc_refs
        return doc_refs(self.doc_infos())

    def _prepare_engine(self) -> None:
        """Documents and engine both ready: let the engine restore what it kept of them."""
        if self.doc_infos() and not self._pending and self.engine.ready() and not self.chat.busy():
            self.engine.prepare(self.library, self._refs())
            infos = self.doc_infos()
            title = infos[0].title or "the document"
            label = "the documents" if len(infos) > 1 else f"“{title[:24] + '…' if len(title) > 25 else title}”"
            self.engine.read_in_background(self.library, self._refs(), label)

    def ask(self, question: str) -> None:
        infos = self.doc_infos()
        if not infos or not self.engine.ready() or self.chat.busy():
            return
        refs = self._refs()
        self.chat.begin(question)
        self.citations.set_citations([])
        self._asked_ids = [i.id for i in infos]
        self._asked_conversation = self.conversations.for_question()
        self.engine.ask(self.library, refs, question)

    def review(self, prompt_key: str, title: str) -> None:
        """A review template over the whole of the open documents (map-reduce when long)."""
        from app.core.answer import review
        infos, template = self.doc_infos(), review.template_for(prompt_key)
        if not infos or template is None or not self.engine.ready() or self.chat.busy():
            return
        label = f"[{title}]"
        self.chat.begin(label)
        self.citations.set_citations([])
        self._asked_ids = [i.id for i in infos]
        self._asked_conversation = self.conversations.for_question()
        self.engine.review(self.library, self._refs(), template, label)

    def stop_answer(self) -> None:
        self.engine.stop_answer()

    def _connect_engine(self) -> None:
        self.engine.sig_state.connect(self._on_engine_state)
        self.engine.sig_ready.connect(self._on_engine_ready)
        self.engine.sig_failed.connect(lambda exc: show_error(self, exc, "The engine did not start"))
        self.engine.sig_delta.connect(self.chat.stream)
        self.engine.sig_reading.connect(self.chat.set_status)
        self.engine.sig_background.connect(self.status.set_activity)
        self.engine.sig_answer_progress.connect(self.status.set_answer_progress)
        self.engine.sig_evidence.connect(self._on_evidence)
        self.engine.sig_answer.connect(self._on_answer)
        self.engine.sig_ask_failed.connect(self._on_ask_failed)

    def _on_engine_state(self, state: str, detail: str) -> None:
        if state == "restarted" and self.chat.busy():
            self.chat.restart_stream(detail)
        self.status.set_engine_state(state, detail)
        self.start_page.set_engine_state(state, detail)
        plan = self.engine.plan
        if state == "ready" and plan is not None:    # set before "ready"; sig_ready may come much later
            self.start_page.set_plan(plan)
        self._sync_chat()

    def _on_engine_ready(self, plan) -> None:
        line, reasons = plan_summary(plan)
        self.status.set_plan(line, reasons)
        self.start_page.set_plan(plan)
        self.poller.service = self.engine.service
        self._update_notices()
        self._sync_chat()
        self._prepare_engine()

    def _on_evidence(self, evidence) -> None:
        """The evidence cards, at once: atop the answer entry and in the citations panel, the
        first shown on its page (the model has not read anything yet)."""
        entries = self.chat.entries
        if not entries or entries[-1].state != "streaming" or entries[-1].question != evidence.question:
            return      # a stopped or failed question's late evidence
        self.chat.show_evidence(evidence)
        self.citations.set_citations([], self._labels(), evidence.cards)
        self.sig_evidence_shown.emit()
        if evidence.cards:      # after the cards are painted: finding the words on the page takes a while
            QTimer.singleShot(0, lambda: self._show_first_evidence(evidence))

    def _show_first_evidence(self, evidence) -> None:
        if self.citations.evidence()[:1] == [evidence.cards[0].citation()] and self.citations.current < 0:
            self.citations.activate(0)

    def _on_answer(self, question: str, answer) -> None:
        evidence = getattr(answer, "evidence", None)
        cards = evidence.cards if evidence is not None else ()
        headline, shown_as = shown_status(answer)
        self.chat.finish(answer.text, answer.citations, history.meta_line(answer), headline, shown_as)
        data = {**answer.to_dict(), "headline": headline, "status": shown_as}
        self.chat.entries[-1].data, self.chat.entries[-1].when = data, time.time()   # what an export keeps
        if evidence is not None and self.chat.entries[-1].evidence is None:
            self.chat.show_evidence(evidence)      # its own job's signal did not come first
        selected = self.citations.current
        self.citations.set_citations(answer.citations, self._labels(), cards)
        shown = self.chat.entries[-1].question      # as the chat shows it (a comparison's, not its prompt)
        workers.run(lambda ctx, ids, conv: self.engine.service.store_exchange(
                        ids, shown, json.dumps(data, ensure_ascii=False), conversation=conv),
                    list(self._asked_ids), getattr(self, "_asked_conversation", None),
                    on_done=lambda _: self.conversations.refresh_list(), on_error=lambda exc: show_error(self, exc))
        if is_review(answer):          # the review from its start: its heading says how far to trust it
            self.chat.scroll_to_entry(len(self.chat.entries) - 1)
        if answer.citations and headline == "answer":
            self.citations.activate_citation(0)      # the backed answer's first source
        elif cards:
            self.citations.activate(max(selected, 0))   # the evidence stays on screen
        self._sync_chat()
        self.sig_answer_shown.emit()

    def _on_ask_failed(self, question: str, exc: Exception, stopped: bool) -> None:
        self.chat.fail("Stopped." if stopped else one_line(exc), stopped=stopped)
        if not stopped:
            show_error(self, exc, "No answer")
        self._sync_chat()
        self.sig_answer_shown.emit()

    # -- citations --------------------------------------------------------------
    def _labels(self) -> dict[int, str]:
        return {info.id: Path(info.last_path or info.path).name for info in self.docs.values()}

    def pane_for(self, doc_id: int) -> PdfPane:
        for pane, info in self.docs.items():
            if info.id == doc_id and pane.isVisible():
                return pane
        return self.pane_a

    def show_citation(self, citation) -> None:
        """Jump the matching pane to the cited page and highlight the quoted words."""
        pane = self.pane_for(citation.doc_id)
        gui_settings.set_selected_card_of(self.settings, self.conversations.current(), self.citations.current)
        if citation.rects:
            pane.show_citation(citation.page, list(citation.rects))
        else:
            pane.highlight_quote(citation.page, citation.quote)

    def show_entry_sources(self, entry) -> None:
        """The citations panel shows this transcript entry's evidence cards and citations."""
        cards = entry.evidence.cards if entry.evidence is not None else []
        if self.citations.citations() != entry.citations or \
                self.citations.evidence() != [c.citation() for c in cards]:
            self.citations.set_citations(entry.citations, self._labels(), cards)

    def _on_marker(self, entry: int, index: int) -> None:
        self.show_entry_sources(self.chat.entries[entry])
        self.citations.activate_citation(index)

    def _on_evidence_clicked(self, entry: int, index: int) -> None:
        """An evidence card in the transcript: its page, its quote highlighted."""
        self.show_entry_sources(self.chat.entries[entry])
        self.citations.activate(index)

    # -- drag and drop, layout ------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt override
        if any(u.toLocalFile().lower().endswith(".pdf") for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt override
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.toLocalFile().lower().endswith(".pdf")]
        over_b = self.pane_b.isVisible() and self.pane_b.geometry().contains(
            self.pane_b.parentWidget().mapFrom(self, event.position().toPoint()))
        if len(files) >= 2:
            self.open_files(files[:2], compare=True)
        elif files:
            self.open_path(files[0], self.pane_b if over_b else self.pane_a)

    def _restore_layout(self) -> None:
        s = self.settings
        if not self.restoreGeometry(s.value("geometry", b"")):
            resize_within_screen(self, 1400, 900)
        self.restoreState(s.value("state", b""))
        zoom = s.value("zoom", "width")
        for pane in (self.pane_a, self.pane_b):
            pane.view.set_fit(zoom) if zoom in ("width", "page") else pane.view.set_zoom(float(zoom))

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not getattr(self, "_splits_restored", False):
            # Splitter sizes only stick once the window has its real size.
            self._splits_restored = True
            restored = [split.restoreState(self.settings.value(f"split/{split.objectName()}", b""))
                        for split in (self.main_split, self.right, self.panes)]
            if not restored[0]:     # first run: 60 % document, 40 % answers
                self.main_split.setSizes([int(self.width() * 0.6), int(self.width() * 0.4)])

    def save_layout(self) -> None:
        s = self.settings
        s.setValue("geometry", self.saveGeometry())
        s.setValue("state", self.saveState())
        for split in (self.main_split, self.right, self.panes):
            s.setValue(f"split/{split.objectName()}", split.saveState())
        view = self.pane_a.view
        s.setValue("zoom", view.fit_mode() or f"{view.zoom():.3f}")
        s.sync()

    def _keep_page(self, pane: PdfPane) -> None:
        """The page this pane's document is at, to show it there again."""
        info = self.docs.get(pane)
        if info is not None and pane.path and pane.view.page_count():
            gui_settings.set_page_of(self.settings, info.sha256, pane.view.current_page())

    def _keep_unfinished_answer(self) -> None:
        """The window closes mid-answer: the question and the cards already shown are stored in
        its conversation (the model's unfinished text is not: nothing checked it)."""
        entries = self.chat.entries
        if not entries or entries[-1].state != "streaming" or not getattr(self, "_asked_ids", None):
            return
        entry = entries[-1]
        data = {"answer": "", "citations": [], "mode": "", "not_stated": False, "headline": "evidence",
                "status": "", "warnings": ["The window was closed before the answer was finished: "
                                           "ask again for the model's answer."]}
        if entry.evidence is not None:
            data["evidence"] = entry.evidence.to_dict()
        try:
            self.engine.service.store_exchange(list(self._asked_ids), entry.question,
                                               json.dumps(data, ensure_ascii=False),
                                               conversation=getattr(self, "_asked_conversation", None))
        except Exception as exc:  # noqa: BLE001 - closing must go on
            log.warning("the unfinished answer was not kept: %s", exc)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        # the files opened, not what the panes show (a scan is shown from its OCR copy)
        gui_settings.set_open_documents(self.settings, [self.opened_from.get(p, p.path) for p in (self.pane_a, self.pane_b)
                                                        if p.path and (p is self.pane_a or self.compare_mode())])
        for pane in (self.pane_a, self.pane_b):
            self._keep_page(pane)
        self._keep_unfinished_answer()
        self.save_layout()
        self.poller.stop()
        self.loader.shutdown()
        self.engine.shutdown()
        for pane in (self.pane_a, self.pane_b):
            pane.close_document(wait_s=2.0)
        super().closeEvent(event)
        self.sig_closed.emit()
