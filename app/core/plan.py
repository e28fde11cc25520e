"""The plan: which engine, weights and settings this machine should start, and why, in plain words.

`make_plan` is a pure function of (hardware, catalogue, need, availability, history). Fitting a
model to the hardware is in plan_fit.py, the arithmetic in plan_memory.py, the ladder of next
steps in plan_ladder.py (re-exported here). Those modules import this one, so it imports them
inside functions.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from app.core.hardware import Hardware
from app.core.models import Catalogue, ModelSpec
from app.core.plan_memory import fmt_tokens, round_up_context

MIN_VLLM_CONTEXT = 8192       # below this a vLLM start is not worth it: llama.cpp instead
MIN_LLAMA_CONTEXT = 2048
DEFAULT_TARGET = 32768        # context wanted when the document is not known yet (~100 pages)
NEED_FLOOR = 8192             # a document's cap still leaves room for follow-up questions
VLLM_MIN_CC = (7, 5)          # vLLM's AWQ kernels need compute capability 7.5 (AWQConfig: 75)
FP8_KV_MIN_CC = (8, 9)        # fp8 (e4m3) KV cache: Triton needs sm89+, FlashAttention-3 sm90
CPU_PARAMS_PER_CORE = 0.5     # billions of parameters per core that still read a page in seconds


@dataclass(frozen=True)
class RemoteEndpoint:
    base_url: str
    model: str
    context: int = 32768


@dataclass(frozen=True)
class Plan:
    engine: str                          # "vllm" | "llamacpp" | "remote"
    model_id: str
    weights_format: str                  # "awq" | "gguf" | "remote"
    gpu_memory_utilization: float | None
    max_model_len: int
    n_gpu_layers: int = 0                # llama.cpp: -1 all, 0 CPU
    kv_cache_dtype: str = "auto"         # "auto" | "fp8"
    tensor_parallel: int = 1
    enforce_eager: bool = False
    enable_prefix_caching: bool = True
    enable_chunked_prefill: bool = True
    reasons: tuple[str, ...] = ()
    rung: int = 0
    yarn_factor: float = 1.0             # >1: rope scaling (YaRN) beyond the native context
    devices: tuple[int, ...] = ()        # GPU indices (CUDA_VISIBLE_DEVICES)
    kv_tokens: int = 0                   # tokens the planner expects the KV cache to hold
    hardware: str = ""                   # "24 GB RTX 4090"
    note: str = ""                       # "128K would need 38 GB"
    need_tokens: int = 0                 # the document's need it was capped by (0: unknown)
    base_url: str = ""                   # remote only


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
    from app.core.plan_fit import choose, with_reasons as _with

    need = need_cap(need_tokens)
    if remote is not None:
        ctx = min(getattr(remote, "context", 32768) or 32768, need or 1 << 30)
        return Plan("remote", remote.model, "remote", None, ctx,
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
            raise ValueError("no model in the catalogue can run on this machine")
        return _with(ideal, *notes, f"{display_name(catalogue, ideal.model_id)} is not on this machine: "
                                    f"`pagewise models pull {ideal.model_id}`")
    if ideal and ideal.model_id != plan.model_id:
        notes.append(f"{display_name(catalogue, ideal.model_id)} would fit ({ENGINE_NAMES[ideal.engine]}, "
                     f"{fmt_tokens(ideal.max_model_len)} context): `pagewise models pull {ideal.model_id}`")
    return _remembered(_with(plan, *notes), hw, catalogue, history)


def _remembered(plan: Plan, hw: Hardware, catalogue: Catalogue, history) -> Plan:
    return history.apply(plan, hw, catalogue) if history is not None else plan


# --- words and data ------------------------------------------------------------------------------
ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "remote": "remote"}


def explain(plan: Plan) -> str:
    """One line: '24 GB RTX 4090 → vLLM AWQ qwen2.5-14b-instruct-awq, util 0.92, 56K context; 128K would need 38 GB'."""
    ctx = f"{fmt_tokens(plan.max_model_len)} context"
    if plan.engine == "remote":
        return f"{plan.base_url} → remote model {plan.model_id}, {ctx}"
    if plan.engine == "vllm":
        extras = [f"util {plan.gpu_memory_utilization:.2f}", ctx]
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


def ladder(plan: Plan, hw: Hardware, catalogue: Catalogue, **kw) -> list[Plan]:
    from app.core.plan_ladder import ladder as _ladder
    return _ladder(plan, hw, catalogue, **kw)


def next_rung(plan: Plan, failure, hw: Hardware, catalogue: Catalogue, **kw) -> Plan | None:
    from app.core.plan_ladder import next_rung as _next
    return _next(plan, failure, hw, catalogue, **kw)
