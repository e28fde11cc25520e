"""The engine's start as the application decides it: this machine's plan (or a team server's),
the user's context cap, and the ladder to step down when a start fails. The runtime
(app.worker.runtime) is handed the result and only runs it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass
class EngineStart:
    plan: object
    switch_for: Callable | None = None     # (launch, on_step) → the downgrade switch
    connected: object | None = None        # a team server's client: nothing starts here


def plan_start(model_id: str | None = None) -> EngineStart:
    """Plan for this machine preferring `model_id` (settings engine = remote: the team's server)."""
    from app.core.models import catalogue as models
    from app.core.plan import hardware, planner
    from app.core.plan.plan_history import PlanHistory
    from app.worker import remote
    from app.worker.downgrade import DowngradeSwitch

    endpoint = remote.endpoint_from_settings()
    if endpoint is not None:
        plan, client = remote.plan_for(endpoint, models.load_catalogue())
        return EngineStart(plan, connected=client)
    hw, cat, history = hardware.probe(), models.load_catalogue(), PlanHistory()
    plan = planner.make_plan(hw, cat, prefer_model=model_id, available=models.is_available, history=history)
    plan = remote.capped(plan)          # the user's context cap (settings context_cap)

    def switch_for(launch, on_step):
        return DowngradeSwitch(hw, cat, start_fn=launch, history=history, probe=hardware.probe,
                               available=models.is_available, on_step=on_step)
    return EngineStart(plan, switch_for)


def start_planned(runtime, model_id: str | None = None):
    """Plan and start `runtime` as the Assistant does (benchmarks and tests that drive a runtime)."""
    start = plan_start(model_id)
    runtime.start(start.plan, start.switch_for, start.connected)
    return runtime.plan
