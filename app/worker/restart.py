"""Restart a crashed worker, within limits [jupyter_client KernelRestarter].

RestartPolicy decides; the Engine (app/worker/engine.py) applies it. A worker that stayed up
for the stable window earns a fresh budget, so a crash a day never exhausts it, while a
crash loop at start-up stops after `limit` attempts instead of spinning forever.
"""
from __future__ import annotations

from typing import Callable

from app.core.failures import FailureKind

K = FailureKind
# What starting the same plan again may cure, by kind: a crash, a hang, nothing answering, a port
# race, a start that timed out or failed for no known reason. A 5xx from an engine that still runs
# is a failed request (reported, never restarted); too little memory, a missing or broken model or
# an unsupported GPU need the downgrade ladder instead.
RESTART_KINDS = frozenset({K.WORKER_DIED, K.UNAVAILABLE, K.REQUEST_TIMEOUT, K.PORT_IN_USE,
                           K.START_TIMEOUT, K.START_FAILED})


def restarts_engine(kind: FailureKind) -> bool:
    return kind in RESTART_KINDS


class RestartPolicy:
    def __init__(self, limit: int = 3, stable_after_s: float = 60.0,
                 on_restart: Callable[[int, str], None] | None = None,
                 on_give_up: Callable[[str], None] | None = None):
        self.limit, self.stable_after_s = limit, stable_after_s
        self.on_restart, self.on_give_up = on_restart, on_give_up
        self.restarts = 0

    def should_restart(self, up_for_s: float, reason: str,
                       kind: FailureKind = FailureKind.WORKER_DIED) -> bool:
        """Called after a death or a failed restart; `up_for_s` is how long that incarnation had
        been ready. A kind that a restart of the same plan cannot cure gives up at once."""
        if not restarts_engine(kind):
            if self.on_give_up:
                self.on_give_up(f"not restarted ({kind.value}): {reason}")
            return False
        if up_for_s >= self.stable_after_s:
            self.restarts = 0
        if self.restarts >= self.limit:
            if self.on_give_up:
                self.on_give_up(f"gave up after {self.restarts} restarts: {reason}")
            return False
        self.restarts += 1
        if self.on_restart:
            self.on_restart(self.restarts, reason)
        return True

    def count(self) -> str:
        """'1 of 3': the restart just granted, against the limit."""
        return f"{self.restarts} of {self.limit}"
