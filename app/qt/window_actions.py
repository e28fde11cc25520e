"""Menus and keyboard shortcuts of the main window."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox

from app.qt import window_state as gui_settings

SHORTCUTS = [("Ctrl+O", "Open a PDF"), ("Ctrl+Shift+O", "Open a second PDF side by side"),
             ("Ctrl+L", "Go to the question box"), ("Ctrl+Enter", "Ask"), ("Esc", "Stop the answer"),
             ("F8 / Shift+F8", "Next / previous citation"), ("Ctrl+F", "Search in the document"),
             ("Ctrl++ / Ctrl+-", "Zoom in / out (or Ctrl+wheel)"), ("Ctrl+0 / Ctrl+9", "Fit width / fit page")]


def _action(window, menu, text: str, slot, shortcut=None, name: str = "") -> QAction:
    action = QAction(text, window)
    if shortcut:
        keys = shortcut if isinstance(shortcut, list) else [shortcut]
        action.setShortcuts([QKeySequence(k) for k in keys])
    action.triggered.connect(lambda _=False: slot())
    menu.addAction(action)
    window.actions_by_name[name or text] = action
    return action


def build_actions(window) -> dict[str, QAction]:
    window.actions_by_name = {}
    bar = window.menuBar()
    _file_menu(window, bar.addMenu("&File"))
    _view_menu(window, bar.addMenu("&View"))
    _ask_menu(window, bar.addMenu("&Ask"))
    help_menu = bar.addMenu("&Help")
    _action(window, help_menu, "Keyboard shortcuts", lambda: _show_shortcuts(window), "F1")
    return window.actions_by_name


def _file_menu(window, menu) -> None:
    _action(window, menu, "&Open PDF…", lambda: window.open_dialog(), "Ctrl+O", "open")   # the pane in use
    _action(window, menu, "Open PDF &side by side…", lambda: window.open_dialog(window.pane_b),
            "Ctrl+Shift+O", "open_compare")
    recent = menu.addMenu("Open &recent")
    recent.aboutToShow.connect(lambda: _fill_recent(window, recent))
    _action(window, menu, "&Close side-by-side view", lambda: window.set_compare(False), name="close_compare")
    _action(window, menu, "Compare &versions (left: old, right: new)", lambda: _compare_versions(window),
            name="compare_versions")
    menu.addSeparator()
    _action(window, menu, "&Quit", window.close, "Ctrl+Q", "quit")


def _compare_versions(window) -> None:
    from app.qt.redline_window import open_versions
    open_versions(window)


def _fill_recent(window, menu) -> None:
    menu.clear()
    files = gui_settings.recent_files(window.settings)
    for path in files:
        action = menu.addAction(Path(path).name)
        action.setToolTip(path)
        action.setEnabled(Path(path).is_file())
        action.triggered.connect(lambda _=False, p=path: window.open_path(p))
    if not files:
        menu.addAction("(none yet)").setEnabled(False)


def _view_menu(window, menu) -> None:
    pane = lambda: window.active_pane if window.active_pane.isVisible() else window.pane_a  # noqa: E731
    _action(window, menu, "Zoom &in", lambda: pane().view.zoom_by(1.2), ["Ctrl++", "Ctrl+="], "zoom_in")
    _action(window, menu, "Zoom &out", lambda: pane().view.zoom_by(1 / 1.2), "Ctrl+-", "zoom_out")
    _action(window, menu, "Fit &width", lambda: pane().view.set_fit("width"), "Ctrl+0", "fit_width")
    _action(window, menu, "Fit &page", lambda: pane().view.set_fit("page"), "Ctrl+9", "fit_page")
    menu.addSeparator()
    _action(window, menu, "&Find in document", lambda: _focus_search(pane()), "Ctrl+F", "find")


def _focus_search(pane) -> None:
    pane.search_box.setFocus()
    pane.search_box.selectAll()


def _ask_menu(window, menu) -> None:
    _action(window, menu, "&Question box", lambda: window.chat.ask_box.setFocus(), "Ctrl+L", "focus_ask")
    _action(window, menu, "&Stop answer", window.stop_answer, "Esc", "stop")
    menu.addSeparator()
    _action(window, menu, "&Next citation", lambda: window.citations.step(1), "F8", "next_citation")
    _action(window, menu, "&Previous citation", lambda: window.citations.step(-1), "Shift+F8", "prev_citation")


def _show_shortcuts(window) -> None:
    rows = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in SHORTCUTS)
    box = QMessageBox(QMessageBox.Icon.Information, "Keyboard shortcuts", f"<table>{rows}</table>",
                      QMessageBox.StandardButton.Ok, window)
    box.open()
