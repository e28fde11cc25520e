"""What the engine reads before an answer, as typed events the CLI and the window both show:
`Reading` said once before the engine reads, then `ReadingProgress` as it goes
("reading the passages: 45% · 6 s left"), and `DoesNotFit` when documents asked to be read
whole do not fit the context. The wording is here, once; the surfaces only place it."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from app.core.failures import BadInput

if TYPE_CHECKING:                      # a type only: the window imports this module at start
    from app.core.answer.rerank import Choice


def what_is_read(mode: str) -> str:
    """"reading the documents" (whole) or "reading the passages" (retrieval)."""
    return "reading the documents" if mode == "whole-document" else "reading the passages"


@dataclass
class Reading:
    """What the engine is about to read, said before the answer starts."""
    mode: str
    prompt_tokens: int            # the whole prompt
    new_tokens: int               # of it, what the engine does not hold yet (estimate)
    passages: int
    budget_tokens: int
    seconds: float | None         # expected time to the first token, from the measured speed
    new_context: bool = False     # the conversation's context overflowed: a new one began
    choice: Choice | None = None  # the model's pick among retrieval's pages, when it ran

    def line(self) -> str:
        what = "the documents" if self.mode == "whole-document" else f"{self.passages} passages"
        eta = f" ≈ {self.seconds:.0f} s" if self.seconds is not None else ""
        fresh = " (a new context: the conversation no longer fits)" if self.new_context else ""
        chose = ""
        if self.choice and not self.choice.skipped:
            chose = (f"the model chose passage {self.choice.chosen} of {self.choice.candidates} "
                     f"({self.choice.seconds:.1f} s); ")
        return f"{chose}reading {self.new_tokens:,} new tokens of {what}{eta}{fresh}"


@dataclass(frozen=True)
class ReadingProgress:
    """How far the engine has read a prompt, and how long the rest should take."""
    what: str                     # "reading the passages", "reading “contract.pdf”"
    read: int                     # prompt tokens read so far
    total: int
    seconds_left: float | None    # None until a speed is measured, and once all is read
    measured: bool                # a reading speed stands behind this report (not its first ones)

    @property
    def percent(self) -> int:
        return int(100 * self.read / max(self.total, 1))

    def line(self) -> str:
        """"reading the passages: 45% · 6 s left"."""
        left = f" · {self.seconds_left:.0f} s left" if self.seconds_left is not None else ""
        return f"{self.what}: {self.percent}%{left}"


class ProgressEstimate:
    """Turns the engine's (read, total) reports into ReadingProgress with the time left.

    The speed counts from the first slice on: a request reports "0 of N" when accepted and
    then where reading starts (what the engine already held), which took no reading."""

    def __init__(self, what: str, clock: Callable[[], float] = time.perf_counter):
        self.what, self.clock = what, clock
        self.first: tuple[float, int] | None = None
        self.calls = 0

    def __call__(self, read: int, total: int) -> ReadingProgress:
        now = self.clock()
        self.calls += 1
        measured = not (self.first is None or self.calls <= 2 or read < self.first[1])
        if not measured:
            self.first = (now, read)
        rate = (read - self.first[1]) / max(now - self.first[0], 1e-6)
        left = (total - read) / rate if rate > 0 and read < total else None
        return ReadingProgress(self.what, read, total, left, measured)


class DoesNotFit(BadInput):
    """Documents asked to be read whole that the context cannot hold (questions about them
    use the best passages instead)."""

    def __init__(self, tokens: int, room: int):
        self.tokens, self.room = tokens, room
        super().__init__(f"the document is {tokens:,} tokens and the context holds {room:,} for a prompt: "
                         f"about {self.share:.0%} of it would fit, so questions about it use the best "
                         "passages instead")

    def __reduce__(self):              # rebuilt from its figures, not its message
        return type(self), (self.tokens, self.room)

    @property
    def share(self) -> float:
        """The part of the documents the context holds (0-1)."""
        return self.room / self.tokens
