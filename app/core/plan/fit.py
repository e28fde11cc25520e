"""Fitting models to hardware, engine by engine, and choosing among them (used by plan.make_plan
and the downgrade ladder). Pure functions; the arithmetic itself is in plan_memory.py."""
from __future__ import annotations

from dataclasses import replace

from app.core.models.catalogue import ModelSpec
from app.core.plan.hardware import GpuInfo, Hardware, gib
from app.core.plan.memory import (
    GiB,
    fmt_gb,
    fmt_tokens,
    llama_cpu_context,
    llama_gpu_layers,
    SIZED_SEQS,
    round_context,
    util_cap,
    util_for_need,
    vllm_budget_needed,
    vllm_fit,
)
from app.core.plan.types import (
    EngineName,
    CPU_PARAMS_PER_CORE,
    DEFAULT_TARGET,
    FP8_KV_MIN_CC,
    MIN_LLAMA_CONTEXT,
    MIN_VLLM_CONTEXT,
    VLLM_MIN_CC,
    Plan,
)


# --- hardware helpers -------------------------------------------------------------------------
def short_name(name: str) -> str:
    for prefix in ("NVIDIA ", "GeForce "):
        name = name.replace(prefix, "")
    return name


def gpu_label(gpus: tuple[GpuInfo, ...] | list[GpuInfo]) -> str:
    g = gpus[0]
    return f"{len(gpus)}× " * (len(gpus) > 1) + f"{gib(g.total_bytes)} GB {short_name(g.name)}"


