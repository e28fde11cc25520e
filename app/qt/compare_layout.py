"""The side-by-side layout: while two documents are shown, the library panel folds away (a
button brings it back), the two panes share the width, the pane a PDF opens into is marked
(the one last clicked, or each pane's own Open button), and a bar above them closes the view."""
from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

DOCS_SHARE = 0.6          # of the window's width for the two panes (the answer takes the rest)
ACTIVE_STYLE = "font-weight:bold; color:#1b4f72"


class SideBySide(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self._library_sizes: list[int] | None = None
        self.on = False
        self.bar = QWidget(objectName="compareBar")
        self.library_button = QToolButton(text="Library", checkable=True, autoRaise=True,
                                          objectName="compareLibraryToggle",
                                          toolTip="Show or hide the library while comparing")
        self.library_button.toggled.connect(self.show_library)
        self.hint = QLabel("Side by side · Ctrl+O opens into the pane in bold", objectName="compareHint")
        self.close_button = QToolButton(text="✕ Close side by side", autoRaise=True, objectName="closeCompare",
                                        toolTip="Back to one document (the left one)")
        self.close_button.clicked.connect(lambda: window.set_compare(False))
        row = QHBoxLayout(self.bar)
        row.setContentsMargins(6, 2, 6, 0)
        row.addWidget(self.library_button)
        row.addWidget(self.hint, 1)
        row.addWidget(self.close_button)
        self.bar.hide()

    def wrap(self, panes: QWidget) -> QWidget:
        """The panes with the bar above them."""
        box = QWidget(objectName="sideBySide")
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        layout.addWidget(panes, 1)
        return box

    def set_on(self, on: bool) -> None:
        win = self.window
        if on == self.on:
            return
        self.on = on
        self.bar.setVisible(on)
        if on:
            self._library_sizes = win.library_split.sizes()
            self.library_button.setChecked(False)
            self.show_library(False)
            width = max(win.width(), 800)
            win.main_split.setSizes([int(width * DOCS_SHARE), width - int(width * DOCS_SHARE)])
            half = max(win.panes.width(), int(width * DOCS_SHARE)) // 2
            win.panes.setSizes([half, half])
        else:
            win.library_panel.setVisible(True)
            if self._library_sizes and self._library_sizes[0] > 0:
                win.library_split.setSizes(self._library_sizes)
            win.active_pane = win.pane_a
        self.mark_active()

    def show_library(self, shown: bool) -> None:
        win = self.window
        total = sum(win.library_split.sizes()) or win.width()
        left = (self._library_sizes or [380])[0] if shown else 0
        # hidden, not only sized 0: a splitter counts a collapsed child's minimum width, and two
        # panes beside the answers plus the library's minimum pushed the window past the screen
        win.library_panel.setVisible(shown)
        win.library_split.setSizes([max(left, 260) if shown else 0, total - (max(left, 260) if shown else 0)])

    def mark_active(self) -> None:
        """The pane Ctrl+O opens into, its title in bold (only while two are shown)."""
        win = self.window
        for pane in (win.pane_a, win.pane_b):
            pane.title.setStyleSheet(ACTIVE_STYLE if self.on and pane is win.active_pane else "")
