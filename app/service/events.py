"""What the Assistant tells its listeners. Listeners may be called from the engine's threads:
a window hands them to its UI thread (a Qt signal), the command line prints them."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EngineState:
    """The engine's state and its detail: planning, launching, loading, ready, restarted,
    downgrade, failed, stopped."""
    state: str
    detail: str


@dataclass(frozen=True)
class PlanChanged:
    """The plan that runs now, after a start or a model switch; None once the engine stopped.
    `line` is the planner's one-line account of it. A restart that steps down a rung is told
    as EngineState ("downgrade", then "ready"); `Assistant.plan` is always the live plan."""
    plan: object | None
    line: str = ""
    reasons: tuple[str, ...] = field(default_factory=tuple)


def plan_summary(plan) -> tuple[str, list[str]]:
    """The plan in one line and its reasons (a status bar's text and tooltip)."""
    try:
        from app.core.plan import planner
        line = planner.explain(plan)
    except Exception:  # noqa: BLE001 - a status line must not fail on a plan it cannot word
        line = f"{getattr(plan, 'engine', '?')} · {getattr(plan, 'model_id', '?')}"
    return line, list(getattr(plan, "reasons", ()) or ())
