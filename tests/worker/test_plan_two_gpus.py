"""Two equal cards, one model (issue 22, the CPU-side part): vLLM tensor parallel over 2 × 24 GB
(the seeds' two RTX 3090s) and 2 × 16 GB with Qwen2.5-14B-AWQ, the launch flags, and the plan and
ladder when one card has less free memory than the other. vLLM takes one utilisation for every
card and refuses to start where free < utilisation × total, so the least free card sets it.
Not run on two GPUs yet (the two-GPU machine was not lent): these hold the arithmetic to the
one-card measurements (docs/gpu-results.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.models import catalogue as models
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware
from app.worker.engines import vllm

MiB, GiB = 1 << 20, 1 << 30
Q14 = "qwen2.5-14b-instruct-awq"
KV14 = 196_608                     # 2 × 48 layers × 8 KV heads × 128 × 2 bytes


@pytest.fixture(scope="module")
def cat():
    return models.load_catalogue()


def two(name, mib, cc, held_mib=(300, 300)):
    gpus = tuple(GpuInfo(i, name, mib * MiB, (mib - h) * MiB, h * MiB, cc) for i, h in enumerate(held_mib))
    return Hardware(gpus, 64 * GiB, 58 * GiB, 16, ("avx2",))


def flags(plan) -> list[str]:
    return vllm.server_args(plan, Path("/models/q14"), Q14, "127.0.0.1", 8000)


def flag(args, name):
    return args[args.index(name) + 1]


def test_two_3090s_split_the_14b_at_its_full_context(cat):
    plan = P.make_plan(two("NVIDIA GeForce RTX 3090", 24576, (8, 6)), cat, prefer_model=Q14)
    assert (plan.engine, plan.model_id, plan.tensor_parallel, plan.devices) == ("vllm", Q14, 2, (0, 1))
    assert plan.max_model_len == 131_072 and plan.gpu_memory_utilization == 0.92
    args = flags(plan)
    assert flag(args, "--tensor-parallel-size") == "2" and flag(args, "--gpu-memory-utilization") == "0.92"
    # per card: 22.07 GiB − 9.3/2 weights − 1.25 activations − 0.25 all-reduce buffers ≥ 12 GiB of KV
    assert plan.kv_tokens <= 2 * (0.92 * 24 - 9.3 / 2 - 1.25 - 0.25) * GiB / KV14


def test_two_16_gb_cards_hold_the_14b_at_about_70k(cat):
    plan = P.make_plan(two("NVIDIA GeForce RTX 4080", 16376, (8, 9)), cat, prefer_model=Q14)
    assert plan.tensor_parallel == 2 and plan.gpu_memory_utilization == 0.85
    ceiling = 2 * (0.85 * 16376 / 1024 - 9.3 / 2 - 1.25 - 0.25) * GiB / KV14      # ≈ 81K
    assert 64 * 1024 <= plan.max_model_len <= ceiling
    assert plan.kv_cache_dtype == "auto"      # fp16 reaches the 32K target: no fp8
    assert "per GPU" in plan.note


def test_the_card_with_less_free_memory_sets_the_utilisation(cat):
    hw = two("NVIDIA GeForce RTX 3090", 24576, (8, 6), held_mib=(300, 6000))   # a game on card 1
    plan = P.make_plan(hw, cat, prefer_model=Q14)
    fuller = hw.gpus[1]
    assert plan.tensor_parallel == 2 and plan.gpu_memory_utilization < 0.92
    # vLLM's start check on card 1, with its CUDA context and graphs still to come
    assert plan.gpu_memory_utilization * fuller.total_bytes + 0.5 * GiB <= fuller.free_bytes
    assert any("other programs hold" in r for r in plan.reasons)
    assert 64 * 1024 <= plan.max_model_len < 131_072


def test_a_start_refused_for_one_cards_free_memory_steps_down_to_it(cat):
    hw = two("NVIDIA GeForce RTX 3090", 24576, (8, 6))
    plan = P.make_plan(hw, cat, prefer_model=Q14)
    refused = vllm.FreeMemoryTooLow("vLLM: only 14.00 of 24.00 GiB free", free_bytes=14 * GiB,
                                    total_bytes=24 * GiB)
    rung = P.next_rung(plan, refused, hw, cat)
    assert rung.engine == "vllm" and rung.tensor_parallel == 2
    assert rung.gpu_memory_utilization * 24576 * MiB <= 14 * GiB
    assert rung.max_model_len < plan.max_model_len
