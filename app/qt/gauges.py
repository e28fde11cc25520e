"""Memory gauges for the status bar: one bar per GPU (VRAM) or one for RAM in CPU mode."""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QWidget

GB = float(1 << 30)     # as the plan and the model list count (2^30 bytes): one machine reads the same everywhere
WARN_AT, ALARM_AT = 0.75, 0.90      # share of memory in use where the bar turns amber / red
COLOURS = {"ok": QColor("#3a9d5d"), "warn": QColor("#d99a1e"), "alarm": QColor("#d64541")}
KV_COLOUR = QColor("#5b7fd6")


def level(share: float) -> str:
    """Colour level for a used share of memory."""
    return "alarm" if share >= ALARM_AT else "warn" if share >= WARN_AT else "ok"


class MemoryGauge(QWidget):
    """A labelled bar: used/total, coloured at thresholds, with the engine's KV cache inside it."""

    def __init__(self, label: str, parent=None) -> None:
        super().__init__(parent)
        self.label = label
        self.used = self.total = 0
        self.kv_bytes: float | None = None     # KV cache bytes drawn inside the used part
        self.kv_fraction: float | None = None  # KV pool use as the engine reports it
        self.setMinimumWidth(150)

    def set_reading(self, used: int, total: int, kv_bytes: float | None = None,
                    kv_fraction: float | None = None, tooltip: str = "") -> None:
        self.used, self.total, self.kv_bytes, self.kv_fraction = used, total, kv_bytes, kv_fraction
        self.setToolTip(tooltip or self.text())
        self.setMinimumWidth(self.sizeHint().width())   # the text grows (KV share): never clip it
        self.updateGeometry()
        self.update()

    def share(self) -> float:
        return self.used / self.total if self.total else 0.0

    def level(self) -> str:
        return level(self.share())

    def text(self) -> str:
        base = f"{self.label} {self.used / GB:.1f}/{self.total / GB:.1f} GB"
        return base + (f" · KV {self.kv_fraction:.0%}" if self.kv_fraction is not None else "")

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(self.fontMetrics().horizontalAdvance(self.text()) + 16, self.fontMetrics().height() + 6)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        box = QRectF(self.rect()).adjusted(1, 2, -1, -2)
        painter.setPen(self.palette().color(QPalette.ColorRole.Mid))
        painter.setBrush(self.palette().color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(box, 3, 3)
        filled = QRectF(box.x(), box.y(), box.width() * min(1.0, self.share()), box.height())
        colour = QColor(COLOURS[self.level()])
        colour.setAlpha(170)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(filled, 3, 3)
        if self.kv_bytes and self.total:
            kv = QRectF(box.x(), box.bottom() - 4, box.width() * min(1.0, self.kv_bytes / self.total), 4)
            painter.setBrush(KV_COLOUR)
            painter.drawRect(kv)
        painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, self.text())
        painter.end()
