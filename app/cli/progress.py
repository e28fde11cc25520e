"""Progress lines on stderr (stdout stays clean for --json): ingestion, the engine's status,
what the engine reads and how far it is, downloads."""
from __future__ import annotations

import sys
import time


def ingest_progress(name: str, quiet: bool, unit: str = "pages"):
    """Per-page ingestion progress on stderr (stdout stays clean for --json)."""
    if quiet or not sys.stderr.isatty():
        return None

    def progress(done: int, total: int) -> None:
        print(f"\rindexing {name}: {done}/{total} {unit}", end="" if done < total else "\n",
              file=sys.stderr, flush=True)
    return progress


def status_printer():
    """The engine's states on stderr: a listener of the Assistant's events."""
    from app.service import EngineState
    last = []

    def show(event) -> None:
        if not isinstance(event, EngineState):
            return
        line = f"[{event.state}] {event.detail}"
        if not last or last[-1] != line:      # supervisor and runtime may report the same step
            print(line, file=sys.stderr, flush=True)
            last[:] = [line]
    return show


class ReadingLine:
    """What the engine reads and how far it is, on stderr: "[reading] 2,100 new tokens of 4
    passages ≈ 9 s", then "reading the passages: 45% · 6 s left" (one line redrawn on a
    terminal, a line every tenth otherwise)."""

    def __init__(self, quiet: bool, what: str = "reading the passages"):
        from app.core.answer.progress import ProgressEstimate
        self.quiet, self.estimate = quiet, ProgressEstimate(what)
        self.shown = -1
        self.tty = sys.stderr.isatty()
        self.drawn = False
        self.written = -5

    def reading(self, r) -> None:
        if r.mode == "whole-document":
            self.estimate.what = "reading the documents"
        if not self.quiet:
            print(f"[reading] {r.line()}", file=sys.stderr, flush=True)

    def progress(self, done: int, total: int) -> None:
        if self.quiet or total <= 0:
            return
        now = self.estimate(done, total)
        if not now.measured:                  # the speed counts from the first slice on
            return
        pct, text = now.percent, now.line()
        if self.tty:
            print(f"\r{text:<60}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        elif pct // 10 != self.shown // 10 or pct == 100:
            print(text, file=sys.stderr, flush=True)
        self.shown = pct

    def writing(self, w) -> None:
        """"writing the answer · 14 s · 96 tokens (6.9/s)": redrawn on a terminal, else a line
        every 5 s (the reply is JSON: its words may not show for a while, this moves)."""
        if self.quiet:
            return
        if self.tty:
            print(f"\r{w.line():<60}", end="", file=sys.stderr, flush=True)
            self.drawn = True
        elif int(w.seconds) // 5 != self.written // 5:
            print(w.line(), file=sys.stderr, flush=True)
            self.written = int(w.seconds)

    def done(self) -> None:
        if self.drawn:
            print(file=sys.stderr, flush=True)
            self.drawn = False


def download_progress(stream=None, every_s: float = 2.0):
    """Bytes, speed and time left on stderr: one updating line on a terminal, else a line every 2 s."""
    stream = stream or sys.stderr
    tty = stream.isatty()
    last = [0.0]

    def show(p) -> None:
        now = time.monotonic()
        finished = p.total is not None and p.done >= p.total
        if tty:
            print("\r" + p.line().ljust(70), end="\n" if finished else "", file=stream, flush=True)
        elif finished or now - last[0] >= every_s:
            last[0] = now
            print(p.line(), file=stream, flush=True)
    return show
