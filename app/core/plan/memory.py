"""Memory arithmetic for the planner: what fits in VRAM or RAM, per engine.

Calibrated on vLLM 0.26 with Qwen2.5-7B-AWQ geometry (../shared/gpu-recipe/README.md): at a
22.07 GiB budget the log shows 4.0 GiB weights (49K vocab; 5.4 GiB with the real 152K vocab,
i.e. the file size × ~1.04) + 1.09 GiB peak activation + 0.22 GiB non-torch + KV; CUDA graphs
take 0.92 GiB *outside* the budget. Every constant below is rounded the safe way, so a plan
starts first time and the downgrade switch refines it with the engine's own figures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.models.catalogue import ModelSpec

GiB = 1 << 30
WEIGHT_LOAD_FACTOR = 1.04      # loaded weights / file size (5.4 GiB loaded vs 5.20 GiB on disk)
CUDA_CONTEXT = 0.5 * GiB       # per-process CUDA context + cuBLAS workspace, outside vLLM's budget
NCCL_BUFFERS = 0.25 * GiB      # tensor-parallel all-reduce buffers, per GPU
KV_SAFETY = 0.97               # keep 3% of the KV estimate back (block rounding, fragmentation)
RAM_RESERVE = 2.0 * GiB        # the app, PyMuPDF and the OS keep this much when the engine is on CPU
LLAMA_GPU_RESERVE = 1.0 * GiB  # llama.cpp: CUDA context + compute buffers at batch 512
UTIL_24GB, UTIL_SMALL = 0.92, 0.85


def weights_bytes(spec: ModelSpec) -> float:
    return spec.size_gb * 1e9 * WEIGHT_LOAD_FACTOR


def activation_bytes(spec: ModelSpec) -> float:
    """Peak activation + non-torch memory inside vLLM's budget (1.31 GiB measured for 7B)."""
    return (1.05 + 0.035 * spec.params_b) * GiB


def cuda_graph_bytes(spec: ModelSpec, eager: bool) -> float:
    """CUDA graphs' memory on top of the budget (0.92 GiB measured for 7B, 0.79 reported for a
    14B AWQ on a 24 GB card); none when eager."""
    return 0.0 if eager else (0.75 + 0.02 * spec.params_b) * GiB


def round_context(tokens: float) -> int:
    """Round down to a multiple of 1024 (256 below 8K): vLLM blocks, tidy numbers for people."""
    step = 1024 if tokens >= 8192 else 256
    return max(0, int(tokens // step) * step)


def round_up_context(tokens: int) -> int:
    step = 1024 if tokens >= 8192 else 256
    return int(math.ceil(tokens / step) * step)


def util_cap(total_bytes: int) -> float:
    """The starting utilisation by card class: 24 GB and up 0.92, smaller cards 0.85."""
    return UTIL_24GB if total_bytes >= 20 * GiB else UTIL_SMALL


def util_for_free(free_bytes: int, total_bytes: int, spec: ModelSpec, eager: bool) -> float:
    """Highest utilisation vLLM accepts now: it refuses to start when free < util × total, and
    CUDA graphs plus the CUDA context must still fit after the budget is taken."""
    room = free_bytes - CUDA_CONTEXT - cuda_graph_bytes(spec, eager)
    return math.floor(max(0.0, room) / total_bytes * 100) / 100


@dataclass(frozen=True)
class VllmFit:
    util: float
    kv_tokens: int          # tokens the KV cache holds for one request (vLLM's own check)
    kv_bytes: float         # KV cache memory, all GPUs together


def vllm_fit(spec: ModelSpec, total: int, free: int, tp: int = 1, fp8: bool = False,
             eager: bool = False, util: float | None = None) -> VllmFit:
    """KV capacity of `spec` on `tp` equal GPUs of `total` bytes (the least `free` of them)."""
    if util is None:
        util = min(util_cap(total), util_for_free(free, total, spec, eager))
    per_gpu = util * total - weights_bytes(spec) / tp - activation_bytes(spec)
    per_gpu -= NCCL_BUFFERS if tp > 1 else 0
    kv = max(0.0, per_gpu) * KV_SAFETY * tp
    per_token = spec.kv_bytes_per_token(1 if fp8 else 2)
    return VllmFit(util, int(kv // per_token), kv)


def vllm_budget_needed(spec: ModelSpec, tokens: int, tp: int = 1, fp8: bool = False) -> float:
    """vLLM budget (utilisation × VRAM) per GPU that `tokens` of context need."""
    kv = tokens * spec.kv_bytes_per_token(1 if fp8 else 2) / KV_SAFETY / tp
    return weights_bytes(spec) / tp + activation_bytes(spec) + kv + (NCCL_BUFFERS if tp > 1 else 0)


def llama_gpu_layers(spec: ModelSpec, free: int, n_ctx: int) -> int:
    """Layers of a GGUF model that fit in `free` VRAM with their share of an f16 KV cache of
    n_ctx tokens (llama.cpp keeps each offloaded layer's KV on the GPU). -1 = all of them."""
    per_layer = spec.size_gb * 1e9 / spec.layers + n_ctx * spec.kv_bytes_per_token() / spec.layers
    room = free - LLAMA_GPU_RESERVE
    if room <= 0:
        return 0
    n = int(room // per_layer)
    # whole model, plus the output layer (about one layer's weights), fits → offload everything
    return -1 if n >= spec.layers + 1 else min(n, spec.layers)


def llama_cpu_context(spec: ModelSpec, ram_available: int) -> int:
    """Largest f16 KV context that fits the RAM left after the weights and the app."""
    room = ram_available - spec.size_gb * 1e9 - RAM_RESERVE
    return round_context(max(0.0, room) / spec.kv_bytes_per_token())


def fmt_gb(n_bytes: float) -> str:
    return f"{n_bytes / GiB:.0f} GB" if n_bytes >= 20 * GiB else f"{n_bytes / GiB:.1f} GB"


def fmt_tokens(tokens: int) -> str:
    return f"{tokens // 1024}K" if tokens >= 1024 else str(tokens)
