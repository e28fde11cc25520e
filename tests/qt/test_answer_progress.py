"""Issue 33.5: the running question's line keeps moving and never keeps a stale estimate
(a review part showed "≈ 148 s" for 14 minutes; nothing moved after the reading's 100 %)."""
from __future__ import annotations

from dataclasses import dataclass

from app.core.answer.progress import Writing
from app.qt.answer_progress import AnswerProgress, part_line


@dataclass
class Part:
    pages_label: str
    expected_s: float | None
    notes: str = ""


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_review_part_keeps_its_estimate_only_while_it_holds_then_the_measured_one():
    assert part_line(1, 12, "pp. 1-5", 40, 148, []).endswith("40 s · reading ≈ 148 s")
    stale = part_line(1, 12, "pp. 1-5", 840, 148, [])      # 14 minutes in: no "≈ 148 s" any more
    assert "148" not in stale and stale.endswith("840 s")
    measured = part_line(3, 12, "pp. 11-15", 35, 148, [80.0, 80.0])
    assert "about 13 min left" in measured and "~80 s" in measured


def test_writing_ticks_between_tokens_and_finished_parts_come_back(qtbot):
    clock, lines = Clock(), []
    progress = AnswerProgress(clock=clock)
    progress.sig_line.connect(lines.append)
    progress.writing(Writing(0.0, 0))
    clock.now += 3
    progress._tick()                                       # no token for 3 s: the seconds still move
    assert lines == ["writing the answer · 0 s", "writing the answer · 3 s"]
    first, second = Part("pp. 1-5", 20.0, "notes one"), Part("pp. 6-10", 20.0)
    assert progress.part(1, 2, first) is None
    clock.now += 50
    assert progress.part(2, 2, second) is first            # part 1 is done: the window shows it now
    assert "about 50 s left" in lines[-1]
    progress.say("reading the passages: 10%")
    progress.stop()
    assert lines[-1] == ""
