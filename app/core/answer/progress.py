"""What the engine reads before an answer, as typed events the CLI and the window both show:
`Reading` said once before the engine reads, then `ReadingProgress` as it goes
("reading the passages: 45% · 6 s left"), then `Writing` while the answer is generated
("writing the answer · 14 s · 96 tokens"), and `DoesNotFit` when documents asked to be read
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


WRITING = "writing the answer"


@dataclass(frozen=True)
class Writing:
    """The answer being written, from the moment the prompt is read: how long, how many
    tokens so far and at what speed. The reply is JSON under a schema, so its words may
    not show for a while; this is what moves meanwhile."""
    seconds: float                # since the prompt was read
    tokens: int                   # reply tokens so far (streamed pieces)

    @property
    def tokens_per_s(self) -> float | None:
        return self.tokens / self.seconds if self.tokens and self.seconds >= 1 else None

    def line(self) -> str:
        """"writing the answer · 14 s · 96 tokens (6.9/s)"."""
        tokens = f" · {self.tokens:,} token{'s' if self.tokens != 1 else ''}" if self.tokens else ""
        speed = f" ({self.tokens_per_s:.1f}/s)" if self.tokens_per_s else ""
        return f"{WRITING} · {self.seconds:.0f} s{tokens}{speed}"

    def later(self, seconds: float) -> "Writing":
        """The same figures `seconds` later (a display ticking between tokens)."""
        return Writing(self.seconds + seconds, self.tokens)


class WritingClock:
    """Counts a reply's tokens as they stream; `now()` says where the writing stands.
    Writing begins when the prompt is read (`begin`) or with the first token."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock, self.began, self.tokens = clock, None, 0

    def begin(self) -> None:
        if self.began is None:
            self.began = self.clock()

    def token(self) -> None:
        self.begin()
        self.tokens += 1

    def now(self) -> Writing | None:
        return None if self.began is None else Writing(self.clock() - self.began, self.tokens)


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
