"""The downgrade ladder: after a failed start, the next plan to try, as data.

The engine's own answer wins over the arithmetic: vLLM's "estimated maximum model length is N"
becomes the next max_model_len, its "Free memory on device (F/T GiB)" the next utilisation.
Every rung moves strictly down (same model → smaller AWQ model → llama.cpp on the GPU →
llama.cpp on the CPU → smaller GGUF), so the ladder always ends.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from app.core.hardware import Hardware
from app.core.models import Catalogue, ModelSpec
from app.core.plan import FP8_KV_MIN_CC, MIN_LLAMA_CONTEXT, MIN_VLLM_CONTEXT, Plan
from app.core.plan_fit import pick_cpu, pick_llama_gpu, pick_vllm, vllm_gpus, vllm_plan_for
from app.core.plan_memory import fmt_tokens, round_context

# Worker error classes (app.worker.errors, engines) → failure kinds; matched by name along the
# MRO so that core never imports the worker package.
_KINDS = {"KvCacheTooSmall": "kv_too_small", "FreeMemoryTooLow": "free_memory",
          "NoCacheMemory": "no_kv_memory", "OutOfMemory": "oom", "UnsupportedGpu": "unsupported",
          "ModelFileMissing": "model_missing", "ModelNotAvailable": "model_missing",
          "ModelLoadFailed": "model_broken", "KvCacheDtypeUnsupported": "kv_dtype",
          "EngineMissing": "unsupported"}
KINDS = set(_KINDS.values()) | {"next_model", "other"}
_WHY = {"kv_too_small": "KV cache too small", "free_memory": "not enough free VRAM",
        "no_kv_memory": "no memory left for the KV cache", "oom": "out of memory",
        "unsupported": "GPU or quantisation not supported", "model_missing": "model files missing",
        "model_broken": "model files unreadable", "next_model": "too many failed starts",
        "kv_dtype": "fp8 KV cache not supported",
        "other": "start failed"}


@dataclass(frozen=True)
class Failure:
    """A failure described by the caller (e.g. a runtime OOM after re-reading free VRAM)."""
    kind: str
    max_len: int | None = None
    free_bytes: int | None = None
    total_bytes: int | None = None


def failure_kind(failure) -> str:
    """'kv_too_small', 'free_memory', 'oom', ... from a worker error, or a kind given as text."""
    if failure is None:
        return "other"
    if isinstance(failure, Failure):
        return failure.kind if failure.kind in KINDS else "other"
    if isinstance(failure, str):
        kind = failure.split(":", 1)[0]
        return kind if kind in KINDS else "other"
    for cls in type(failure).__mro__:
        if cls.__name__ in _KINDS:
            return _KINDS[cls.__name__]
    return "other"


def _max_len(failure) -> int | None:
    n = getattr(failure, "max_len", None)
    if n is None and isinstance(failure, str) and ":" in failure:
        n = int(re.sub(r"\D", "", failure.split(":", 1)[1]) or 0) or None
    return n


def short(plan: Plan) -> str:
    """'0.92 / 64K' for vLLM, 'llama.cpp 20 layers / 32K' or 'llama.cpp CPU / 8K'."""
    ctx = fmt_tokens(plan.max_model_len)
    if plan.engine == "vllm":
        extra = " fp8" * (plan.kv_cache_dtype == "fp8") + " eager" * plan.enforce_eager
        return f"{plan.model_id} {plan.gpu_memory_utilization:.2f} / {ctx}{extra}"
    where = "CPU" if plan.n_gpu_layers == 0 else (
        "all layers" if plan.n_gpu_layers < 0 else f"{plan.n_gpu_layers} layers")
    return f"llama.cpp {plan.model_id} {where} / {ctx}"


def _why(kind: str, failure) -> str:
    if kind == "kv_too_small" and _max_len(failure):
        return f"KV cache holds {fmt_tokens(_max_len(failure))}"
    free, total = getattr(failure, "free_bytes", None), getattr(failure, "total_bytes", None)
    if kind == "free_memory" and free and total:
        return f"only {free / 2**30:.1f} of {total / 2**30:.1f} GiB free"
    return _WHY[kind]


def _step(old: Plan, new: Plan | None, kind: str, failure) -> Plan | None:
    if new is None:
        return None
    line = f"{short(old)} failed: {_why(kind, failure)} → retry {short(new)}"
    return replace(new, rung=old.rung + 1, reasons=new.reasons + (line,))


def _pool(catalogue: Catalogue, available, fmt: str, below: ModelSpec | None, same: bool = False):
    """Chat models of one format that are on the machine, smaller than `below` (or it, if same)."""
    have = (lambda s: True) if available is None else available
    return [m for m in catalogue.models if m.role == "chat" and m.format == fmt and have(m)
            and (below is None or m.params_b < below.params_b or (same and m.id == below.id))]


def _llama_stage(hw: Hardware, catalogue: Catalogue, need, available, below: ModelSpec | None,
                 gpu: bool = True, same: bool = False) -> Plan | None:
    """llama.cpp: on the GPU if one is there, then on the CPU."""
    if gpu and hw.gpus:
        plan = pick_llama_gpu(_pool(catalogue, available, "gguf", below, same), hw, need)
        if plan:
            return plan
    return pick_cpu(_pool(catalogue, available, "gguf", below, same), hw, need)


def _vllm_next(plan, spec, kind, failure, hw, cat, available) -> Plan | None:
    need, fp8, eager = plan.need_tokens or None, plan.kv_cache_dtype == "fp8", plan.enforce_eager
    cc_ok = any(g.compute_capability >= FP8_KV_MIN_CC for g in vllm_gpus(hw))
    if kind == "kv_too_small":
        n = _max_len(failure)
        m = round_context(n) if n else 0
        if MIN_VLLM_CONTEXT <= m < plan.max_model_len:
            return replace(plan, max_model_len=m, kv_tokens=n, note="")
        if not fp8 and cc_ok:
            return vllm_plan_for(spec, hw, need, util=plan.gpu_memory_utilization, fp8=True,
                                 eager=eager, cap=plan.max_model_len)
    elif kind == "free_memory":
        free = getattr(failure, "free_bytes", None)
        if free:
            hw = replace(hw, gpus=tuple(replace(g, free_bytes=min(g.free_bytes, free))
                                        if g.index in plan.devices else g for g in hw.gpus))
            new = vllm_plan_for(spec, hw, need, fp8=fp8, eager=eager, cap=plan.max_model_len)
        else:
            new = vllm_plan_for(spec, hw, need, util=round(plan.gpu_memory_utilization - 0.05, 2),
                                fp8=fp8, eager=eager, cap=plan.max_model_len)
        if new and new.gpu_memory_utilization < plan.gpu_memory_utilization:
            return new
    elif kind == "kv_dtype" and fp8:
        new = vllm_plan_for(spec, hw, need, util=plan.gpu_memory_utilization, fp8=False, eager=eager,
                            cap=plan.max_model_len)
        if new:
            return new
    elif kind in ("oom", "other") and not eager:
        return replace(plan, enforce_eager=True)          # CUDA graphs: ~1 GB outside the budget
    elif kind == "oom":
        new = vllm_plan_for(spec, hw, need, util=round(plan.gpu_memory_utilization - 0.05, 2),
                            fp8=fp8, eager=True, cap=plan.max_model_len)
        if new:
            return new
    if kind != "unsupported":
        new = pick_vllm(_pool(cat, available, "awq", spec), hw, need)
        if new:
            return new
    return _llama_stage(hw, cat, need, available, None)


def _llama_next(plan, spec, kind, failure, hw, cat, available) -> Plan | None:
    need = plan.need_tokens or None
    if plan.n_gpu_layers != 0:                            # on the GPU
        if kind == "oom":
            layers = int((spec.layers if plan.n_gpu_layers < 0 else plan.n_gpu_layers) * 0.6)
            if layers >= 1:
                return replace(plan, n_gpu_layers=layers)
        if kind in ("model_missing", "model_broken", "next_model"):
            return _llama_stage(hw, cat, need, available, spec)
        return _llama_stage(hw, cat, need, available, spec, gpu=False, same=True)
    if kind == "oom" and plan.max_model_len // 2 >= MIN_LLAMA_CONTEXT:
        return replace(plan, max_model_len=round_context(plan.max_model_len // 2))
    smaller = _pool(cat, available, "gguf", spec)
    return pick_cpu(smaller, hw, need) if smaller else None


def next_rung(plan: Plan, failure, hw: Hardware, catalogue: Catalogue, available=None) -> Plan | None:
    """The plan to try after `plan` failed with `failure` (a worker error or a kind); None: none left."""
    if plan.engine == "remote":
        return None
    kind = failure_kind(failure)
    spec = catalogue.get(plan.model_id)
    step = _vllm_next if plan.engine == "vllm" else _llama_next
    return _step(plan, step(plan, spec, kind, failure, hw, catalogue, available), kind, failure)


def ladder(plan: Plan, hw: Hardware, catalogue: Catalogue, available=None, limit: int = 8) -> list[Plan]:
    """The rungs a start would walk down through if every attempt failed for an unknown reason."""
    rungs, current = [], plan
    while len(rungs) < limit:
        current = next_rung(current, "other", hw, catalogue, available)
        if current is None:
            break
        rungs.append(current)
    return rungs
