"""Compare versions: the change list of two versions of a document (material changes first) beside
both versions' pages; choosing a change shows its clause in both panes, the deleted words lit on
the old version and the inserted ones on the new (the redline's own rectangles, as citations are).
`pagewise gui --diff OLD.pdf NEW.pdf [--screenshot OUT.png]`."""
from __future__ import annotations

import os
import sys
import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QListWidget, QListWidgetItem, QSplitter, QVBoxLayout, QWidget

from app.core.compare.redline_export import headline, pages_of
from app.core.compare.versions import ClausePair, Redline
from app.qt.interface_language import tr
from app.qt.pdf_pane import PdfPane
from app.qt.screen_fit import resize_within_screen

SETTLE_MS = 400           # let the pages and their highlights paint before a screenshot
TIMEOUT_S = 60


class RedlineWindow(QWidget):
    def __init__(self, redline: Redline, parent=None) -> None:
        super().__init__(parent)
        self.redline = redline
        self.changes = redline.changes()
        self.setWindowTitle(f"{tr('Compare versions')} — {headline(redline)}")
        self.summary = QLabel(headline(redline), wordWrap=True)
        self.list = QListWidget()
        for pair in self.changes:
            item = QListWidgetItem(_item_text(pair))
            item.setToolTip(pages_of(pair))
            self.list.addItem(item)
        self.list.currentRowChanged.connect(self.show_change)
        self.old, self.new = PdfPane(self, tr("Old version")), PdfPane(self, tr("New version"))
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.summary)
        column.addWidget(self.list, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        for widget in (left, self.old, self.new):
            split.addWidget(widget)
        split.setSizes([320, 560, 560])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._opened = 0
        for pane, path in ((self.old, redline.old_path), (self.new, redline.new_path)):
            pane.sig_opened.connect(self._on_opened)
            pane.open(path)

    def _on_opened(self, *_: object) -> None:
        self._opened += 1
        if self._opened == 2 and self.changes:
            # the list may have made row 0 current on focus before the pages were there
            if self.list.currentRow() < 0:
                self.list.setCurrentRow(0)
            else:
                self.show_change(self.list.currentRow())

    @property
    def ready(self) -> bool:
        return self._opened == 2 and self.old.view.settled() and self.new.view.settled()

    def show_change(self, row: int) -> None:
        """Both versions at the change: each pane on its clause's first changed page, lit."""
        if not 0 <= row < len(self.changes) or self._opened < 2:
            return
        pair = self.changes[row]
        for pane, clause, phrases in ((self.old, pair.old, pair.deleted), (self.new, pair.new, pair.inserted)):
            if clause is None:
                pane.view.set_highlights(1, [])
                continue
            page = phrases[0].page if phrases else clause.page
            rects = [r for p in phrases if p.page == page for r in p.rects]
            if not rects and pair.status == "moved":     # renumbered only: light the clause's first line
                rects = [w.rects[0] for w in clause.words[:12] if w.page == page]
            pane.show_citation(page, rects)


def open_versions(window) -> RedlineWindow | None:
    """The main window's "Compare versions": its left document as the old version, the one
    side by side on the right as the new; a window of its own beside the main one."""
    from PySide6.QtWidgets import QMessageBox

    from app.core.compare.versions import diff_files
    from app.qt.interface_language import tr
    old, new = window.pane_a.path, window.pane_b.path
    if not (old and new):
        QMessageBox.information(window, tr("Compare versions"),
                                tr("Open the old version on the left and the new one side by side on the right first."))
        return None
    redline = RedlineWindow(diff_files(old, new, (window.pane_a.password, window.pane_b.password)))
    resize_within_screen(redline, 1500, 900)
    redline.show()
    window._versions_window = redline          # kept while shown (a parentless window)
    return redline


def _item_text(pair: ClausePair) -> str:
    mark = "● " if pair.material else ""
    kinds = f" [{', '.join(pair.kinds)}]" if pair.kinds else ""
    return f"{mark}{pair.status}: {pair.name()[:70]}{kinds}"


def run_redline(old: str, new: str, screenshot: str | None = None, change: int = 0) -> int:
    """The Compare versions window on two files until it closes; with `screenshot`, offscreen:
    the change numbered `change` shown, the window saved to that PNG, then exit."""
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from app.core.compare.versions import diff_files
    from app.qt import theme
    app = QApplication.instance() or QApplication(sys.argv[:1])
    theme.apply(app)
    window = RedlineWindow(diff_files(old, new))
    resize_within_screen(window, 1600, 950)
    window.show()
    if screenshot:
        deadline = time.monotonic() + TIMEOUT_S

        def poll() -> None:
            if window._opened == 2 and window.list.currentRow() != change and change < len(window.changes):
                window.list.setCurrentRow(change)
            if window.ready and window.list.currentRow() == min(change, len(window.changes) - 1) \
                    or time.monotonic() > deadline:
                QTimer.singleShot(SETTLE_MS, lambda: app.exit(0 if window.grab().save(screenshot) else 1))
                return
            QTimer.singleShot(100, poll)
        QTimer.singleShot(100, poll)
    return app.exec()
