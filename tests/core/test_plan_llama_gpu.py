"""llama.cpp layer offload on small cards (issue 21), held against what a llama.cpp worker really
used on the H200 (CUDA build, `pagewise ask` through the app, docs/gpu-results.md): a 7B with
Qwen2.5-7B's geometry at 32K context, by buffer, from the worker's own log and NVML:

* model buffer: 325 MiB output layer + 144 MiB per repeating layer (4,215 MiB all 29)
* KV: 64 MiB per repeating layer on the GPU (1,792 MiB for 28 at 32K, f16)
* compute buffer: 1,886 MiB all layers, 1,942 MiB partial (no flash attention: one micro-batch's
  attention scores over the whole context)
* everything else (CUDA context, cuBLAS, host-pinned buffers): 717 MiB

The planner's count must keep that under the card's free memory. Before this, it reserved 1 GiB
for all but the layers: 8,610 MiB on an 8 GB card (7,892 MiB free), 6,434 MiB with 5,120 free.
"""
from __future__ import annotations

import pytest

from app.core.models import catalogue as models
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware

MiB, GiB = 1 << 20, 1 << 30
Q7 = "qwen2.5-7b-instruct-q4_k_m"


def measured_use_mib(n_gpu_layers: int, layers: int = 28) -> float:
    """GPU memory a 7B llama.cpp worker used at 32K context with n_gpu_layers (-1 = all)."""
    n = layers + 1 if n_gpu_layers < 0 else n_gpu_layers     # the output layer counts as one
    repeating = max(0, n - 1)
    compute = 1886 if n_gpu_layers < 0 else 1942
    return 325 + 144 * repeating + 64 * repeating + compute + 717


@pytest.fixture(scope="module")
def cat():
    return models.load_catalogue()


def pascal(name, mib, held_mib):
    gpu = GpuInfo(0, name, mib * MiB, (mib - held_mib) * MiB, held_mib * MiB, (6, 1))
    return Hardware((gpu,), 32 * GiB, 28 * GiB, 8, ("avx2",))


@pytest.mark.parametrize("name,mib,held", [("NVIDIA GeForce GTX 1070", 8192, 300),
                                           ("NVIDIA GeForce GTX 1080 Ti", 11264, 300),
                                           ("NVIDIA GeForce GTX 1070", 8192, 3072)],
                         ids=["8GB", "11GB", "8GB-3GB-held"])
def test_the_planners_layers_fit_what_llama_cpp_really_uses(cat, name, mib, held):
    hw = pascal(name, mib, held)
    plan = P.make_plan(hw, cat, prefer_model=Q7)
    assert plan.engine == "llamacpp" and plan.model_id == Q7 and plan.max_model_len == 32768
    assert plan.n_gpu_layers != 0
    assert measured_use_mib(plan.n_gpu_layers) <= mib - held


def test_an_8_gb_card_no_longer_takes_every_layer_of_a_7b_at_32k(cat):
    plan = P.make_plan(pascal("NVIDIA GeForce GTX 1070", 8192, 300), cat, prefer_model=Q7)
    assert 0 < plan.n_gpu_layers < 28 + 1
    assert measured_use_mib(-1) > 8192 - 300          # all layers would not have fitted
