"""Light or dark, following the system: Fusion style, a dark palette when the system
(or PAGEWISE_THEME=dark|light) asks for one, and resources/style/app.qss for accents."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

STYLE = Path(__file__).resolve().parents[2] / "resources" / "style" / "app.qss"


def system_is_dark(app: QApplication) -> bool:
    forced = os.environ.get("PAGEWISE_THEME", "").lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    return app.styleHints().colorScheme() == Qt.ColorScheme.Dark


def dark_palette() -> QPalette:
    p = QPalette()
    colours = {QPalette.ColorRole.Window: "#2b2d30", QPalette.ColorRole.WindowText: "#e6e6e6",
               QPalette.ColorRole.Base: "#1f2023", QPalette.ColorRole.AlternateBase: "#2b2d30",
               QPalette.ColorRole.Text: "#e6e6e6", QPalette.ColorRole.Button: "#35373b",
               QPalette.ColorRole.ButtonText: "#e6e6e6", QPalette.ColorRole.Highlight: "#4a7fd6",
               QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#35373b",
               QPalette.ColorRole.ToolTipText: "#e6e6e6", QPalette.ColorRole.Mid: "#4a4c50",
               QPalette.ColorRole.Link: "#7fb0ff", QPalette.ColorRole.PlaceholderText: "#9a9da3"}
    for role, colour in colours.items():
        p.setColor(role, QColor(colour))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#7a7d83"))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#7a7d83"))
    return p


def apply(app: QApplication) -> None:
    app.setStyle("Fusion")
    _apply_palette(app)
    if STYLE.is_file():
        app.setStyleSheet(STYLE.read_text(encoding="utf-8"))
    # Follow the system when the user switches light/dark while the app runs.
    app.styleHints().colorSchemeChanged.connect(lambda _scheme: _apply_palette(app))


def _apply_palette(app: QApplication) -> None:
    app.setPalette(dark_palette() if system_is_dark(app) else app.style().standardPalette())
