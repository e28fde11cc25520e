"""The one way errors reach the user: `show_error(parent, exc)`, also fed by the excepthooks.

Messages are one line (app.failure_messages); a worker failure adds the last lines of its
log under "Show Details…". Tracebacks go to the log file, never into the window.
"""
from __future__ import annotations

import logging
import sys
import threading
import traceback

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

log = logging.getLogger("pagewise.gui")
TAIL_LINES = 30


def one_line(exc: BaseException) -> str:
    from app.failure_messages import describe
    return describe(exc)


def log_tail(exc: BaseException) -> str:
    """The worker's last output lines when the exception carries them (StartError.tail)."""
    tail = getattr(exc, "tail", None) or []
    return "\n".join(list(tail)[-TAIL_LINES:])


def show_error(parent: QWidget | None, exc: BaseException, title: str = "Pagewise") -> QMessageBox:
    """Show `exc` as a readable, non-blocking message box and return it."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, one_line(exc), QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("errorBox")
    tail = log_tail(exc)
    if tail:
        box.setInformativeText("The engine's last log lines are under “Show Details…”.")
        box.setDetailedText(tail)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    box.open()   # non-modal to the event loop: streaming and rendering keep going
    return box


class _Relay(QObject):
    sig_exception = Signal(object)
    """An uncaught exception from any thread, delivered on the UI thread."""


_relay: _Relay | None = None


def install_hooks(parent: QWidget) -> None:
    """Route uncaught exceptions (UI thread and worker threads) to show_error(parent, …)."""
    global _relay
    _relay = _Relay(parent)
    _relay.sig_exception.connect(lambda exc: show_error(parent, exc))

    def hook(kind, exc, tb) -> None:
        log.error("uncaught %s: %s\n%s", kind.__name__, exc, "".join(traceback.format_tb(tb)))
        if _relay is not None and isinstance(exc, Exception):
            _relay.sig_exception.emit(exc)

    sys.excepthook = hook
    threading.excepthook = lambda args: hook(args.exc_type, args.exc_value, args.exc_traceback)


def uninstall_hooks() -> None:
    global _relay
    sys.excepthook, threading.excepthook = sys.__excepthook__, threading.__excepthook__
    _relay = None
