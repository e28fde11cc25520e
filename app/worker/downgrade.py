"""The downgrade switch: start a plan; on a classified failure move one rung down and retry,
saying each step ("… 0.92 / 56K failed: KV cache holds 40K → retry … 0.92 / 40K"); the ladder
ends with llama.cpp on the CPU, and only when that fails too does start() raise.

It walks the ladder and nothing else: what it started goes back to its caller (the Engine, the
only owner of the running engine), which stops the old engine before asking for a lower rung.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Callable

from app.core.failures import FailureKind
from app.core.models import catalogue as catalogue_models
from app.core.plan.hardware import Hardware
from app.core.plan.plan_history import PlanHistory, free_for
from app.core.plan.ladder import Failure, failure_kind, next_rung, short
from app.core.plan.memory import CUDA_CONTEXT, cuda_graph_bytes
from app.core.plan.types import EngineName, Plan
from app.worker import engine_errors as errors
from app.worker.ports import PORT_RACES

log = logging.getLogger(__name__)
MAX_TRIES_PER_MODEL = 3        # then the next model: each failed vLLM start costs a minute or more
_OOM_WORDS = ("out of memory", "outofmemory", "cuda error", "enginedead", "enginecore")


class NoEngineStarted(errors.StartError):
    """Every rung failed, down to llama.cpp on the CPU."""

    def __init__(self, message: str, failures: list[tuple[Plan, Exception]]):
        last = failures[-1][1] if failures else None
        super().__init__(message, getattr(last, "tail", None))
        self.failures = failures


class DowngradeSwitch:
    """`start_fn(plan)` launches a worker for the plan and returns it once ready (a started
    Supervisor), raising a typed WorkerError otherwise. history=None uses the file under the
    config dir; history=False remembers nothing. available=None: app.core.models.catalogue.is_available."""

    def __init__(self, hw: Hardware, catalogue, start_fn: Callable[[Plan], object], history=None,
                 on_step: Callable[[str], None] | None = None, available=None,
                 probe: Callable[[], Hardware] | None = None):
        self.hw, self.catalogue, self.start_fn, self.on_step = hw, catalogue, start_fn, on_step
        self.history = PlanHistory() if history is None else (history or None)
        self.available = catalogue_models.is_available if available is None else available
        self.probe = probe              # re-reads free VRAM after a runtime failure
        self.steps: list[str] = []
        self._downgraded = False        # the last walk needed more than its first rung

    def _say(self, text: str) -> None:
        self.steps.append(text)
        log.info("downgrade: %s", text)
        if self.on_step:
            try:
                self.on_step(text)
            except Exception as exc:          # a broken status callback must not stop the start
                log.warning("on_step callback failed: %s", exc)

    def start(self, plan: Plan) -> tuple[Plan, object]:
        """Start `plan` or the first rung below it that starts; returns (plan, what start_fn returned)."""
        planned = plan.model_id
        decision = None
        if self.history is not None:
            decision = self.history.decide(plan, self.hw, self.catalogue)
            remembered = decision.plan
            if decision.action == "reprobe":
                self._say(decision.line)
            elif short(remembered) != short(plan):
                self._say(f"{short(plan)} → {short(remembered)} (what worked last time on this machine)")
            plan = remembered
        started = self._walk(plan, planned)
        if decision is not None and decision.action in ("reprobe", "expired") and not self._downgraded:
            try:                          # the higher plan started: the squeeze is over, forget it
                self.history.forget(self.hw, planned)
            except OSError as exc:
                log.warning("could not update the plan history: %s", exc)
        return started

    def _walk(self, plan: Plan | None, planned: str) -> tuple[Plan, object]:
        tries: Counter = Counter()
        first_len: dict[str, int] = {}
        failures: list[tuple[Plan, Exception]] = []
        races = 0
        while plan is not None:
            tries[(plan.engine, plan.model_id)] += 1
            first_len.setdefault(plan.model_id, plan.max_model_len)
            try:
                supervisor = self.start_fn(plan)
            except errors.PortInUse as exc:
                # a port race says nothing about the plan: same plan, fresh port, not a try
                failures.append((plan, exc))
                tries[(plan.engine, plan.model_id)] -= 1
                races += 1
                if races > PORT_RACES:
                    raise NoEngineStarted(f"no free port stayed free for the engine: {exc}", failures) from None
                self._say(f"{short(plan)}: port taken by another program → retry on a new port")
                continue
            except (errors.WorkerError, catalogue_models.ModelNotAvailable) as exc:
                failures.append((plan, exc))
                too_many = tries[(plan.engine, plan.model_id)] >= MAX_TRIES_PER_MODEL
                nxt = next_rung(plan, Failure(FailureKind.NEXT_MODEL) if too_many else exc, self.hw,
                                self.catalogue, available=self.available)
                self._say(nxt.reasons[-1] if nxt else f"{short(plan)} failed: {exc}; nothing left to try")
                plan = nxt
                continue
            # a port race teaches nothing about the plan: only real failures are remembered
            real = [e for _, e in failures if not isinstance(e, errors.PortInUse)]
            self._downgraded = bool(real)
            self._remember(planned, plan, first_len, real)
            return plan, supervisor
        raise NoEngineStarted(f"no engine could start on this machine; last error: {failures[-1][1]}"
                              if failures else "no plan to start", failures)

    def _remember(self, planned: str, plan: Plan, first_len: dict[str, int], failures: list) -> None:
        if self.history is None or not failures:
            return
        learned = plan.max_model_len if plan.max_model_len < first_len[plan.model_id] else None
        # the free memory when it failed (vLLM's own reading where it gave one): the history
        # tries higher again only once clearly more is free than this
        said = [e.free_bytes for e in failures if isinstance(getattr(e, "free_bytes", None), int)]
        free = min([*said, free_for(self.hw, plan)])
        try:
            self.history.record(self.hw, planned, plan, limit=learned, free_bytes=free)
        except OSError as exc:                # a read-only config dir must not fail the start
            log.warning("could not remember the plan: %s", exc)

    # --- while running --------------------------------------------------------------------------
    def on_runtime_failure(self, plan: Plan, error) -> tuple[Plan, object]:
        """The running engine of `plan` failed (requests out of memory, or it died) and its owner
        stopped it: re-read free VRAM and start one rung down instead of giving up."""
        if self.probe is not None:
            self.hw = self.probe()
        failure = self._runtime_failure(plan, error)
        nxt = next_rung(plan, failure, self.hw, self.catalogue, available=self.available)
        self._say(nxt.reasons[-1] if nxt else f"{short(plan)} failed while running: {error}; nothing left")
        if nxt is None:
            raise NoEngineStarted(f"the engine failed while running and nothing smaller is left: {error}",
                                  [(plan, error)])
        return self._walk(nxt, plan.model_id)

    def _runtime_failure(self, plan: Plan, error):
        """A typed error stays as it is. Otherwise: 'free_memory' when another program now holds
        VRAM this plan's utilisation counted on; 'oom' when the error says out of memory."""
        if failure_kind(error) is not FailureKind.START_FAILED:
            return error
        if plan.engine is EngineName.VLLM and plan.devices:
            gpus = [g for g in self.hw.gpus if g.index in plan.devices]
            if gpus:
                spec = self.catalogue.get(plan.model_id)
                free = min(g.free_bytes for g in gpus)
                total = min(g.total_bytes for g in gpus)
                needed = plan.gpu_memory_utilization * total + CUDA_CONTEXT + cuda_graph_bytes(spec, plan.enforce_eager)
                if free < needed:
                    return Failure(FailureKind.FREE_MEMORY, free_bytes=free, total_bytes=total)
        text = str(error).lower()
        return Failure(FailureKind.OUT_OF_MEMORY) if any(w in text for w in _OOM_WORDS) else error
