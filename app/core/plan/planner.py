"""The plan: which engine, weights and settings this machine should start, and why, in plain words.

`make_plan` is a pure function of (hardware, catalogue, need, availability, history). The types
are in types.py, fitting a model to the hardware in fit.py, the arithmetic in memory.py, the
ladder of next steps in ladder.py (its two entry points are re-exported here).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from app.core.failures import BadInput
from app.core.models.catalogue import Catalogue, ModelSpec
from app.core.plan.fit import choose
from app.core.plan.fit import with_reasons as _with
from app.core.plan.hardware import Hardware
from app.core.plan.ladder import ladder, next_rung  # noqa: F401  (the planner's public API)
from app.core.plan.memory import fmt_tokens, round_up_context
from app.core.plan.types import (
    EngineName,
    ENGINE_NAMES,
    NEED_FLOOR,
    Plan,
    RemoteEndpoint,  # noqa: F401  (callers name it planner.RemoteEndpoint)
)


def need_cap(need_tokens: int | None) -> int | None:
    return max(NEED_FLOOR, round_up_context(need_tokens)) if need_tokens else None


def display_name(catalogue: Catalogue, model_id: str) -> str:
    try:
        return catalogue.get(model_id).name
    except Exception:
        return model_id


def make_plan(hw: Hardware, catalogue: Catalogue, need_tokens: int | None = None,
              prefer_model: str | None = None, remote: RemoteEndpoint | None = None,
              available: Callable[[ModelSpec], bool] | None = None, history=None) -> Plan:
    """The plan for this machine. available=None: assume every catalogue model can be pulled."""
    need = need_cap(need_tokens)
    if remote is not None:
        ctx = min(getattr(remote, "context", 32768) or 32768, need or 1 << 30)
        return Plan(engine=EngineName.REMOTE, model_id=remote.model, weights_format="remote", max_model_len=ctx,
                    reasons=(f"remote endpoint {remote.base_url} configured: no local engine",),
                    hardware="remote endpoint", base_url=remote.base_url, need_tokens=need or 0)
    have = (lambda s: True) if available is None else available
    chat = [m for m in catalogue.models if m.role == "chat"]
    notes: list[str] = []
    if prefer_model:
        wanted = catalogue.get(prefer_model)
        plan = choose(hw, [wanted], need)
        if plan and plan.model_id == wanted.id and have(wanted):
            return _remembered(plan, hw, catalogue, history)
        notes.append(f"{wanted.name} is not downloaded: `pagewise models pull {wanted.id}`" if plan
                     else f"{wanted.name} cannot run on this machine")
    ideal = choose(hw, chat, need)
    plan = choose(hw, [m for m in chat if have(m)], need)
    if plan is None:
        if ideal is None:
            raise BadInput("no model in the catalogue can run on this machine")
        return _with(ideal, *notes, f"{display_name(catalogue, ideal.model_id)} is not on this machine: "
                                    f"`pagewise models pull {ideal.model_id}`")
    if ideal and ideal.model_id != plan.model_id:
        notes.append(f"{display_name(catalogue, ideal.model_id)} would fit ({ENGINE_NAMES[ideal.engine]}, "
                     f"{fmt_tokens(ideal.max_model_len)} context): `pagewise models pull {ideal.model_id}`")
    return _remembered(_with(plan, *notes), hw, catalogue, history)


def _remembered(plan: Plan, hw: Hardware, catalogue: Catalogue, history) -> Plan:
    return history.apply(plan, hw, catalogue) if history is not None else plan


# --- words and data ------------------------------------------------------------------------------


def explain(plan: Plan) -> str:
    """One line: '24 GB RTX 4090 → vLLM AWQ qwen2.5-14b-instruct-awq, util 0.92, 56K context; 128K would need 38 GB'."""
    ctx = f"{fmt_tokens(plan.max_model_len)} context"
    if plan.engine is EngineName.REMOTE:
        return f"remote: {plan.base_url} → model {plan.model_id}, {ctx}"
    if plan.engine is EngineName.VLLM:
        util = plan.gpu_memory_utilization         # None: vLLM's CPU build (tests), no GPU budget
        extras = ([f"util {util:.2f}"] if util is not None else []) + [ctx]
        extras += ["fp8 KV cache"] * (plan.kv_cache_dtype == "fp8")
        extras += ["eager (no CUDA graphs)"] * plan.enforce_eager
        extras += [f"tensor parallel {plan.tensor_parallel}"] * (plan.tensor_parallel > 1)
        line = f"{plan.hardware} → vLLM AWQ {plan.model_id}, " + ", ".join(extras)
    elif plan.n_gpu_layers:
        layers = "all layers" if plan.n_gpu_layers < 0 else f"{plan.n_gpu_layers} layers"
        line = f"{plan.hardware} → llama.cpp GGUF {plan.model_id}, {layers} on the GPU, {ctx}"
    else:
        where = plan.hardware or "CPU"
        line = f"{where} → llama.cpp on the CPU, GGUF {plan.model_id}, {ctx}"
    return line + (f"; {plan.note}" if plan.note else "")


def to_dict(plan: Plan) -> dict:
    data = dataclasses.asdict(plan)
    data["reasons"], data["devices"] = list(plan.reasons), list(plan.devices)
    data["summary"] = explain(plan)
    return data


def from_dict(data: dict) -> Plan:
    known = {f.name for f in dataclasses.fields(Plan)}
    values = {k: v for k, v in data.items() if k in known}
    values["reasons"] = tuple(values.get("reasons", ()))
    values["devices"] = tuple(values.get("devices", ()))
    return Plan(**values)
