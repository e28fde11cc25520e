"""The running question's line, kept moving: a clock ticks every second between the engine's
reports, so the window never shows a frozen "100 %" or a stale "≈ 148 s" (issue 33.5).

- reading: the engine's own reports ("reading the passages: 45% · 6 s left"), as they come;
- writing: "writing the answer · 14 s · 96 tokens (6.9/s)", its seconds ticking between tokens;
- a review: "reviewing part 3 of 12 · pp. 11-15 · 35 s · about 9 min left", the time left from
  the parts finished so far (before the first is done, the reading estimate while it holds).
"""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal

from app.core.answer.progress import Writing

TICK_MS = 1000


def duration(seconds: float) -> str:
    """"40 s", "3 min", "1 h 05 min"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600) // 60:02d} min"


def part_line(k: int, n: int, pages: str, elapsed: float, expected_s: float | None,
              finished: list[float]) -> str:
    """A review part's line: its time so far, and what is left measured on the finished parts."""
    line = f"reviewing part {k} of {n} · {pages} · {elapsed:.0f} s"
    if finished:
        per_part = sum(finished) / len(finished)
        left = max(per_part * (n - k + 1) - elapsed, 0.0)
        return f"{line} · about {duration(left)} left (a part takes ~{duration(per_part)} here)"
    if expected_s is not None and elapsed < expected_s:      # a reading estimate, while it holds
        return f"{line} · reading ≈ {expected_s:.0f} s"
    return line


class AnswerProgress(QObject):
    sig_line = Signal(str)
    """The line to show now; "" once the question is over."""

    def __init__(self, parent=None, clock=time.monotonic) -> None:
        super().__init__(parent)
        self.clock = clock
        self._timer = QTimer(self, interval=TICK_MS, timeout=self._tick)
        self._writing: tuple[Writing, float] | None = None
        self._part: tuple | None = None                 # (k, n, part, began)
        self._finished: list[float] = []                # seconds each finished review part took

    def say(self, line: str) -> None:
        """An engine report (reading): shown as it is. After the writing began, a reading is
        the question asked again (the engine restarted): the writing clock goes."""
        if self._writing is not None:
            self._writing = None
            self._timer.stop()
        self.sig_line.emit(line)

    def writing(self, event: Writing) -> None:
        self._writing = (event, self.clock())
        self.sig_line.emit(event.line())
        self._timer.start()

    def part(self, k: int, n: int, part):
        """Part k of n begins; returns the part before it, finished now (or None)."""
        now, done = self.clock(), None
        if self._part is not None and self._part[0] < k:
            self._finished.append(now - self._part[3])
            done = self._part[2]
        self._part, self._writing = (k, n, part, now), None
        self._tick()
        self._timer.start()
        return done

    def stop(self) -> None:
        self._timer.stop()
        self._writing, self._part, self._finished = None, None, []
        self.sig_line.emit("")

    def _tick(self) -> None:
        now = self.clock()
        if self._writing is not None:
            event, at = self._writing
            self.sig_line.emit(event.later(now - at).line())
        elif self._part is not None:
            k, n, part, began = self._part
            self.sig_line.emit(part_line(k, n, part.pages_label, now - began,
                                         getattr(part, "expected_s", None), self._finished))
