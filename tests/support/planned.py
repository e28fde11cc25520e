"""The application's service with a plan and no engine process: for what the window derives
from the plan alone (its notices, its words about the engine)."""
from __future__ import annotations


class PlannedRuntime:
    """An engine runtime whose plan is given and which starts nothing."""
    running = False

    def __init__(self, plan, on_status=None):
        self.plan = plan

    def start(self, *planned) -> None:          # keeps its own plan
        pass

    def stop(self) -> None:
        pass

    def metrics(self) -> dict:
        return {}


def planned_service(plan):
    from app.service import Assistant
    service = Assistant(runtime_factory=lambda on_status: PlannedRuntime(plan, on_status))
    service.start()
    return service
