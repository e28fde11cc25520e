"""Light or dark: Fusion style, a dark palette when Settings → Theme says so (or, on
"Follow the system", when the system does; PAGEWISE_THEME=dark|light overrides both for
screenshots), and resources/style/app.qss for accents."""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

STYLE = Path(__file__).resolve().parents[2] / "resources" / "style" / "app.qss"


def system_is_dark(app: QApplication) -> bool:
    return app.styleHints().colorScheme() == Qt.ColorScheme.Dark


def wants_dark(app: QApplication) -> bool:
    """The chosen theme: the environment's, else the saved setting's, else the system's."""
    from app.core import settings
    chosen = os.environ.get("PAGEWISE_THEME", "").lower()
    if chosen not in ("dark", "light"):
        try:
            chosen = settings.load().theme
        except Exception:  # noqa: BLE001 - a broken settings file must not stop the window
            chosen = "auto"
    return chosen == "dark" if chosen in ("dark", "light") else system_is_dark(app)


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


def refresh(app: QApplication | None = None) -> None:
    """Apply the theme now (Settings saved a new one): no restart needed."""
    app = app or QApplication.instance()
    if app is not None:
        _apply_palette(app)


def is_dark(app: QApplication | None = None) -> bool:
    """The palette in use is the dark one."""
    app = app or QApplication.instance()
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def _apply_palette(app: QApplication) -> None:
    app.setPalette(dark_palette() if wants_dark(app) else app.style().standardPalette())
