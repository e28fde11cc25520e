"""Issue 33.5 in the real window (the embedded model in its real worker): after the reading
reaches 100 %, the status says "writing the answer" with seconds and tokens ticking until the
answer is shown; the background reading waits while a question on a document just opened runs."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.answer import qa
from app.core.answer.progress import WRITING
from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

pytestmark = pytest.mark.slow
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
ANSWER_TIMEOUT_MS = 900_000


@pytest.fixture
def live_window(qtbot, window):
    with qtbot.waitSignal(window.engine.sig_ready, timeout=180_000):
        window.engine.start()
    yield window


def _seconds(line: str) -> int:
    return int(re.search(r"· (\d+) s", line).group(1))


def test_the_window_shows_the_answer_being_written_with_a_ticking_count(qtbot, live_window, monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 240)          # seconds of writing on the embedded model
    win = live_window
    open_and_wait(qtbot, win, corpus_path("contracts-en/common-paper-mnda.pdf"))
    lines, shots = [], []

    def seen(line: str) -> None:
        lines.append((line, win.status.answer_label.isVisible(), win.status.activity_label.text()))
        if line.startswith(WRITING) and "tokens" in line and not shots:
            shots.append(win.grab())                      # live progress, as the user sees it
    win.engine.sig_answer_progress.connect(seen)
    with qtbot.waitSignal(win.sig_answer_shown, timeout=ANSWER_TIMEOUT_MS):
        win.ask("How can the agreement be terminated, and with how much notice?")   # at once after opening
        assert win.engine._read_job is None                # the document's reading waits: the question first
    writing = [(line, shown) for line, shown, _ in lines if line.startswith(WRITING)]
    assert writing, [line for line, _, _ in lines]
    assert all(shown for _, shown in writing)             # in the status bar, not only in the bubble
    assert any("tokens" in line for line, _ in writing)
    label = win.status.answer_label                       # the line is not squeezed to "… · 20 toke"
    assert label.minimumWidth() >= max(label.fontMetrics().horizontalAdvance(line) for line, _ in writing)
    ticks = [_seconds(line) for line, _ in writing]
    assert ticks == sorted(ticks) and len(set(ticks)) >= 2, writing   # the seconds move
    # nothing stale meanwhile: no background reading line while the question ran
    assert not any(activity.startswith("reading") for _, _, activity in lines)
    assert lines[-1][0] == "" and not win.status.answer_label.isVisible()   # cleared once answered
    if shots:
        shots[0].save(str(SHOTS / "live-progress.png"))
