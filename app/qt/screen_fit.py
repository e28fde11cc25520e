"""A window's first size, within the screen it opens on: a 1400×900 default on a 1280×800 or
1366×768 screen put the status bar and the Ask button off-screen where no window manager
shrinks it (Xvfb, some tiling setups)."""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

MARGIN = 0.96      # of the screen's free area: a window manager's frame and panels stay in view


def resize_within_screen(window: QWidget, width: int, height: int) -> None:
    screen = window.screen() or QGuiApplication.primaryScreen()
    # offscreen (tests, screenshots) has a made-up 800×800 screen: its callers choose their sizes
    if screen is not None and QGuiApplication.platformName() != "offscreen":
        free = screen.availableGeometry()
        width = min(width, int(free.width() * MARGIN))
        height = min(height, int(free.height() * MARGIN))
    window.resize(width, height)