def cc_text(cc: tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"


def vllm_gpus(hw: Hardware) -> tuple[GpuInfo, ...]:
    """The vLLM-capable GPUs it would use: the group of equal cards with the most VRAM."""
    groups: dict = {}
    for g in hw.gpus:
        if g.compute_capability >= VLLM_MIN_CC:
            groups.setdefault((g.name, round(g.total_bytes / GiB)), []).append(g)
    if not groups:
        return ()
    return tuple(max(groups.values(), key=lambda gs: sum(g.total_bytes for g in gs)))


def tp_for(spec: ModelSpec, n_gpus: int) -> int:
    """Largest power of two ≤ n_gpus (≤ 8) that splits the KV heads evenly."""
    tp = 1
    while tp * 2 <= min(n_gpus, 8) and spec.kv_heads % (tp * 2) == 0:
        tp *= 2
    return tp


def model_limit(spec: ModelSpec, engine: EngineName) -> int:
    """Longest context the engine can give the model (vLLM: native × YaRN factor)."""
    if EngineName(engine) is EngineName.VLLM and spec.yarn_factor > 1:
        return int(spec.native_context * spec.yarn_factor)
    return spec.native_context


# --- engine plans for one model -----------------------------------------------------------------
def vllm_plan_for(spec: ModelSpec, hw: Hardware, need: int | None = None, *, util: float | None = None,
                  fp8: bool | None = None, eager: bool = False, cap: int | None = None) -> Plan | None:
    """vLLM plan for `spec` on this hardware, or None when less than MIN_VLLM_CONTEXT fits."""
    gpus = vllm_gpus(hw)
    if not gpus or spec.format != "awq":
        return None
    tp = tp_for(spec, len(gpus))
    used = gpus[:tp]
    total, free = min(g.total_bytes for g in used), min(g.free_bytes for g in used)
    cc = min(g.compute_capability for g in used)
    limit = model_limit(spec, EngineName.VLLM)
    want = min(limit, need or limit, cap or limit)
    if fp8 is None:    # fp8 KV only where it is needed to reach the target: fp16 is more exact
        base = vllm_fit(spec, total, free, tp, False, eager, util)
        fp8 = round_context(base.kv_tokens) < min(want, need or DEFAULT_TARGET) and cc >= FP8_KV_MIN_CC
    fit = vllm_fit(spec, total, free, tp, fp8, eager, util)
    ctx = min(want, round_context(fit.kv_tokens))
    if ctx < MIN_VLLM_CONTEXT or fit.util <= 0:
        return None
    room = fit.util * total
    sized = util is None and util_for_need(spec, ctx, total, tp, fp8) < fit.util
    if sized:      # the card is larger than the plan needs: leave the rest to other programs
        fit = vllm_fit(spec, total, free, tp, fp8, eager, util_for_need(spec, ctx, total, tp, fp8))
    reasons = [f"{gpu_label(used)}, compute {cc_text(cc)}: vLLM with AWQ weights"]
    cls_util = util_cap(total)
    if sized:
        reasons.append(f"utilisation {fit.util:.4g} of {gib(total)} GB: sized to the need "
                       f"(weights + KV for {SIZED_SEQS} × {fmt_tokens(ctx)} tokens + margin), "
                       f"{fmt_gb(total - fit.util * total)} left to other programs")
    elif fit.util < cls_util and util is None:
        held = total - free
        reasons.append(f"other programs hold {gib(held)} GB of VRAM: utilisation lowered to {fit.util:.2f} "
                       f"(vLLM refuses to start when free memory < utilisation × total)")
    else:
        reasons.append(f"utilisation {fit.util:.2f} of {gib(total)} GB"
                       + (" (a card under 20 GB keeps more room for CUDA graphs)" if cls_util < 0.9 else ""))
    per_tok = spec.kv_bytes_per_token(1 if fp8 else 2)
    reasons.append(f"KV cache ≈ {fmt_gb(fit.kv_bytes)} at {per_tok:,} bytes/token "
                   f"({'fp8' if fp8 else 'fp16'}) ≈ {fmt_tokens(fit.kv_tokens)} tokens")
    if fp8:
        reasons.append(f"fp8 KV cache (compute {cc_text(cc)} ≥ 8.9) halves the bytes per token")
    yarn = spec.yarn_factor if ctx > spec.native_context else 1.0
    if yarn > 1:
        reasons.append(f"YaRN ×{yarn:g} stretches the native {fmt_tokens(spec.native_context)} context")
    if need and ctx == need:
        reasons.append(f"capped at what the document needs ({fmt_tokens(need)})")
    if tp > 1:
        reasons.append(f"tensor parallel over {tp} equal GPUs")
    note = ""
    if ctx < want:     # memory, not the document or the model, set the limit
        note = (f"{fmt_tokens(limit)} would need {fmt_gb(vllm_budget_needed(spec, limit, tp, fp8))}"
                + " per GPU" * (tp > 1) + f", {fmt_gb(room)} usable")
    return Plan(engine=EngineName.VLLM, model_id=spec.id, weights_format="awq", gpu_memory_utilization=fit.util,
                max_model_len=ctx, kv_cache_dtype="fp8" if fp8 else "auto", tensor_parallel=tp,
                enforce_eager=eager, reasons=tuple(reasons), yarn_factor=yarn,
                devices=tuple(g.index for g in used), kv_tokens=fit.kv_tokens, hardware=gpu_label(used),
                note=note, need_tokens=need or 0)


def llama_plan_for(spec: ModelSpec, hw: Hardware, need: int | None = None, *, cpu: bool = False,
                   ngl: int | None = None, cap: int | None = None) -> Plan | None:
    """llama.cpp plan: layers offloaded to the GPU with the most free VRAM, or CPU only."""
    if spec.format != "gguf":
        return None
    limit = spec.native_context
    want = min(limit, need or limit, cap or limit)
    if cpu or not hw.gpus:
        room = llama_cpu_context(spec, hw.ram_available_bytes) if hw.ram_available_bytes else want
        ctx = min(want, room)
        if ctx < min(MIN_LLAMA_CONTEXT, limit):
            return None
        reasons = [f"context {fmt_tokens(ctx)} fits {gib(hw.ram_available_bytes)} GB of available RAM"
                   if hw.ram_available_bytes else f"context {fmt_tokens(ctx)}"]
        label = f"{hw.cpu_cores}-core CPU" if hw.gpus else "no NVIDIA GPU"
        return Plan(engine=EngineName.LLAMACPP, model_id=spec.id, weights_format="gguf", max_model_len=ctx,
                    reasons=tuple(reasons), hardware=label, kv_tokens=ctx, need_tokens=need or 0)
    gpu = max(hw.gpus, key=lambda g: g.free_bytes)
    layers = llama_gpu_layers(spec, gpu.free_bytes, want) if ngl is None else ngl
    if layers == 0:
        return None
    shown = "all" if layers == -1 else f"{layers} of {spec.layers}"
    reasons = [f"{shown} layers on the GPU ({gib(gpu.free_bytes)} GB free), context {fmt_tokens(want)}"]
    return Plan(engine=EngineName.LLAMACPP, model_id=spec.id, weights_format="gguf", max_model_len=want,
                n_gpu_layers=layers, reasons=tuple(reasons), devices=(gpu.index,),
                hardware=gpu_label([gpu]), kv_tokens=want, need_tokens=need or 0)


def cpu_budget_b(hw: Hardware) -> float:
    fast = any(f in hw.cpu_features for f in ("avx2", "neon"))
    return hw.cpu_cores * CPU_PARAMS_PER_CORE * (1 if fast else 0.5)


# --- choosing among models ---------------------------------------------------------------------
def by_size(specs) -> list[ModelSpec]:
    return sorted(specs, key=lambda s: (-s.params_b, s.id))


def reaches(plan: Plan, spec: ModelSpec, need: int | None) -> bool:
    return plan.max_model_len >= min(need or DEFAULT_TARGET, model_limit(spec, plan.engine))


def pick_vllm(specs, hw: Hardware, need: int | None) -> Plan | None:
    """The largest AWQ model that reaches the target context; else the one with the most context."""
    plans = [(s, p) for s in by_size(specs) if (p := vllm_plan_for(s, hw, need))]
    for s, p in plans:
        if reaches(p, s, need):
            return p
    return max((p for _, p in plans), key=lambda p: p.max_model_len, default=None)


def offloaded(plan: Plan, spec: ModelSpec) -> float:
    return 1.0 if plan.n_gpu_layers < 0 else plan.n_gpu_layers / spec.layers


def pick_llama_gpu(specs, hw: Hardware, need: int | None) -> Plan | None:
    """The largest GGUF model with at least 3/4 of its layers on the GPU (the rest run on the
    CPU at a fraction of the speed); else the one with the largest share offloaded."""
    plans = [(s, p) for s in by_size(specs) if (p := llama_plan_for(s, hw, need))]
    for s, p in plans:
        if offloaded(p, s) >= 0.75:
            return p
    return max(plans, key=lambda sp: offloaded(sp[1], sp[0]), default=(None, None))[1]


def pick_cpu(specs, hw: Hardware, need: int | None) -> Plan | None:
    budget = cpu_budget_b(hw)
    plans = [(s, p) for s in by_size(specs) if (p := llama_plan_for(s, hw, need, cpu=True))]
    if not plans:
        return None
    within = [(s, p) for s, p in plans if s.params_b <= budget]
    s, p = within[0] if within else plans[-1]
    why = (f"{hw.cpu_cores} CPU cores: models up to ~{budget:.1f}B parameters read a page in seconds"
           if within else f"{hw.cpu_cores} CPU cores: the smallest model")
    return replace(p, reasons=(why,) + p.reasons)


def choose(hw: Hardware, specs, need: int | None) -> Plan | None:
    """Best plan among `specs` (chat models) on this hardware, engine by engine."""
    awq = [s for s in specs if s.format == "awq"]
    gguf = [s for s in specs if s.format == "gguf"]
    why: list[str] = []
    if hw.gpus:
        if vllm_gpus(hw):
            plan = pick_vllm(awq, hw, need)
            if plan:
                return plan
            why.append(f"no AWQ model leaves {fmt_tokens(MIN_VLLM_CONTEXT)} of KV cache on "
                       f"{gpu_label(vllm_gpus(hw))}" if awq else "no AWQ model available")
        else:
            best = max(hw.gpus, key=lambda g: g.compute_capability)
            why.append(f"{gpu_label([best])} has compute capability {cc_text(best.compute_capability)}: "
                       f"vLLM's AWQ kernels need 7.5")
        plan = pick_llama_gpu(gguf, hw, need)
        if plan:
            return with_reasons(plan, *why, "llama.cpp with GGUF weights, layers offloaded to the GPU", first=True)
        why.append("no GGUF model fits the GPU")
    else:
        why.append(hw.nvml_error or "no NVIDIA GPU")
    plan = pick_cpu(gguf, hw, need)
    return with_reasons(plan, *why, "llama.cpp on the CPU", first=True) if plan else None


def with_reasons(plan: Plan, *reasons: str, first: bool = False) -> Plan:
    extra = tuple(r for r in reasons if r)
    return replace(plan, reasons=extra + plan.reasons if first else plan.reasons + extra)
