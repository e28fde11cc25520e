"""The llama.cpp stand-in that answers while a slow engine (vLLM) starts again after a death.

vLLM takes about a minute to come back (API server imports, engine init, torch.compile, CUDA
graphs: 62.9 s on the H200 for a 0.5B); our llama.cpp worker loads in 1-2 s. So when vLLM dies,
the Engine starts vLLM again in the background and installs the stand-in chosen here for the
questions asked meanwhile, then switches back at the next question once vLLM is ready.

Which model: the GGUF of the same model when the catalogue has one on disk (same name before its
format, same geometry), else the embedded model. Where: on the GPU only with the VRAM left once
vLLM's own budget (utilisation × the card) is set aside, since vLLM refuses to start when less
than that is free; otherwise on the CPU. Its context is capped: it answers a few questions from
the retrieved passages, not a whole library.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Callable

from app.core.plan.types import Plan

log = logging.getLogger(__name__)

CONTEXT_CAP = 8192          # tokens: room for retrieved passages and a follow-up, read in seconds
VRAM_MARGIN = 1 << 30       # bytes kept free beside vLLM's budget (its CUDA context, graphs)


@dataclass(frozen=True)
class Choice:
    plan: Plan          # the stand-in's llama.cpp plan
    line: str           # which model and where, in words ("the GGUF of the same model, on the CPU")


def _stem(name: str) -> str:
    """"Qwen2.5 7B Instruct (AWQ)" and "Qwen2.5 7B Instruct (GGUF Q4_K_M)" share "qwen2.5 7b instruct"."""
    return name.split(" (", 1)[0].strip().lower()


def same_model_gguf(spec, catalogue, available: Callable) -> object | None:
    """The catalogue's GGUF of the model `spec` is (same name before its format, same geometry), if on disk."""
    for other in catalogue.models:
        if other.format != "gguf" or other.role != "chat" or other.id == spec.id:
            continue
        same = (_stem(other.name) == _stem(spec.name)
                and (other.layers, other.kv_heads, other.head_dim) == (spec.layers, spec.kv_heads, spec.head_dim))
        if same and available(other):
            return other
    return None


def _without_vllms_budget(hw, plan: Plan):
    """The hardware as the stand-in may use it: each GPU vLLM runs on, less vLLM's budget."""
    if not hw.gpus or plan.gpu_memory_utilization is None:
        return hw
    used = set(plan.devices) or {g.index for g in hw.gpus}
    gpus = tuple(dataclasses.replace(g, free_bytes=max(0, int(g.free_bytes - plan.gpu_memory_utilization
                                                              * g.total_bytes - VRAM_MARGIN)))
                 if g.index in used else g for g in hw.gpus)
    return dataclasses.replace(hw, gpus=gpus)


def choose(plan: Plan, probe: Callable | None = None, catalogue=None) -> Choice | None:
    """The stand-in for `plan` (a vLLM plan), or None when no GGUF model can run here."""
    from app.core.models import catalogue as models
    from app.core.plan import fit, hardware
    cat = catalogue or models.load_catalogue()
    try:
        spec = cat.get(plan.model_id)
    except models.CatalogueError:           # a model the catalogue does not know (a test checkpoint)
        spec = None
    gguf = same_model_gguf(spec, cat, models.is_available) if spec is not None else None
    which = "the GGUF of the same model" if gguf is not None else "the embedded model"
    if gguf is None:
        gguf = next((m for m in cat.models if m.source == "embedded" and m.role == "chat"
                     and m.format == "gguf" and models.is_available(m)), None)
        if gguf is None:
            return None
    hw = _without_vllms_budget((probe or hardware.probe)(), plan)
    cap = min(CONTEXT_CAP, plan.max_model_len)
    standin = fit.llama_plan_for(gguf, hw, cap=cap) or fit.llama_plan_for(gguf, hw, cap=cap, cpu=True)
    if standin is None:
        return None
    where = "on the CPU" if not standin.n_gpu_layers else "on the GPU beside vLLM's memory"
    return Choice(standin, f"llama.cpp with {which}, {gguf.name.split(' (', 1)[0]}, {where},")

