"""The status bar's lines side by side, never one drawn over another: a background activity
("reading …: 45%") beside the plan line was laid over its first letters ("rea" on "no NVIDIA")."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMainWindow

from app.qt.status_bar import StatusBar


@pytest.mark.parametrize("width", [1228, 900, 700])
def test_activity_and_plan_lines_do_not_overlap(qtbot, width):
    window = QMainWindow()
    qtbot.addWidget(window)
    bar = StatusBar(window)
    window.setStatusBar(bar)
    window.resize(width, 700)
    window.show()
    bar.set_engine_state("ready", "")
    bar.set_plan("no NVIDIA GPU → llama.cpp on the CPU, GGUF smollm2-135m-q4_1, 8K context")
    bar.set_activity("reading common-paper-mnda.pdf: 45% · 6 s left")
    bar.set_paused_work("search vectors paused while answering")
    qtbot.wait(50)
    shown = [w for w in (bar.state_label, bar.activity_label, bar.paused_label, bar.plan_label) if w.isVisible()]
    assert len(shown) == 4
    for left, right in zip(shown, shown[1:]):
        assert left.geometry().right() < right.geometry().left(), (left.objectName(), right.objectName())
    assert window.width() == width
