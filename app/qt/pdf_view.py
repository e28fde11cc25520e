"""A continuous, lazily rendered PDF page view with highlight overlays.

Only the pages in (or next to) the viewport are asked for; rendered pages live in
a small LRU pixmap cache, and a page whose pixmap is at another zoom is drawn
scaled until the sharp one arrives, so zooming and scrolling never wait on MuPDF.
"""
from __future__ import annotations

import bisect
from collections import OrderedDict

from PySide6.QtCore import QPoint, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QAbstractScrollArea

from app.qt.pdf_render import PageGeometry, PageRenderer

Rect = tuple[float, float, float, float]
GAP, MARGIN = 12, 16
SCREEN = 96 / 72                 # 100 % zoom = real size on a 96-dpi screen
MIN_ZOOM, MAX_ZOOM = 0.25, 6.0
CACHE_BYTES = 192 * 1024 * 1024
HIGHLIGHT = QColor(255, 196, 0, 110)
SEARCH_HIT = QColor(80, 160, 255, 80)
CURRENT_HIT = QColor(255, 120, 0, 120)


def transform(rect: Rect, m: tuple) -> Rect:
    """Apply a PDF matrix (a, b, c, d, e, f) to a rectangle and normalise it."""
    a, b, c, d, e, f = m
    xs, ys = [], []
    for x, y in ((rect[0], rect[1]), (rect[2], rect[3]), (rect[0], rect[3]), (rect[2], rect[1])):
        xs.append(a * x + c * y + e)
        ys.append(b * x + d * y + f)
    return min(xs), min(ys), max(xs), max(ys)


