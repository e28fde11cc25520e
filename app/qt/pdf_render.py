"""Page rendering on one background thread that owns the PyMuPDF document.

PyMuPDF is not thread-safe, so each open document gets a single thread that does
every MuPDF call for the view (open, page sizes, rendering, text search). The view
asks for the pages it can see; asking again replaces the queue, so pages scrolled
past in a 500-page document are never rendered.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

import pymupdf
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QImage

from app.core.documents.pdf import authenticate, open_path
from app.core.library.library import path_text

Matrix = tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class PageGeometry:
    width: float            # points, as displayed (rotation applied)
    height: float
    rotation: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)   # unrotated → displayed coordinates


class PasswordNeeded(Exception):
    """The PDF is encrypted and the password is missing or wrong."""

    def __init__(self, path: str, wrong: bool) -> None:
        self.path, self.wrong = path, wrong
        super().__init__("Wrong password." if wrong else "This PDF needs a password.")


class RenderError(Exception):
    """The PDF cannot be opened for display (one-line message)."""


def open_document(path: str, password: str | None) -> pymupdf.Document:
    """The core's own opening: a name that is not UTF-8 (or the library's \\xe9 form of it) opens,
    and a password that is not UTF-8 is tried as Latin-1 instead of raising."""
    try:
        doc = open_path(path)
    except Exception as exc:   # MuPDF raises several types for broken files
        said = path_text(str(exc).splitlines()[0]) if str(exc) else "not a readable PDF"
        raise RenderError(f"Cannot open {path_text(path)}: {said}") from None
    if not doc.is_pdf:
        raise RenderError(f"Cannot open {path_text(path)}: not a PDF")
    if doc.needs_pass and not authenticate(doc, password or ""):
        raise PasswordNeeded(path, wrong=bool(password))
    if doc.page_count == 0:
        raise RenderError(f"Cannot open {path_text(path)}: the PDF has no pages")
    return doc


def geometry(page: pymupdf.Page) -> PageGeometry:
    m = page.rotation_matrix
    return PageGeometry(page.rect.width, page.rect.height, (m.a, m.b, m.c, m.d, m.e, m.f))


class PageRenderer(QObject):
    """Owns one document on its own thread; results arrive as signals on the UI thread."""

    sig_opened = Signal(object)
    """The document opened: list[PageGeometry]."""
    sig_failed = Signal(object)
    """Opening failed: PasswordNeeded or RenderError."""
    sig_rendered = Signal(int, float, QImage)
    """Page index (0-based), scale in pixels per point, the image."""

    def __init__(self, path: str, password: str | None = None) -> None:
        super().__init__()
        self.path, self._password = path, password
        self._cond = threading.Condition()
        self._pending: list[tuple[int, float]] = []
        self._calls: list[Callable[[pymupdf.Document], None]] = []
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="pdf-render", daemon=True)

    def start(self) -> "PageRenderer":
        """Start the thread; connect to the signals first, or sig_opened may be missed."""
        self._thread.start()
        return self

    def request(self, pages: list[int], scale: float) -> None:
        """Render these pages (in this order) at this scale, dropping older requests."""
        with self._cond:
            self._pending = [(p, scale) for p in pages]
            self._cond.notify()

    def call(self, fn: Callable[[pymupdf.Document], None]) -> None:
        """Run fn(document) on the render thread (text search); fn emits its own results."""
        with self._cond:
            self._calls.append(fn)
            self._cond.notify()

    def close(self, wait_s: float = 0.0) -> None:
        """Stop the thread; with wait_s, wait for it (at exit, so no late signal outlives Qt)."""
        with self._cond:
            self._stop = True
            self._cond.notify()
        if wait_s and self._thread.is_alive():
            self._thread.join(wait_s)

    def _loop(self) -> None:
        try:
            doc = open_document(self.path, self._password)
            geoms = [geometry(page) for page in doc]
        except Exception as exc:  # noqa: BLE001 - reported to the UI
            self.sig_failed.emit(exc if isinstance(exc, (PasswordNeeded, RenderError))
                                 else RenderError(f"Cannot open {path_text(self.path)}: {exc}"))
            return
        self.sig_opened.emit(geoms)
        try:
            self._serve(doc)
        finally:
            doc.close()

    def _serve(self, doc: pymupdf.Document) -> None:
        while True:
            with self._cond:
                while not (self._stop or self._pending or self._calls):
                    self._cond.wait()
                if self._stop:
                    return
                call = self._calls.pop(0) if self._calls else None
                job = None if call else self._pending.pop(0)
            if call:
                call(doc)
            else:
                self._render(doc, *job)

    def _render(self, doc: pymupdf.Document, index: int, scale: float) -> None:
        pix = doc[index].get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False, annots=True)
        image = QImage(pix.samples, pix.width, pix.height, pix.stride, QImage.Format.Format_RGB888)
        self.sig_rendered.emit(index, scale, image.copy())   # copy: pix's buffer dies here
