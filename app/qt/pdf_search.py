"""Text search over a document on its render thread, results back as a signal."""
from __future__ import annotations

import itertools

from PySide6.QtCore import QObject, Signal

from app.qt.pdf_render import PageRenderer

MAX_HITS = 2000   # a one-letter query in a 500-page file must not flood the view


class PdfSearch(QObject):
    sig_results = Signal(int, object)
    """Search number and its hits: list[(1-based page, (x0, y0, x1, y1))]."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._serial = itertools.count(1)
        self.current = 0

    def start(self, renderer: PageRenderer, text: str) -> int:
        """Search every page for `text`; a newer search makes older ones stop early."""
        serial = next(self._serial)
        self.current = serial
        text = text.strip()
        if not text:
            self.sig_results.emit(serial, [])
            return serial

        def run(doc) -> None:
            hits = []
            for page in doc:
                if self.current != serial or len(hits) >= MAX_HITS:
                    break
                hits += [(page.number + 1, tuple(r)) for r in page.search_for(text)]
            if self.current == serial:
                self.sig_results.emit(serial, hits[:MAX_HITS])

        renderer.call(run)
        return serial
