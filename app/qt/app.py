"""Entry point of the desktop app: `run_gui` (called by `pagewise gui`)."""
from __future__ import annotations

import os
import sys


def run_versions(old: str, new: str, screenshot: str | None = None, change: int = 0) -> int:
    """The Compare versions window on two versions of a document (`pagewise gui --diff`)."""
    from app.qt.redline_window import run_redline
    return run_redline(old, new, screenshot=screenshot, change=change)


def run_gui(files: list[str], screenshot: str | None = None, question: str | None = None,
            compare: bool = False) -> int:
    """Open the main window on `files` and run until it closes; returns the exit status.

    With `screenshot`, the window is rendered offscreen, the question (if any) is asked,
    and once the answer (or the documents, without a question) is shown the window is
    saved to that PNG and the app exits.
    """
    if screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.qt import error_dialog as errors, theme, workers
    from app.qt.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Pagewise")
    app.setApplicationDisplayName("Pagewise")
    app.setDesktopFileName("pagewise")
    from pathlib import Path

    from PySide6.QtGui import QIcon
    icon = Path(__file__).resolve().parents[2] / "resources" / "icons" / "pagewise-256.png"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    theme.apply(app)
    # Quit when *this* window closes (not "when the last window closes", which also fires
    # a late quit into whatever event loop runs next when run_gui is called in-process).
    quit_on_last = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)
    window = MainWindow()
    window.sig_closed.connect(lambda: app.exit(0))
    errors.install_hooks(window)
    runner = None
    if screenshot:
        from app.qt.screenshot import ScreenshotRunner
        window.resize(1440, 900)
        runner = ScreenshotRunner(window, screenshot, question, has_files=bool(files))
    window.show()
    if files:
        window.open_files(files, compare=compare)
    elif compare:
        window.set_compare(True)
    elif not screenshot:       # a plain `pagewise gui`: the documents open at the last close
        window.restore_session()
    if runner:
        runner.start()
    try:
        code = app.exec()
    finally:
        errors.uninstall_hooks()
        workers.wait_all(15000)   # lets a half-started engine be stopped
        app.setQuitOnLastWindowClosed(quit_on_last)
    return code
