"""Remember which rung worked per (machine, planned model), so the next start goes straight there.

One small JSON file under the config dir. The machine fingerprint is the GPUs' names and VRAM
(or cores and RAM without a GPU); when it changes, everything remembered is forgotten.
"""
from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from app.core import paths
from app.core.models.catalogue import Catalogue
from app.core.plan.fit import llama_plan_for, vllm_plan_for
from app.core.plan.hardware import Hardware
from app.core.plan.ladder import short
from app.core.plan.planner import from_dict, to_dict
from app.core.plan.types import Plan
from app.core.settings import atomic_write

MiB, GiB = 1 << 20, 1 << 30


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

    def record(self, hw: Hardware, planned_model: str, worked: Plan, limit: int | None = None) -> None:
        """`worked` started when `planned_model` was planned; `limit` = a context cap learned by failing."""
        models = self._load(hw)
        entry = to_dict(worked)
        entry.pop("reasons", None)
        models[planned_model] = {"plan": entry, "limit": limit, "when": time.strftime("%Y-%m-%d %H:%M")}
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
        """`plan` adjusted to what worked last time on this machine (same or lower settings)."""
        entry = self.lookup(hw, plan.model_id) if plan.engine != "remote" else None
        if not entry:
            return plan
        try:
            worked = from_dict(entry["plan"])
            spec = catalogue.get(worked.model_id)
        except Exception:
            return plan                       # a stale entry (model gone from the catalogue)
        need, limit = plan.need_tokens or None, entry.get("limit")
        if worked.engine == "vllm":
            fp8 = True if worked.kv_cache_dtype == "fp8" else None
            new = vllm_plan_for(spec, hw, need, fp8=fp8, eager=worked.enforce_eager, cap=limit)
            if new and new.gpu_memory_utilization > worked.gpu_memory_utilization:
                new = vllm_plan_for(spec, hw, need, util=worked.gpu_memory_utilization, fp8=fp8,
                                    eager=worked.enforce_eager, cap=limit)
        else:
            new = llama_plan_for(spec, hw, need, cpu=worked.n_gpu_layers == 0, cap=limit)
            if new and worked.n_gpu_layers > 0 and not 0 < new.n_gpu_layers <= worked.n_gpu_layers:
                new = replace(new, n_gpu_layers=worked.n_gpu_layers)
        if new is None:
            return plan
        line = f"remembered from {entry.get('when', 'an earlier start')} on this machine: {short(new)}"
        if new.model_id != plan.model_id:
            line += f" (instead of {plan.model_id}, which did not start here)"
        return replace(new, reasons=new.reasons + (line,))
