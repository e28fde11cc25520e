"""Remember which rung worked per (machine, planned model), so the next start goes straight there.

One small JSON file under the config dir. The machine fingerprint is the GPUs' names and VRAM
(or cores and RAM without a GPU); when it changes, everything remembered is forgotten.

One squeeze must not lower the plan for good: an entry expires after HISTORY_DAYS, and each
entry keeps the free memory read when the start failed, so when clearly more is free now
(another program let its VRAM go) the higher plan is tried first; if that fails, the ladder
walks down again and the entry is written anew.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

from app.core import paths
from app.core.models.catalogue import Catalogue
from app.core.plan.fit import llama_plan_for, vllm_plan_for
from app.core.plan.hardware import Hardware
from app.core.plan.ladder import short
from app.core.plan.planner import from_dict, to_dict
from app.core.plan.types import EngineName, Plan
from app.core.settings import atomic_write

MiB, GiB = 1 << 20, 1 << 30
HISTORY_DAYS = 14            # a squeeze weeks ago says little about today: plan afresh after this
REPROBE_MARGIN = GiB         # free memory at least this much above the failure's reading: try higher
_ENGINE_RANK = {EngineName.VLLM: 2, EngineName.LLAMACPP: 1}


def fingerprint(hw: Hardware) -> str:
    if hw.gpus:
        return "gpu:" + ";".join(f"{g.name}/{round(g.total_bytes / MiB)}MiB" for g in hw.gpus)
    return f"cpu:{hw.cpu_cores}c/{round(hw.ram_bytes / GiB)}GiB"


class PlanHistory:
    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else paths.config_dir() / "plan_history.json"

    # --- storage ------------------------------------------------------------------------------
    def _load(self, hw: Hardware) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        # other hardware (new GPU, moved settings folder): what worked there says nothing here
        return data.get("models", {}) if data.get("fingerprint") == fingerprint(hw) else {}

    def _save(self, hw: Hardware, models: dict) -> None:
        # atomic, with a unique temp name: a crash never leaves half a file
        atomic_write(self.path, json.dumps({"fingerprint": fingerprint(hw), "models": models}, indent=1))

    def lookup(self, hw: Hardware, model_id: str) -> dict | None:
        return self._load(hw).get(model_id)

    def record(self, hw: Hardware, planned_model: str, worked: Plan, limit: int | None = None,
               free_bytes: int | None = None) -> None:
        """`worked` started when `planned_model` was planned; `limit` = a context cap learned by
        failing; `free_bytes` = the free (V)RAM when the start failed (None: read it from `hw`)."""
        models = self._load(hw)
        entry = to_dict(worked)
        entry.pop("reasons", None)
        models[planned_model] = {"plan": entry, "limit": limit, "when": time.strftime("%Y-%m-%d %H:%M"),
                                 "at": time.time(),
                                 "free_bytes": free_for(hw, worked) if free_bytes is None else int(free_bytes)}
        self._save(hw, models)

    def forget(self, hw: Hardware, model_id: str | None = None) -> None:
        models = self._load(hw)
        if model_id is None:
            models.clear()
        else:
            models.pop(model_id, None)
        self._save(hw, models)

    # --- use ----------------------------------------------------------------------------------
    def apply(self, plan: Plan, hw: Hardware, catalogue: Catalogue) -> Plan:
        """`plan` adjusted to what worked last time on this machine (see `decide`)."""
        return self.decide(plan, hw, catalogue).plan

    def decide(self, plan: Plan, hw: Hardware, catalogue: Catalogue, now: float | None = None) -> "Decision":
        """What to start instead of `plan` (fit to the memory free now): the remembered rung, or
        `plan` itself when the entry expired or clearly more memory is free than at the failure."""
        entry = self.lookup(hw, plan.model_id) if plan.engine is not EngineName.REMOTE else None
        if not entry:
            return Decision(plan, "none", "")
        remembered = _remembered(entry, plan, hw, catalogue)
        if remembered is None:
            return Decision(plan, "none", "")       # a stale entry (model gone from the catalogue)
        worked, when = from_dict(entry["plan"]), entry.get("when", "an earlier start")
        past = f"history: last start here used {short(worked)} after a failure on {when}"
        age_days = ((now or time.time()) - _at(entry)) / 86400 if _at(entry) else None
        if age_days is not None and age_days > HISTORY_DAYS:
            return Decision(plan, "expired", f"{past}; that is over {HISTORY_DAYS} days ago: planned afresh")
        free_now, then = free_for(hw, plan), entry.get("free_bytes")
        if _rank(plan, catalogue) > _rank(remembered, catalogue) and (then is None or free_now >= then + REPROBE_MARGIN):
            why = f"{gib(free_now)} GiB are free" + (f" (only {gib(then)} GiB were then)" if then is not None else "")
            line = f"{past}; will try {_setting(plan)} first because {why}"
            return Decision(_with(plan, line), "reprobe", line)
        line = f"{past}; remembered: starting there" + (f" ({gib(free_now)} GiB free now)" if free_now else "")
        if remembered.model_id != plan.model_id:
            line += f" (instead of {plan.model_id}, which did not start here)"
        return Decision(_with(remembered, line), "remembered", line)


@dataclass(frozen=True)
class Decision:
    plan: Plan
    action: str        # "none" | "remembered" | "reprobe" (try higher first) | "expired"
    line: str          # "history: …", for `pagewise doctor`, the start's steps and the log

    def to_dict(self) -> dict:
        return {"action": self.action, "line": self.line}


def free_for(hw: Hardware, plan: Plan) -> int:
    """The memory `plan` is fit to: free VRAM on its GPUs (the fullest one), else available RAM."""
    if plan.engine is EngineName.VLLM and hw.gpus:
        gpus = [g for g in hw.gpus if g.index in plan.devices] or list(hw.gpus)
        return min(g.free_bytes for g in gpus)
    if plan.engine is EngineName.LLAMACPP and plan.n_gpu_layers != 0 and hw.gpus:
        return max(g.free_bytes for g in hw.gpus)
    return hw.ram_available_bytes


def gib(n_bytes: int) -> str:
    return f"{n_bytes / GiB:.0f}" if n_bytes >= 10 * GiB else f"{n_bytes / GiB:.1f}"


def _at(entry: dict) -> float | None:
    if isinstance(entry.get("at"), (int, float)):
        return float(entry["at"])
    try:                                      # entries written before "at" was kept
        return time.mktime(time.strptime(entry.get("when", ""), "%Y-%m-%d %H:%M"))
    except (TypeError, ValueError):
        return None


def _rank(plan: Plan, catalogue: Catalogue) -> tuple:
    """Bigger means more of the machine: engine, model size, utilisation, GPU layers, context."""
    try:
        params = catalogue.get(plan.model_id).params_b
    except Exception:
        params = 0.0
    layers = 1 << 20 if plan.n_gpu_layers < 0 else plan.n_gpu_layers
    return (_ENGINE_RANK.get(plan.engine, 0), params, round(plan.gpu_memory_utilization or 0.0, 2), layers,
            plan.max_model_len, not plan.enforce_eager)


def _setting(plan: Plan) -> str:
    """'0.92' for vLLM (the utilisation is what a squeeze lowers), else the short form."""
    return f"{plan.gpu_memory_utilization:.2f}" if plan.engine is EngineName.VLLM else short(plan)


def _with(plan: Plan, line: str) -> Plan:
    return plan if line in plan.reasons else replace(plan, reasons=plan.reasons + (line,))


def _remembered(entry: dict, plan: Plan, hw: Hardware, catalogue: Catalogue) -> Plan | None:
    """The remembered rung, fit to this hardware (same or lower settings than what worked)."""
    try:
        worked = from_dict(entry["plan"])
        spec = catalogue.get(worked.model_id)
    except Exception:
        return None
    need, limit = plan.need_tokens or None, entry.get("limit")
    if worked.engine is EngineName.VLLM:
        fp8 = True if worked.kv_cache_dtype == "fp8" else None
        new = vllm_plan_for(spec, hw, need, fp8=fp8, eager=worked.enforce_eager, cap=limit)
        if new and new.gpu_memory_utilization > worked.gpu_memory_utilization:
            new = vllm_plan_for(spec, hw, need, util=worked.gpu_memory_utilization, fp8=fp8,
                                eager=worked.enforce_eager, cap=limit)
    else:
        new = llama_plan_for(spec, hw, need, cpu=worked.n_gpu_layers == 0, cap=limit)
        if new and worked.n_gpu_layers > 0 and not 0 < new.n_gpu_layers <= worked.n_gpu_layers:
            new = replace(new, n_gpu_layers=worked.n_gpu_layers)
    return new
