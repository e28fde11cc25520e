"""vLLM sized to the need, not the card (issue 14.6): on a card far larger than the plan needs,
the utilisation holds the weights, activations and KV for 2 sequences of max_model_len plus a
margin, so Pagewise leaves the rest of the GPU to other programs. Measured on the H200 before
the change: an 8K plan reserved 128.6 GiB (5.97 M tokens of KV) and started twice as slowly
(docs/gpu-results.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.models import catalogue as models
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware
from app.core.plan.memory import weights_bytes
from app.worker.engines import vllm

MiB, GiB = 1 << 20, 1 << 30
H200 = ("NVIDIA H200", 143_771, (9, 0))       # NVML total as nvidia-smi shows it there
RTX4090 = ("NVIDIA GeForce RTX 4090", 24_564, (8, 9))


@pytest.fixture(scope="module")
def cat():
    return models.load_catalogue()


def card(name, mib, cc, n=1, used_mib=300):
    gpus = tuple(GpuInfo(i, name, mib * MiB, (mib - used_mib) * MiB, used_mib * MiB, cc) for i in range(n))
    return Hardware(gpus, 256 * GiB, 230 * GiB, 16, ("avx2",))


def reserved(plan, hw) -> float:
    """What vLLM reserves: utilisation × the card's total (its budget for weights, activations, KV)."""
    return plan.gpu_memory_utilization * hw.gpus[0].total_bytes


@pytest.mark.parametrize("model", ["qwen2.5-3b-instruct-awq", "qwen2.5-7b-instruct-awq",
                                   "qwen2.5-14b-instruct-awq"])
def test_an_8k_plan_on_a_140_gb_card_reserves_weights_plus_two_8k_caches(cat, model):
    hw = card(*H200)
    spec = cat.get(model)
    plan = P.make_plan(hw, cat, need_tokens=6000, prefer_model=model)
    assert (plan.engine, plan.model_id, plan.max_model_len) == ("vllm", model, 8192)
    kv_8k = 8192 * spec.kv_bytes_per_token()
    assert reserved(plan, hw) <= weights_bytes(spec) + 2 * kv_8k + 2 * GiB      # the target
    assert plan.kv_tokens >= 1.9 * 8192        # about two sequences of the full length
    assert any("sized to the need" in r for r in plan.reasons)


def test_the_flag_vllm_gets_keeps_the_small_utilisation(cat):
    hw = card(*H200)
    plan = P.make_plan(hw, cat, need_tokens=6000, prefer_model="qwen2.5-7b-instruct-awq")
    args = vllm.server_args(plan, Path("/models/q7"), "q7", "127.0.0.1", 8000)
    util = float(args[args.index("--gpu-memory-utilization") + 1])
    assert util == plan.gpu_memory_utilization < 0.1       # not rounded to 0.1 or 0.92
    assert abs(util * hw.gpus[0].total_bytes - reserved(plan, hw)) < 0.01 * GiB


def test_the_full_context_on_a_large_card_is_sized_too(cat):
    """No document known: the 14B at its YaRN ceiling (131,072) for 2 sequences is ~61 GiB of 140."""
    hw = card(*H200)
    plan = P.make_plan(hw, cat)
    spec = cat.get(plan.model_id)
    assert plan.max_model_len == 131_072
    assert reserved(plan, hw) <= weights_bytes(spec) + 2 * 131_072 * spec.kv_bytes_per_token() + 2 * GiB
    assert plan.gpu_memory_utilization < 0.5


def test_a_card_the_plan_fills_keeps_its_class_utilisation(cat):
    """A 24 GB card with the 14B: 2 × its context would not fit, so nothing is held back."""
    plan = P.make_plan(card(*RTX4090), cat)
    assert plan.gpu_memory_utilization == 0.92


def test_the_ladder_keeps_the_sized_utilisation(cat):
    """A rung that keeps the utilisation (fp8, eager) starts from the sized one, not the card's."""
    hw = card(*H200)
    plan = P.make_plan(hw, cat, need_tokens=6000, prefer_model="qwen2.5-7b-instruct-awq")
    rung = P.next_rung(plan, vllm.errors.OutOfMemory("CUDA out of memory"), hw, cat)
    assert rung.engine == "vllm" and rung.gpu_memory_utilization == plan.gpu_memory_utilization
