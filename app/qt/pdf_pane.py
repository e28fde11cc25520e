"""One document: a toolbar (page box, zoom, search), a notice line and the page view."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.qt.fitted_label import FittedLabel
from app.qt.interface_language import tr
from app.qt.pdf_render import PageRenderer
from app.qt.pdf_search import PdfSearch
from app.qt.pdf_view import PdfView, Rect

class ElidedLabel(FittedLabel):
    """A title that fits its width: cut in the middle ("common-pa…mnda.pdf": both the start
    and the ending tell documents apart), the whole of it in the tooltip."""

    def _fit(self) -> None:
        metrics, width = self.fontMetrics(), max(self.width(), 40)
        shown = metrics.elidedText(self._full, Qt.TextElideMode.ElideMiddle, width)
        suffix = Path(self._full).suffix
        if suffix and shown != self._full and not shown.endswith(suffix):      # narrow: the ending kept whole
            stem = self._full[:-len(suffix)]
            shown = metrics.elidedText(stem, Qt.TextElideMode.ElideRight,
                                       max(width - metrics.horizontalAdvance(suffix), 20)) + suffix
        QLabel.setText(self, shown)   # the shown text; `_full` stays


ZOOMS = [("Fit width", "width"), ("Fit page", "page"), ("50 %", 0.5), ("75 %", 0.75),
         ("100 %", 1.0), ("125 %", 1.25), ("150 %", 1.5), ("200 %", 2.0), ("300 %", 3.0)]


class PdfPane(QWidget):
    sig_opened = Signal(str, int)
    """The document is displayed: path, page count."""
    sig_failed = Signal(str, object)
    """The document cannot be displayed: path, PasswordNeeded or RenderError."""
    sig_open_here = Signal()
    """The pane's own Open button: open a PDF into this pane."""
    sig_highlighted = Signal(int, object)
    """A quote was located and highlighted: 1-based page, list of rectangles (PDF points)."""
    _sig_found = Signal(int, int, object)

    def __init__(self, parent=None, label: str = "") -> None:
        super().__init__(parent)
        self.path: str | None = None
        self.password: str | None = None
        self._renderer: PageRenderer | None = None
        self._hits: list[tuple[int, Rect]] = []
        self._hit = -1
        self._search_text = ""
        self._quote_serial = 0
        self._wanted_page = 0           # a page to show once the document is there (restored)
        self._sig_found.connect(self._on_quote_found)
        self.view = PdfView(self)
        self._search = PdfSearch(self)
        self._search.sig_results.connect(self._on_search_results)
        self._build(label)
        self.view.sig_page_changed.connect(self._on_page_changed)
        self.view.sig_zoom_changed.connect(self._on_zoom_changed)

    # -- building ---------------------------------------------------------------
    def _build(self, label: str) -> None:
        self.title = ElidedLabel("No document", objectName="paneTitle")
        self.view.placeholder = label
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.page_box = QSpinBox(minimum=0, maximum=0, keyboardTracking=False, toolTip="Go to page")
        self.page_box.valueChanged.connect(self._on_page_box)
        self.page_total = QLabel("/ 0")
        self.zoom_box = QComboBox(toolTip="Zoom (Ctrl+wheel, Ctrl++ / Ctrl+-)")
        for text, value in ZOOMS:
            self.zoom_box.addItem(text, value)
        self.zoom_box.addItem("", None)
        self.zoom_box.activated.connect(self._on_zoom_chosen)
        self.search_box = QLineEdit(placeholderText="Search in document", clearButtonEnabled=True)
        self.search_box.returnPressed.connect(self._on_search_enter)
        self.search_box.textChanged.connect(self._on_search_edited)
        self.hit_label = QLabel("", objectName="hitLabel")
        self.title.setMinimumWidth(60)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.search_box.setMinimumWidth(120)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 0)
        bar.addWidget(self.title, 1)
        # the style's own folder icon: an emoji glyph is an empty box where no emoji font is installed
        self.open_button = self._tool("", "Open a PDF in this pane", self.sig_open_here.emit)
        self.open_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DirOpenIcon))
        bar.addWidget(self.open_button)
        for widget in (self.page_box, self.page_total,
                       self._tool("−", "Zoom out (Ctrl+-)", lambda: self.view.zoom_by(1 / 1.2)), self.zoom_box,
                       self._tool("+", "Zoom in (Ctrl++)", lambda: self.view.zoom_by(1.2))):
            bar.addWidget(widget)
        find = QHBoxLayout()
        find.setContentsMargins(6, 2, 6, 4)
        for widget in (self.search_box, self.hit_label,
                       self._tool("▲", "Previous hit (Shift+Enter)", lambda: self.step_hit(-1)),
                       self._tool("▼", "Next hit (Enter)", lambda: self.step_hit(1))):
            find.addWidget(widget)
        find.setStretch(0, 1)
        self.notice = QLabel("", objectName="notice", wordWrap=True, visible=False)
        self.progress = QProgressBar(visible=False, maximumHeight=14, textVisible=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addLayout(find)
        layout.addWidget(self.progress)
        layout.addWidget(self.notice)
        layout.addWidget(self.view, 1)
        QShortcut(QKeySequence("Shift+Return"), self.search_box, lambda: self.step_hit(-1),
                  context=Qt.ShortcutContext.WidgetShortcut)   # each pane's own box only

    def _tool(self, text: str, tip: str, slot) -> QToolButton:
        button = QToolButton(text=text, toolTip=tip, autoRaise=True)
        button.clicked.connect(slot)
        return button

    # -- document -------------------------------------------------------------
    def open(self, path: str, password: str | None = None) -> None:
        """Start opening `path`; sig_opened or sig_failed follows."""
        self.path, self.password = str(path), password
        self.title.setText(Path(path).name)
        self.title.setToolTip(str(path))      # the whole path, whatever the title shows
        renderer = PageRenderer(str(path), password)
        renderer.sig_opened.connect(lambda geoms, r=renderer: self._on_opened(r, geoms))
        renderer.sig_failed.connect(lambda exc, r=renderer: self._on_failed(r, exc))
        self._renderer = renderer
        renderer.start()

    def _on_opened(self, renderer: PageRenderer, geoms) -> None:
        if renderer is not self._renderer:
            renderer.close()
            return
        self.view.set_document(renderer, geoms)
        self.view.set_fit(self.view.fit_mode() or "width")
        self.page_box.setMaximum(len(geoms))
        self.page_box.setMinimum(1)
        self.page_total.setText(f"/ {len(geoms)}")
        self._reset_search()
        self.sig_opened.emit(self.path, len(geoms))
        if self._wanted_page:
            self.go_to_page(self._wanted_page)

    def go_to_page(self, page: int) -> None:
        """Show `page` once the document is laid out (now, or when it is shown: a document being
        opened, or reopened from its OCR copy, shows it then)."""
        self._wanted_page = page
        if self.view.page_count():
            QTimer.singleShot(0, lambda: self._go_to_wanted(page))

    def _go_to_wanted(self, page: int) -> None:
        if self._wanted_page == page and self.view.page_count():
            self.view.go_to(page)
            self._wanted_page = 0

    def _on_failed(self, renderer: PageRenderer, exc: Exception) -> None:
        if renderer is self._renderer:
            self._renderer = None
            self.sig_failed.emit(renderer.path, exc)

    def close_document(self, wait_s: float = 0.0) -> None:
        self._wanted_page = 0
        if self._renderer:
            self._renderer.close(wait_s)
        self.view.clear()
        self._renderer, self.path = None, None
        self.title.setText("No document")
        self.page_box.setMinimum(0)
        self.page_box.setMaximum(0)
        self.page_total.setText("/ 0")
        self.set_notice("")

    def show_citation(self, page: int, rects: list[Rect]) -> None:
        """Jump to `page` and highlight exactly these rectangles."""
        self.view.set_highlights(page, rects)
        self.view.go_to(page, rects[0] if rects else None)

    def highlight_quote(self, page: int, quote: str) -> None:
        """Jump to `page` now; highlight the quote's words once the render thread finds them."""
        self.view.set_highlights(page, [])
        self.view.go_to(page)
        if not self._renderer:
            return
        self._quote_serial += 1
        serial, path, password = self._quote_serial, self.path, self.password

        def run(doc) -> None:
            from app.core.answer.citations import highlight_rects
            try:
                rects = highlight_rects(path, page, quote, password)
            except Exception:  # noqa: BLE001 - no highlight is better than a crash
                rects = []
            self._sig_found.emit(serial, page, rects)

        self._renderer.call(run)

    def _on_quote_found(self, serial: int, page: int, rects: list) -> None:
        if serial == self._quote_serial:
            self.show_citation(page, rects)
            self.sig_highlighted.emit(page, rects)

    def set_notice(self, text: str) -> None:
        self.notice.setText(text)
        self.notice.setVisible(bool(text))

    def set_progress(self, done: int, total: int, label: str = "Indexing", unit: str = "page") -> None:
        """Ingestion progress under the toolbar; hidden when done."""
        self.progress.setVisible(total > 0 and done < total)
        self.progress.setMaximum(max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(tr(f"{label}: {unit} {done} of {total}"))   # set each step: translated when set

    # -- navigation and zoom ----------------------------------------------------
    def _on_page_box(self, page: int) -> None:
        if page and page != self.view.current_page():
            self.view.go_to(page)

    def _on_page_changed(self, page: int) -> None:
        self.page_box.blockSignals(True)
        self.page_box.setValue(page)
        self.page_box.blockSignals(False)

    def _on_zoom_chosen(self, index: int) -> None:
        value = self.zoom_box.itemData(index)
        if isinstance(value, str):
            self.view.set_fit(value)
        elif value:
            self.view.set_zoom(value)

    def _on_zoom_changed(self, zoom: float) -> None:
        fit = self.view.fit_mode()
        index = self.zoom_box.findData(fit) if fit else self.zoom_box.findData(round(zoom, 2))
        custom = self.zoom_box.count() - 1          # the last item shows any other zoom
        if index < 0:
            index = custom
        self.zoom_box.setItemText(custom, f"{zoom:.0%}".replace("%", " %") if index == custom else "")
        self.zoom_box.setCurrentIndex(index)

    # -- search ---------------------------------------------------------------
    def search(self, text: str) -> None:
        if self._renderer:
            self.search_box.setText(text)
            self.hit_label.setText("…")
            self._search.start(self._renderer, text)

    def _on_search_enter(self) -> None:
        if self._hits and self._search_text == self.search_box.text():
            self.step_hit(1)
        else:
            self._search_text = self.search_box.text()
            self.search(self._search_text)

    def _on_search_edited(self, text: str) -> None:
        if not text:
            self._reset_search()

    def _reset_search(self) -> None:
        self._hits, self._hit, self._search_text = [], -1, ""
        self.hit_label.setText("")
        self.view.set_search_hits([])

    def _on_search_results(self, serial: int, hits: list) -> None:
        self._hits, self._hit = hits, (0 if hits else -1)
        self.hit_label.setText(f"1 / {len(hits)}" if hits else "no hits")
        self.view.set_search_hits(hits, self._hit)
        if hits:
            self.view.go_to(*hits[0])

    def search_hits(self) -> list[tuple[int, Rect]]:
        return list(self._hits)

    def step_hit(self, step: int) -> None:
        if not self._hits:
            return
        self._hit = (self._hit + step) % len(self._hits)
        self.hit_label.setText(f"{self._hit + 1} / {len(self._hits)}")
        self.view.set_search_hits(self._hits, self._hit)
        self.view.go_to(*self._hits[self._hit])
