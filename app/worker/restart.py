"""Restart a crashed worker, within limits [jupyter_client KernelRestarter].

RestartPolicy decides; ManagedWorker applies it around a Supervisor. A worker that stayed up
for the stable window earns a fresh budget, so a crash a day never exhausts it, while a
crash loop at start-up stops after `limit` attempts instead of spinning forever.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

from app.core.failures import FailureKind
from app.worker.client import ChatClient
from app.worker.errors import StartError, WorkerDied
from app.worker.launch import LaunchSpec
from app.worker.supervisor import Supervisor, WorkerStatus

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


class ManagedWorker:
    """A Supervisor that comes back after a crash. `make_spec` is called for every incarnation
    (a fresh port and key each time); pass a LaunchSpec to reuse one."""

    def __init__(self, make_spec: Callable[[], LaunchSpec] | LaunchSpec, policy: RestartPolicy | None = None,
                 log_path: Path | None = None,
                 on_status: Callable[[WorkerStatus, str], None] | None = None):
        self._make = make_spec if callable(make_spec) else (lambda: make_spec)
        self.policy = policy or RestartPolicy()
        self.log_path, self.on_status = log_path, on_status
        self.supervisor: Supervisor | None = None
        self._ready = threading.Event()
        self._stopped = False
        self._lock = threading.Lock()

    @property
    def spec(self) -> LaunchSpec | None:
        return self.supervisor.spec if self.supervisor else None

    @property
    def status(self) -> WorkerStatus:
        return self.supervisor.status if self.supervisor else WorkerStatus.STOPPED

    def start(self) -> None:
        self._stopped = False
        self._launch()

    def stop(self) -> None:
        self._stopped = True
        self._ready.clear()
        with self._lock:
            if self.supervisor:
                self.supervisor.stop()

    def wait_ready(self, timeout_s: float | None = None) -> bool:
        return self._ready.wait(timeout_s)

    def client(self, timeout_s: float = 600) -> ChatClient:
        """A client for the current incarnation; raises WorkerDied while none is ready."""
        if not self._ready.is_set() or self.supervisor is None:
            raise WorkerDied(f"the engine is {self.status.value}")
        spec = self.supervisor.spec
        return ChatClient(spec.base_url, spec.api_key, spec.model_name, timeout_s)

    # --- internals ----------------------------------------------------------------------------
    def _launch(self) -> None:
        with self._lock:
            self.supervisor = Supervisor(self._make(), self.log_path, self._on_status)
            sup = self.supervisor
        sup.start()                       # raises a typed StartError; the caller decides
        self._ready.set()

    def _on_status(self, status: WorkerStatus, detail: str) -> None:
        if self.on_status:
            self.on_status(status, detail)
        if status == WorkerStatus.DEAD and not self._stopped:
            self._ready.clear()
            sup = self.supervisor
            up_for = time.monotonic() - (sup.started_at or time.monotonic()) if sup else 0.0
            threading.Thread(target=self._recover, args=(up_for, detail), name="worker-restart",
                             daemon=True).start()

    def _recover(self, up_for_s: float, reason: str) -> None:
        kind = FailureKind.WORKER_DIED
        while not self._stopped and self.policy.should_restart(up_for_s, reason, kind):
            try:
                self._launch()
                return
            except StartError as exc:     # failed to come back: counts as another death at once
                up_for_s, reason, kind = 0.0, str(exc), exc.kind
