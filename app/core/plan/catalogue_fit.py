"""The planner's verdict on each catalogue model, in plain words for the model manager and
`pagewise models list`: the memory it needs, whether this machine runs it ("fits: llama.cpp
CPU / 8K", "fits: vLLM 0.92 / 56K", "too big for 16 GB") and which model to get."""
from __future__ import annotations

from dataclasses import dataclass

from app.core.models.catalogue import Catalogue, ModelSpec
from app.core.plan.fit import choose, cpu_budget_b
from app.core.plan.hardware import Hardware
from app.core.plan.memory import RAM_RESERVE, GiB, vllm_budget_needed, weights_bytes
from app.core.plan.types import EngineName, MIN_LLAMA_CONTEXT, MIN_VLLM_CONTEXT, Plan


@dataclass(frozen=True)
class Verdict:
    fits: bool
    words: str                  # "fits: llama.cpp CPU / 8K"
    memory_bytes: float         # what the smallest useful start needs (RAM or VRAM)
    memory_where: str           # "RAM" | "VRAM"
    plan: Plan | None


def memory_needed(spec: ModelSpec) -> tuple[float, str]:
    """Weights plus the KV cache of the least context worth starting with."""
    if spec.format == "awq":
        return vllm_budget_needed(spec, MIN_VLLM_CONTEXT), "VRAM"
    ctx = min(spec.native_context, max(MIN_LLAMA_CONTEXT, 8192))
    return weights_bytes(spec) + ctx * spec.kv_bytes_per_token() + RAM_RESERVE, "RAM"


def _gb(n_bytes: float) -> str:
    return f"{n_bytes / GiB:.0f} GB" if n_bytes >= 10 * GiB else f"{n_bytes / GiB:.1f} GB"


def verdict(spec: ModelSpec, hw: Hardware) -> Verdict:
    need, where = memory_needed(spec)
    if spec.role != "chat":
        return Verdict(True, "search vectors (CPU)", need, "RAM", None)
    plan = choose(hw, [spec], None)
    if plan is None or plan.model_id != spec.id:
        if spec.format == "awq" and not hw.gpus:
            return Verdict(False, "needs an NVIDIA GPU (vLLM)", need, where, None)
        have = max((g.total_bytes for g in hw.gpus), default=0) if spec.format == "awq" else hw.ram_bytes
        return Verdict(False, f"too big for {_gb(have)} {'VRAM' if spec.format == 'awq' else 'RAM'}",
                       need, where, None)
    ctx = _tokens(plan.max_model_len)
    if plan.engine is EngineName.VLLM:
        words = f"fits: vLLM {plan.gpu_memory_utilization:.2f} / {ctx}"
    elif plan.n_gpu_layers:
        layers = "all layers" if plan.n_gpu_layers < 0 else f"{plan.n_gpu_layers}/{spec.layers} layers"
        words = f"fits: llama.cpp GPU, {layers} / {ctx}"
    else:
        words = f"fits: llama.cpp CPU / {ctx}"
        if spec.params_b > cpu_budget_b(hw):
            words += f" (slow on {hw.cpu_cores} cores)"
    return Verdict(True, words, need, "VRAM" if plan.engine is EngineName.VLLM or plan.n_gpu_layers else "RAM", plan)


def _tokens(n: int) -> str:
    return f"{n // 1024}K" if n >= 1024 else str(n)


def recommended(hw: Hardware, catalogue: Catalogue) -> str | None:
    """The model the planner would pick on this machine if every model were downloaded."""
    from app.core.plan.planner import make_plan
    try:
        return make_plan(hw, catalogue).model_id
    except Exception:  # noqa: BLE001 - no model fits: nothing to recommend
        return None


def table(hw: Hardware | None = None, catalogue: Catalogue | None = None,
          measured: dict[str, float] | None = None) -> tuple[list[dict], str | None]:
    """Every catalogue model with its size, memory, verdict, what it is good for, its first
    answer's seconds here and whether it is here, and the recommended id (plan.advice: never the
    test model when a real one runs): what `models list` prints and the model manager shows.
    `measured`: model id → prefill tokens/s measured on this machine. No network."""
    from app.core.models import catalogue as models
    from app.core.plan import advice, hardware
    hw = hw or hardware.probe()
    catalogue = catalogue or models.load_catalogue()
    advised, best = advice.advise(hw, catalogue, measured)
    timing = {a.model_id: a for a in advised}
    out = []
    for m in catalogue.models:
        v = verdict(m, hw)
        a = timing.get(m.id)
        here = models.is_available(m)
        if a is not None and a.too_slow and v.fits:     # it fits in memory, but nobody waits that long
            v = Verdict(False, f"too slow for this machine ({a.timing().split(' (')[0]})", v.memory_bytes,
                        v.memory_where, v.plan)
        out.append({"id": m.id, "name": m.name, "format": m.format, "engine": m.engine, "role": m.role,
                    "source": m.source, "size_gb": m.size_gb, "params_b": m.params_b,
                    "context": m.native_context, "licence": m.licence,
                    "memory_gb": round(v.memory_bytes / GiB, 2), "memory_where": v.memory_where,
                    "fits": v.fits, "fits_words": v.words, "installed": here,
                    "default": m.id == catalogue.default_id, "recommended": m.id == best,
                    "good_for": m.good_for, "first_answer_s": round(a.seconds, 1) if a else None,
                    "speed": ("measured" if a.measured else "estimated") if a else None,
                    "timing": a.timing() if a else ""})
    return out, best
