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
# llama.cpp on a GPU, measured on the H200 with a 7B (Qwen2.5-7B geometry, Q4_1) at 32K context:
# besides its model and KV buffers the worker held 717 MiB (CUDA context, cuBLAS, host buffers) and
# a compute buffer of 1,886 MiB (1,942 with a partial offload): without flash attention it holds one
# micro-batch's attention scores over the whole context (docs/gpu-results.md, issue 21).
LLAMA_CUDA_OVERHEAD = 0.75 * GiB
LLAMA_UBATCH = 512
UTIL_24GB, UTIL_SMALL = 0.92, 0.85
# Sized to the need: on a card far larger than the plan needs, vLLM reserves only weights +
# activations + KV for SIZED_SEQS sequences of max_model_len + SIZED_MARGIN, not 92 % of the card
# (an 8K plan on the 140 GB H200 took 128.6 GiB, 5.97 M tokens of KV, and started twice as slowly).
# The KV here is exact (no KV_SAFETY): the second sequence is the slack.
SIZED_SEQS = 2
SIZED_MARGIN = 0.4 * GiB


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


def util_for_need(spec: ModelSpec, tokens: int, total: int, tp: int = 1, fp8: bool = False,
                  seqs: int = SIZED_SEQS) -> float:
    """Utilisation (rounded up to 1e-4) that holds `seqs` sequences of `tokens` plus the margin."""
    kv = tokens * seqs * spec.kv_bytes_per_token(1 if fp8 else 2) / tp
    budget = weights_bytes(spec) / tp + activation_bytes(spec) + kv + SIZED_MARGIN
    budget += NCCL_BUFFERS if tp > 1 else 0
    return math.ceil(budget / total * 10_000) / 10_000


def llama_compute_bytes(spec: ModelSpec, n_ctx: int) -> float:
    """llama.cpp's GPU compute buffer: n_ubatch × n_ctx × query heads × 4 bytes of attention
    scores + 0.1 GiB. The catalogue gives KV heads only; 8 query heads per KV head bounds the
    models it names (Qwen2.5-7B has 7, so 2,150 MiB is reserved for the 1,886 measured)."""
    heads = getattr(spec, "heads", 0) or 8 * spec.kv_heads
    return LLAMA_UBATCH * n_ctx * heads * 4 + 0.1 * GiB


def llama_gpu_reserve(spec: ModelSpec, n_ctx: int) -> float:
    """VRAM a llama.cpp worker uses besides its layers' weights and KV, with any layer offloaded."""
    return LLAMA_CUDA_OVERHEAD + llama_compute_bytes(spec, n_ctx)


def llama_gpu_layers(spec: ModelSpec, free: int, n_ctx: int) -> int:
    """Layers of a GGUF model that fit in `free` VRAM with their share of an f16 KV cache of
    n_ctx tokens (llama.cpp keeps each offloaded layer's KV on the GPU). -1 = all of them."""
    per_layer = spec.size_gb * 1e9 / spec.layers + n_ctx * spec.kv_bytes_per_token() / spec.layers
    room = free - llama_gpu_reserve(spec, n_ctx)
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
