"""The downgrade ladder: after a failed start, the next plan to try, as data.

The engine's own answer wins over the arithmetic: vLLM's "estimated maximum model length is N"
becomes the next max_model_len, its "Free memory on device (F/T GiB)" the next utilisation.
Every rung moves strictly down (same model → smaller AWQ model → llama.cpp on the GPU →
llama.cpp on the CPU → smaller GGUF), so the ladder always ends.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from app.core.failures import FailureKind
from app.core.models.catalogue import Catalogue, ModelSpec
from app.core.plan.fit import (
    pick_cpu,
    pick_llama_gpu,
    pick_vllm,
    vllm_gpus,
    vllm_plan_for,
)
from app.core.plan.hardware import Hardware
from app.core.plan.memory import fmt_tokens, round_context
from app.core.plan.types import FP8_KV_MIN_CC, MIN_LLAMA_CONTEXT, MIN_VLLM_CONTEXT, EngineName, Plan

K = FailureKind              # short name for the rules below

_WHY = {K.KV_TOO_SMALL: "KV cache too small", K.FREE_MEMORY: "not enough free VRAM",
        K.NO_KV_MEMORY: "no memory left for the KV cache", K.OUT_OF_MEMORY: "out of memory",
        K.UNSUPPORTED: "GPU or quantisation not supported", K.MODEL_MISSING: "model files missing",
        K.MODEL_NOT_AVAILABLE: "model files missing", K.MODEL_BROKEN: "model files unreadable",
        K.NEXT_MODEL: "too many failed starts", K.KV_DTYPE: "fp8 KV cache not supported"}


@dataclass(frozen=True)
class Failure:
    """A failure described by the caller (e.g. a runtime OOM after re-reading free VRAM)."""
    kind: FailureKind
    max_len: int | None = None
    free_bytes: int | None = None
    total_bytes: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "kind", K(self.kind))      # "oom" and K.OUT_OF_MEMORY alike


def failure_kind(failure) -> FailureKind:
    """The kind a failure carries (an error's `kind`, a Failure, or "kind[:max_len]" as text);
    START_FAILED for anything else."""
    if isinstance(failure, str):
        try:
            return K(failure.split(":", 1)[0])
        except ValueError:
            return K.START_FAILED
    kind = getattr(failure, "kind", None)
    if kind is K.MODEL_NOT_AVAILABLE:
        return K.MODEL_MISSING
    return kind if isinstance(kind, K) and kind.is_start_failure else K.START_FAILED


def _max_len(failure) -> int | None:
    n = getattr(failure, "max_len", None)
    if n is None and isinstance(failure, str) and ":" in failure:
        n = int(re.sub(r"\D", "", failure.split(":", 1)[1]) or 0) or None
    return n


def short(plan: Plan) -> str:
    """'0.92 / 64K' for vLLM, 'llama.cpp 20 layers / 32K' or 'llama.cpp CPU / 8K'."""
    ctx = fmt_tokens(plan.max_model_len)
    if plan.engine is EngineName.VLLM:
        extra = " fp8" * (plan.kv_cache_dtype == "fp8") + " eager" * plan.enforce_eager
        return f"{plan.model_id} {plan.gpu_memory_utilization:.2f} / {ctx}{extra}"
    where = "CPU" if plan.n_gpu_layers == 0 else (
        "all layers" if plan.n_gpu_layers < 0 else f"{plan.n_gpu_layers} layers")
    return f"llama.cpp {plan.model_id} {where} / {ctx}"


def _why(kind: FailureKind, failure) -> str:
    if kind is K.KV_TOO_SMALL and _max_len(failure):
        return f"KV cache holds {fmt_tokens(_max_len(failure))}"
    free, total = getattr(failure, "free_bytes", None), getattr(failure, "total_bytes", None)
    if kind is K.FREE_MEMORY and free and total:
        return f"only {free / 2**30:.1f} of {total / 2**30:.1f} GiB free"
    return _WHY.get(kind, "start failed")


def _step(old: Plan, new: Plan | None, kind: FailureKind, failure) -> Plan | None:
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
    if kind is K.KV_TOO_SMALL:
        n = _max_len(failure)
        m = round_context(n) if n else 0
        if MIN_VLLM_CONTEXT <= m < plan.max_model_len:
            return replace(plan, max_model_len=m, kv_tokens=n, note="")
        if not fp8 and cc_ok:
            return vllm_plan_for(spec, hw, need, util=plan.gpu_memory_utilization, fp8=True,
                                 eager=eager, cap=plan.max_model_len)
    elif kind is K.FREE_MEMORY:
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
    elif kind is K.KV_DTYPE and fp8:
        new = vllm_plan_for(spec, hw, need, util=plan.gpu_memory_utilization, fp8=False, eager=eager,
                            cap=plan.max_model_len)
        if new:
            return new
    elif kind in (K.OUT_OF_MEMORY, K.START_FAILED) and not eager:
        return replace(plan, enforce_eager=True)          # CUDA graphs: ~1 GB outside the budget
    elif kind is K.OUT_OF_MEMORY:
        new = vllm_plan_for(spec, hw, need, util=round(plan.gpu_memory_utilization - 0.05, 2),
                            fp8=fp8, eager=True, cap=plan.max_model_len)
        if new:
            return new
    if kind is not K.UNSUPPORTED:
        new = pick_vllm(_pool(cat, available, "awq", spec), hw, need)
        if new:
            return new
    return _llama_stage(hw, cat, need, available, None)


def _llama_next(plan, spec, kind, failure, hw, cat, available) -> Plan | None:
    need = plan.need_tokens or None
    if plan.n_gpu_layers != 0:                            # on the GPU
        if kind is K.OUT_OF_MEMORY:
            layers = int((spec.layers if plan.n_gpu_layers < 0 else plan.n_gpu_layers) * 0.6)
            if layers >= 1:
                return replace(plan, n_gpu_layers=layers)
        if kind in (K.MODEL_MISSING, K.MODEL_BROKEN, K.NEXT_MODEL):
            return _llama_stage(hw, cat, need, available, spec)
        return _llama_stage(hw, cat, need, available, spec, gpu=False, same=True)
    if kind is K.OUT_OF_MEMORY and plan.max_model_len // 2 >= MIN_LLAMA_CONTEXT:
        return replace(plan, max_model_len=round_context(plan.max_model_len // 2))
    smaller = _pool(cat, available, "gguf", spec)
    return pick_cpu(smaller, hw, need) if smaller else None


def next_rung(plan: Plan, failure, hw: Hardware, catalogue: Catalogue, available=None) -> Plan | None:
    """The plan to try after `plan` failed with `failure` (a worker error or a kind); None: none left."""
    if plan.engine is EngineName.REMOTE:
        return None
    kind = failure_kind(failure)
    if kind is K.PORT_IN_USE:        # another program took the free port first: not the plan's fault
        return replace(plan, reasons=plan.reasons + (f"{short(plan)}: port taken by another program "
                                                     "→ retry on a new port",))
    spec = catalogue.get(plan.model_id)
    step = _vllm_next if plan.engine is EngineName.VLLM else _llama_next
    return _step(plan, step(plan, spec, kind, failure, hw, catalogue, available), kind, failure)


def ladder(plan: Plan, hw: Hardware, catalogue: Catalogue, available=None, limit: int = 8) -> list[Plan]:
    """The rungs a start would walk down through if every attempt failed for an unknown reason."""
    rungs, current = [], plan
    while len(rungs) < limit:
        current = next_rung(current, K.START_FAILED, hw, catalogue, available)
        if current is None:
            break
        rungs.append(current)
    return rungs
