"""The status bar never pushes the window wider than the screen, whatever its lines say."""
import pytest
from PySide6.QtWidgets import QLabel, QMainWindow


def _window_with_status_bar(qtbot, width: int):
    from app.qt.status_bar import StatusBar
    win = QMainWindow()
    qtbot.addWidget(win)
    win.setCentralWidget(QLabel("document"))
    status = StatusBar()
    win.setStatusBar(status)
    win.resize(width, 800)
    win.show()
    qtbot.waitExposed(win)
    return win, status


def test_long_status_lines_leave_a_1280_px_window_as_wide_as_it_was(qtbot):
    win, status = _window_with_status_bar(qtbot, 1280)
    long = "reading “Common Paper Cloud Service Agreement (Standard Terms) version 2.1”: 45% · " * 4
    status.set_engine_state("answering", "writing")
    status.set_answer_progress("writing the answer · 888 s · 8,888 tokens (88.8/s) " * 3)
    status.set_activity(long)
    status.set_paused_work("search vectors, tables and OCR paused while answering " * 3)
    status.set_plan("no NVIDIA GPU → llama.cpp on CPU, 32K context, Qwen2.5 Coder 1.5B Instruct " * 3,
                    ["no GPU found by NVML"])
    status.gpu_note.setText("no NVIDIA GPU · CPU mode " * 4)
    qtbot.wait(50)
    assert win.width() == 1280
    assert win.minimumSizeHint().width() <= 1280
    assert status.minimumSizeHint().width() <= 1280


def test_a_squeezed_note_is_whole_or_gone(qtbot):
    """The GPU note squeezed by a narrow bar is not cut to its first letter ("n", "没")."""
    win, status = _window_with_status_bar(qtbot, 1280)
    note = "no NVIDIA GPU · CPU mode"
    status.gpu_note.setText(note)
    status.set_plan("no NVIDIA GPU → llama.cpp on the CPU, GGUF smollm2-135m-q4_1, 8K context " * 2)
    status.set_activity("reading “Common Paper Cloud Service Agreement”: 45% · 6 s left " * 2)
    qtbot.wait(50)
    label = status.gpu_note
    painted = QLabel.text(label)
    assert label.text() == note and painted in (note, "")
    assert label.fontMetrics().horizontalAdvance(painted) <= label.width(), (painted, label.width())   # never cut
    if not painted:
        assert label.toolTip() == note
    status.set_plan("")
    status.set_activity("")
    qtbot.waitUntil(lambda: QLabel.text(label) == note, timeout=3_000)      # room again: shown whole


@pytest.mark.parametrize("width", [1228, 900, 700])
def test_activity_and_plan_lines_do_not_overlap(qtbot, width):
    """A background activity ("reading …: 45%") beside the plan line was laid over its first
    letters ("rea" on "no NVIDIA")."""
    win, bar = _window_with_status_bar(qtbot, width)
    bar.set_engine_state("ready", "")
    bar.set_plan("no NVIDIA GPU → llama.cpp on the CPU, GGUF smollm2-135m-q4_1, 8K context")
    bar.set_activity("reading common-paper-mnda.pdf: 45% · 6 s left")
    bar.set_paused_work("search vectors paused while answering")
    qtbot.wait(50)
    shown = [w for w in (bar.state_label, bar.activity_label, bar.paused_label, bar.plan_label) if w.isVisible()]
    assert len(shown) == 4
    for left, right in zip(shown, shown[1:]):
        assert left.geometry().right() < right.geometry().left(), (left.objectName(), right.objectName())
    assert win.width() == width
