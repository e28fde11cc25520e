"""Qt tests run offscreen; the main-window fixture owns its teardown (engine, threads, library)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from tests.support.strict import need_module  # noqa: E402

need_module("PySide6", "a dependency")      # CI / ./run-tests: a broken Qt fails here, it is not skipped


@pytest.fixture
def library(pagewise_home):
    from app.core.library import Library
    lib = Library()
    yield lib
    lib.close()


@pytest.fixture
def window(qtbot, library):
    """A main window on a temporary library; the engine is not started (tests that need
    it start it themselves)."""
    from app.qt import error_dialog as errors, workers
    from app.qt.main_window import MainWindow

    win = MainWindow(library=library, start_engine=False)
    win.resize(1280, 860)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    errors.uninstall_hooks()
    assert workers.wait_all(10000), "background jobs did not finish"


def open_and_wait(qtbot, win, path, pane=None, timeout=30000):
    """Open a PDF in a pane and wait until it is displayed and indexed."""
    with qtbot.waitSignal(win.sig_documents_ready, timeout=timeout):
        win.open_path(str(path), pane)
    return win.docs.get(pane or win.pane_a)


def wait_settled(qtbot, pane, timeout=5000):
    qtbot.waitUntil(lambda: pane.view.settled(), timeout=timeout)