class PdfView(QAbstractScrollArea):
    sig_page_changed = Signal(int)
    """The page at the top of the viewport changed (1-based)."""
    sig_zoom_changed = Signal(float)
    """The zoom factor changed (1.0 = 100 %)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._renderer: PageRenderer | None = None
        self._geoms: list[PageGeometry] = []
        self._tops: list[float] = []            # page tops in points-at-zoom-1 units
        self._zoom, self._fit = 1.0, "width"     # fit: "width" | "page" | ""
        self._cache: OrderedDict[int, tuple[float, QPixmap]] = OrderedDict()
        self._highlights: dict[int, list[Rect]] = {}
        self._hits: list[tuple[int, Rect]] = []
        self._current_hit = -1
        self._page = 0
        self.placeholder = ""                  # drawn when no document is shown
        self._request_timer = QTimer(self, singleShot=True, interval=40, timeout=self._request_visible)
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    # -- document -------------------------------------------------------------
    def set_document(self, renderer: PageRenderer, geoms: list[PageGeometry]) -> None:
        if self._renderer:
            self._renderer.close()
        self._renderer, self._geoms = renderer, geoms
        renderer.sig_rendered.connect(self._on_rendered)
        self._cache.clear()
        self._highlights, self._hits, self._current_hit, self._page = {}, [], -1, 0
        self._relayout()
        self.verticalScrollBar().setValue(0)
        self.sig_page_changed.emit(1)

    def clear(self) -> None:
        if self._renderer:
            self._renderer.close()
        self._renderer, self._geoms, self._tops = None, [], []
        self._cache.clear()
        self._highlights, self._hits = {}, []
        self._relayout()

    def page_count(self) -> int:
        return len(self._geoms)

    def current_page(self) -> int:
        """1-based page at the top of the viewport (0 when empty)."""
        return self._page + 1 if self._geoms else 0

    # -- zoom -----------------------------------------------------------------
    def zoom(self) -> float:
        return self._zoom

    def fit_mode(self) -> str:
        return self._fit

    def set_zoom(self, zoom: float, anchor: QPoint | None = None) -> None:
        self._fit = ""
        self._apply_zoom(zoom, anchor)

    def set_fit(self, mode: str) -> None:
        self._fit = mode
        self._apply_zoom(self._fit_zoom(), None)

    def zoom_by(self, factor: float, anchor: QPoint | None = None) -> None:
        self.set_zoom(self._zoom * factor, anchor)

    def _fit_zoom(self) -> float:
        if not self._geoms:
            return self._zoom
        page = self._geoms[min(self._page, len(self._geoms) - 1)]
        width = max(self.viewport().width() - 2 * MARGIN, 50)
        by_width = width / (max(g.width for g in self._geoms) * SCREEN)
        if self._fit == "page":
            height = max(self.viewport().height() - 2 * GAP, 50)
            return min(by_width, height / (page.height * SCREEN))
        return by_width

    def _apply_zoom(self, zoom: float, anchor: QPoint | None) -> None:
        zoom = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        if abs(zoom - self._zoom) < 1e-4 and self._tops:
            return
        anchor = anchor or QPoint(0, 0)
        # Kept by page and the point within it: the gaps between pages do not scale, so a plain
        # proportion of the scroll position drifts a page up over a long document.
        y = self.verticalScrollBar().value() + anchor.y()
        index = max(0, bisect.bisect_right(self._tops, y + GAP) - 1) if self._tops else -1
        offset = y - self._tops[index] if index >= 0 else y
        within = max(0.0, offset) / self._scale()      # in the page: scales; in the gap above: does not
        self._zoom = zoom
        self._relayout()
        top = self._tops[index] if 0 <= index < len(self._tops) else 0.0
        self.verticalScrollBar().setValue(round(top + min(0.0, offset) + within * self._scale() - anchor.y()))
        self.sig_zoom_changed.emit(zoom)

    def _scale(self) -> float:
        """Pixels per PDF point on screen."""
        return self._zoom * SCREEN

    # -- layout and navigation --------------------------------------------------
    def _relayout(self) -> None:
        self._tops, y = [], float(GAP)
        for g in self._geoms:
            self._tops.append(y)
            y += g.height * self._scale() + GAP
        width = (max((g.width for g in self._geoms), default=0) * self._scale()) + 2 * MARGIN
        vbar, hbar = self.verticalScrollBar(), self.horizontalScrollBar()
        vbar.setRange(0, max(0, round(y) - self.viewport().height()))
        vbar.setPageStep(self.viewport().height())
        vbar.setSingleStep(40)
        hbar.setRange(0, max(0, round(width) - self.viewport().width()))
        hbar.setPageStep(self.viewport().width())
        self.viewport().update()
        self._request_timer.start()

    def go_to(self, page: int, rect: Rect | None = None) -> None:
        """Show 1-based `page`; with a rectangle (PDF points), bring it into view."""
        if not self._geoms:
            return
        index = max(0, min(page - 1, len(self._geoms) - 1))
        y = self._tops[index] - GAP
        if rect is not None:
            shown = transform(rect, self._geoms[index].rotation)
            y = self._tops[index] + shown[1] * self._scale() - self.viewport().height() / 3
            y = max(y, self._tops[index] - GAP)
        self.verticalScrollBar().setValue(round(y))
        self._on_scrolled()

    def _on_scrolled(self, *_: object) -> None:
        if not self._tops:
            return
        index = max(0, bisect.bisect_right(self._tops, self.verticalScrollBar().value() + GAP + 1) - 1)
        if index != self._page:
            self._page = index
            self.sig_page_changed.emit(index + 1)
        self._request_timer.start()

    def _visible(self) -> list[int]:
        if not self._tops:
            return []
        top = self.verticalScrollBar().value()
        bottom = top + self.viewport().height()
        first = max(0, bisect.bisect_right(self._tops, top) - 1)
        last = max(first, bisect.bisect_right(self._tops, bottom) - 1)
        return list(range(first, last + 1))

    # -- overlays -------------------------------------------------------------
    def set_highlights(self, page: int, rects: list[Rect]) -> None:
        """Citation highlight: rectangles in PDF points on 1-based `page` (replaces others)."""
        self._highlights = {page - 1: list(rects)} if rects else {}
        self.viewport().update()

    def highlights(self) -> dict[int, list[Rect]]:
        """1-based page → highlighted rectangles (what is drawn now)."""
        return {index + 1: list(rects) for index, rects in self._highlights.items()}

    def set_search_hits(self, hits: list[tuple[int, Rect]], current: int = -1) -> None:
        """Search hits as (1-based page, rect); `current` is drawn stronger."""
        self._hits = [(page - 1, rect) for page, rect in hits]
        self._current_hit = current
        self.viewport().update()

    # -- rendering ------------------------------------------------------------
    def _request_visible(self) -> None:
        if not self._renderer:
            return
        visible = self._visible()
        if not visible:
            return
        around = [visible[0] - 1, visible[-1] + 1]   # one page of prefetch each way
        wanted = visible + [i for i in around if 0 <= i < len(self._geoms)]
        scale = self._scale() * self.devicePixelRatioF()
        missing = [i for i in wanted if i not in self._cache or abs(self._cache[i][0] - scale) > 1e-3]
        if missing:
            self._renderer.request(missing, scale)

    def _on_rendered(self, index: int, scale: float, image: QImage) -> None:
        if self.sender() is not self._renderer:
            return   # a late page from the previous document
        pixmap = QPixmap.fromImage(image)
        pixmap.setDevicePixelRatio(self.devicePixelRatioF())
        self._cache[index] = (scale, pixmap)
        self._cache.move_to_end(index)
        self._trim_cache()
        self.viewport().update()

    def _trim_cache(self) -> None:
        total = sum(p.width() * p.height() * 4 for _, p in self._cache.values())
        visible = set(self._visible())
        for index in list(self._cache):
            if total <= CACHE_BYTES:
                break
            if index not in visible:
                _, pixmap = self._cache.pop(index)
                total -= pixmap.width() * pixmap.height() * 4

    def settled(self) -> bool:
        """Every visible page has its pixmap at the current zoom (screenshots wait for this)."""
        scale = self._scale() * self.devicePixelRatioF()
        return all(i in self._cache and abs(self._cache[i][0] - scale) < 1e-3 for i in self._visible())

    def cached_pages(self) -> list[int]:
        """1-based pages that have a pixmap (tests check laziness with this)."""
        return sorted(index + 1 for index in self._cache)

    def _page_rect(self, index: int) -> QRectF:
        g, s = self._geoms[index], self._scale()
        content = max(g.width for g in self._geoms) * s + 2 * MARGIN
        left = max(MARGIN, (max(self.viewport().width(), content) - g.width * s) / 2)
        x = left - self.horizontalScrollBar().value()
        y = self._tops[index] - self.verticalScrollBar().value()
        return QRectF(x, y, g.width * s, g.height * s)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self.viewport())
        painter.fillRect(self.viewport().rect(), self.palette().color(QPalette.ColorRole.Mid))
        if not self._geoms and self.placeholder:
            painter.setPen(self.palette().color(QPalette.ColorRole.Text))
            painter.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                             self.placeholder)
        for index in self._visible():
            target = self._page_rect(index)
            cached = self._cache.get(index)
            if cached:
                painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
                painter.drawPixmap(target, cached[1], QRectF(cached[1].rect()))
            else:
                painter.fillRect(target, Qt.GlobalColor.white)
            self._paint_overlays(painter, index, target)
        painter.end()

    def _paint_overlays(self, painter: QPainter, index: int, target: QRectF) -> None:
        s, rotation = self._scale(), self._geoms[index].rotation
        painter.setPen(Qt.PenStyle.NoPen)
        for n, (page, rect) in enumerate(self._hits):
            if page == index:
                painter.setBrush(CURRENT_HIT if n == self._current_hit else SEARCH_HIT)
                painter.drawRect(self._to_screen(rect, rotation, target, s))
        for rect in self._highlights.get(index, []):
            painter.setBrush(HIGHLIGHT)
            painter.drawRect(self._to_screen(rect, rotation, target, s))

    @staticmethod
    def _to_screen(rect: Rect, rotation: tuple, target: QRectF, s: float) -> QRectF:
        x0, y0, x1, y1 = transform(rect, rotation)
        return QRectF(target.x() + x0 * s - 1, target.y() + y0 * s - 1, (x1 - x0) * s + 2, (y1 - y0) * s + 2)

    # -- events ---------------------------------------------------------------
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._fit and self._geoms:
            self._apply_zoom(self._fit_zoom(), None)
        self._relayout()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt override
        self.viewport().update()

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.key() == Qt.Key.Key_Home:
            self.go_to(1)
        elif event.key() == Qt.Key.Key_End:
            self.go_to(len(self._geoms))
        else:
            super().keyPressEvent(event)    # arrows, Page Up/Down scroll

    def wheelEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = event.angleDelta().y() / 120
            if steps:
                self.zoom_by(1.15 ** steps, event.position().toPoint())
            event.accept()
            return
        super().wheelEvent(event)
