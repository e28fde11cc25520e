"""The planner against real cards (NVML totals as nvidia-smi reports them; 300 MiB held by the
driver on an idle card). Expected figures come from the vLLM 0.26 measurements in
../shared/gpu-recipe/README.md, not from the planner's own constants:

* Qwen2.5-7B-AWQ (real vocab) loads 5.4 GiB; activation + non-torch ≈ 1.25–1.35 GiB; CUDA graphs
  0.92 GiB outside the budget; KV = 2×28×4×128×2 = 57,344 B/token.
* At a 22.07 GiB budget (24 GB × 0.92) 288,688 tokens fit; at 13.6 GiB (16 GB × 0.85) vLLM
  estimated 128,304 (auto-fit 130,064).
* Qwen2.5-14B-AWQ: 9.98 GB on disk (9.3 GiB), 196,608 B/token.
A plan must never promise more than the measurement allows (it would fail to start) and should
not waste more than ~15% of it.
"""
from __future__ import annotations

import json
import re

import pytest

from app.core.failures import FailureKind
from app.core.models import catalogue as models
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware
from app.core.plan.plan_history import PlanHistory, fingerprint

MiB, GiB = 1 << 20, 1 << 30
Q7, Q14, Q3 = "qwen2.5-7b-instruct-awq", "qwen2.5-14b-instruct-awq", "qwen2.5-3b-instruct-awq"
KV7, KV14 = 57_344, 196_608


@pytest.fixture(scope="module")
def cat():
    return models.load_catalogue(imported=False)     # module-scoped: before the per-test home exists


def card(name, mib, cc, n=1, used_mib=300, cores=16, ram_gib=64):
    gpus = tuple(GpuInfo(i, name, mib * MiB, (mib - used_mib) * MiB, used_mib * MiB, cc) for i in range(n))
    return Hardware(gpus, ram_gib * GiB, int(ram_gib * 0.9 * GiB), cores, ("avx2",))


def no_gpu(cores=2, ram_gib=24):
    return Hardware((), ram_gib * GiB, int(ram_gib * 0.9 * GiB), cores, ("avx2",),
                    "no NVIDIA GPU (NVML not found)")


def kv_ceiling(budget_gib, weights_gib, per_token, act_gib=1.25):
    """Most tokens a KV cache can hold: budget − measured weights − the low end of activation."""
    return (budget_gib - weights_gib - act_gib) * GiB / per_token


RTX4090 = ("NVIDIA GeForce RTX 4090", 24564, (8, 9))
RTX3090 = ("NVIDIA GeForce RTX 3090", 24576, (8, 6))


# engine, model, utilisation (lo, hi), context (lo, hi)
TABLE = [
    # 24 GB: 0.92; the largest model that still reaches 32K is the 14B:
    # 22.07 − 9.3 − 1.25 = 11.5 GiB → ≤ 62.8K tokens; at least 48K must be offered.
    (RTX4090, "vllm", Q14, (0.92, 0.92), (48 * 1024, kv_ceiling(22.07, 9.3, KV14))),
    (RTX3090, "vllm", Q14, (0.92, 0.92), (48 * 1024, kv_ceiling(22.07, 9.3, KV14))),
    # 16 GB: 0.85 → 13.6 GiB, the measured budget: 14B leaves < 32K even with fp8, so the 7B,
    # below vLLM's own estimate of 128,304 and within 10% of it.
    (("NVIDIA GeForce RTX 4080", 16376, (8, 9)), "vllm", Q7, (0.85, 0.85), (0.9 * 128_304, 128_304)),
    (("NVIDIA GeForce RTX 4060 Ti", 16380, (8, 9)), "vllm", Q7, (0.85, 0.85), (0.9 * 128_304, 128_304)),
    # T4: 15 GiB × 0.85 = 12.75 GiB → 12.75 − 5.4 − 1.25 = 6.1 GiB → ≤ 114K tokens
    (("Tesla T4", 15360, (7, 5)), "vllm", Q7, (0.85, 0.85), (0.85 * kv_ceiling(12.75, 5.4, KV7),
                                                            kv_ceiling(12.75, 5.4, KV7))),
    # 12 GB: 0.85 → 10.2 GiB → ≤ 3.55 GiB of KV → ≤ 66K tokens
    (("NVIDIA GeForce RTX 3060", 12288, (8, 6)), "vllm", Q7, (0.85, 0.85),
     (0.85 * kv_ceiling(10.2, 5.4, KV7), kv_ceiling(10.2, 5.4, KV7))),
    # 11 GB: 0.85 × 11 = 9.35 GiB + 0.5 context + 0.92 graphs > 10.7 GiB free → below 0.85
    (("NVIDIA GeForce RTX 2080 Ti", 11264, (7, 5)), "vllm", Q7, (0.80, 0.84),
     (0.8 * kv_ceiling(0.84 * 11, 5.4, KV7), kv_ceiling(0.84 * 11, 5.4, KV7))),
    # 40/80 GB: 36.8 GiB − 9.9 − 1.7 leaves ≥ 25 GiB → > 131,072 tokens: the YaRN ×4 cap
    (("NVIDIA A100-SXM4-40GB", 40960, (8, 0)), "vllm", Q14, (0.92, 0.92), (131_072, 131_072)),
    # 80 GB holds more than 2 × 131,072 tokens: sized to the need, 9.7 + 1.6 + 49.5 + 0.5 GiB of
    # 80 (tests/core/test_plan_sized.py), the rest left to other programs
    (("NVIDIA A100-SXM4-80GB", 81920, (8, 0)), "vllm", Q14, (0.74, 0.78), (131_072, 131_072)),
]


@pytest.mark.parametrize("gpu,engine,model,util,ctx", TABLE, ids=[t[0][0] for t in TABLE])
def test_real_cards(cat, gpu, engine, model, util, ctx):
    plan = P.make_plan(card(*gpu), cat)
    assert (plan.engine, plan.model_id, plan.weights_format) == (engine, model, "awq")
    assert util[0] <= plan.gpu_memory_utilization <= util[1]
    assert ctx[0] <= plan.max_model_len <= ctx[1], plan.max_model_len
    assert plan.max_model_len % 1024 == 0
    assert plan.enable_prefix_caching and plan.enable_chunked_prefill
    assert plan.kv_cache_dtype == "auto"        # fp16 KV reached the target: no need for fp8
    assert plan.yarn_factor == (4.0 if plan.max_model_len > 32768 else 1.0)
    assert plan.tensor_parallel == 1 and plan.devices == (0,)


def test_pascal_goes_to_llamacpp_with_every_layer_on_the_gpu(cat):
    # cc 6.1 < 7.5 (vLLM's AWQ minimum). A 7–8B Q4_K_M (4.7–5.0 GB) + 32K of f16 KV (1.75–4.5 GiB)
    # fits the 10.7 GiB free of an 11 GB card.
    plan = P.make_plan(card("NVIDIA GeForce GTX 1080 Ti", 11264, (6, 1)), cat)
    assert plan.engine == "llamacpp" and plan.weights_format == "gguf"
    assert plan.n_gpu_layers == -1 and plan.max_model_len == 32768
    assert plan.gpu_memory_utilization is None
    assert cat.get(plan.model_id).params_b >= 7
    assert any("compute capability 6.1" in r for r in plan.reasons)


def test_small_card_offloads_part_of_a_model(cat):
    # 4 GB, cc 7.5: no AWQ model leaves 8K of KV; the 3B GGUF (2.1 GB + 1.1 GiB KV at 32K) does not
    # wholly fit in 3.7 GiB with llama.cpp's buffers (0.75 GiB + 1.1 GiB of attention scores at 32K,
    # measured on the H200, docs/gpu-results.md), so only some layers go to the GPU.
    plan = P.make_plan(card("NVIDIA GeForce GTX 1650", 4096, (7, 5)), cat,
                       prefer_model="qwen2.5-3b-instruct-q4_k_m")
    spec = cat.get(plan.model_id)
    assert plan.engine == "llamacpp" and 0.4 * spec.layers < plan.n_gpu_layers < spec.layers


def test_two_equal_gpus_use_tensor_parallel(cat):
    plan = P.make_plan(card(*RTX3090, n=2), cat)
    assert plan.engine == "vllm" and plan.tensor_parallel == 2 and plan.devices == (0, 1)
    # per GPU: 22.07 − 9.9/2 − 1.7 − 0.3 ≥ 15 GiB → 2 × 15 GiB of KV > 131,072 × 196,608 B
    assert plan.model_id == Q14 and plan.max_model_len == 131_072
    assert "tensor parallel 2" in P.explain(plan)


def test_unequal_gpus_use_the_larger_alone(cat):
    gpus = card(*RTX4090).gpus + (GpuInfo(1, "NVIDIA GeForce GTX 1050", 2048 * MiB, 1900 * MiB,
                                          148 * MiB, (6, 1)),)
    plan = P.make_plan(Hardware(gpus, 64 * GiB, 60 * GiB, 16, ("avx2",)), cat)
    assert plan.engine == "vllm" and plan.devices == (0,) and plan.tensor_parallel == 1


def test_no_gpu_small_machine_uses_the_small_model_on_cpu(cat):
    plan = P.make_plan(no_gpu(cores=2), cat)
    assert (plan.engine, plan.n_gpu_layers, plan.gpu_memory_utilization) == ("llamacpp", 0, None)
    assert plan.model_id == "smollm2-135m-q4_1" and plan.max_model_len == 8192    # its native context
    assert P.explain(plan) == "no NVIDIA GPU → llama.cpp on the CPU, GGUF smollm2-135m-q4_1, 8K context"


def test_no_gpu_big_machine_uses_a_bigger_model_within_ram(cat):
    plan = P.make_plan(no_gpu(cores=8, ram_gib=32), cat)
    spec = cat.get(plan.model_id)
    assert plan.engine == "llamacpp" and plan.n_gpu_layers == 0
    assert 1 < spec.params_b <= 8 * 0.5                 # 8 cores: a 3B model, not a 7B
    tight = P.make_plan(no_gpu(cores=8, ram_gib=6), cat)   # 5.4 GiB available: context shrinks to fit
    room = 5.4 * GiB - cat.get(tight.model_id).size_gb * 1e9 - 2 * GiB
    assert tight.max_model_len * cat.get(tight.model_id).kv_bytes_per_token() <= room


def test_desktop_holding_vram_lowers_utilisation(cat):
    idle = P.make_plan(card(*RTX4090), cat)
    busy = P.make_plan(card(*RTX4090, used_mib=1536), cat)
    free = (24564 - 1536) * MiB
    assert busy.gpu_memory_utilization < 0.92
    # vLLM refuses to start unless util × total ≤ free; CUDA graphs (0.92 GiB) come on top
    assert busy.gpu_memory_utilization * 24564 * MiB + 0.92 * GiB <= free
    assert busy.gpu_memory_utilization >= 0.85
    assert busy.max_model_len < idle.max_model_len
    assert any("other programs hold 1.5 GB" in r for r in busy.reasons)


@pytest.mark.parametrize("need,expected", [(20_000, 20_480), (3_000, 8192), (60_000, 59 * 1024)])
def test_need_tokens_caps_the_context(cat, need, expected):
    plan = P.make_plan(card(*RTX4090), cat, prefer_model=Q7, need_tokens=need)
    assert plan.max_model_len == expected and plan.need_tokens == expected
    assert plan.yarn_factor == (4.0 if expected > 32768 else 1.0)
    assert plan.note == ""            # capped by the document, not by memory


def test_long_document_on_ada_uses_fp8_kv_and_on_ampere_a_smaller_model(cat):
    # 100,000 tokens: the 14B's fp16 KV (≤ 62.8K) is too small. fp8 halves the bytes per token:
    # (22.07 − 9.9 − 1.7) × 0.95 GiB / 98,304 B ≥ 108K ≥ 100,352.
    ada = P.make_plan(card(*RTX4090), cat, need_tokens=100_000)
    assert (ada.model_id, ada.kv_cache_dtype, ada.max_model_len) == (Q14, "fp8", 100_352)
    assert "fp8 KV cache" in P.explain(ada)
    # compute 8.6: no fp8 KV (Triton's fp8e4nv needs sm89) → the 7B holds it in fp16
    ampere = P.make_plan(card(*RTX3090), cat, need_tokens=100_000)
    assert (ampere.model_id, ampere.kv_cache_dtype, ampere.max_model_len) == (Q7, "auto", 100_352)


def test_prefer_model_7b_on_24gb_reaches_128k_with_yarn(cat):
    plan = P.make_plan(card(*RTX4090), cat, prefer_model=Q7)
    assert plan.max_model_len == 131_072 <= 288_688 and plan.yarn_factor == 4.0


def test_explain_is_one_plain_line(cat):
    line = P.explain(P.make_plan(card(*RTX4090), cat))
    assert re.fullmatch(r"24 GB RTX 4090 → vLLM AWQ qwen2\.5-14b-instruct-awq, util 0\.92, \d\dK context; "
                        r"128K would need \d\d GB, 2\d GB usable", line), line
    gpu = P.explain(P.make_plan(card("NVIDIA GeForce GTX 1080 Ti", 11264, (6, 1)), cat))
    assert gpu.startswith("11 GB GTX 1080 Ti → llama.cpp GGUF ") and "all layers on the GPU, 32K context" in gpu


def test_remote_endpoint_means_no_local_engine(cat):
    remote = P.RemoteEndpoint("https://llm.example.org/v1", "Qwen2.5-72B-Instruct", 65536)
    plan = P.make_plan(card(*RTX4090), cat, remote=remote)
    assert (plan.engine, plan.model_id, plan.max_model_len) == ("remote", "Qwen2.5-72B-Instruct", 65536)
    assert plan.base_url == remote.base_url and plan.gpu_memory_utilization is None
    assert P.ladder(plan, card(*RTX4090), cat) == []


def test_only_downloaded_models_count(cat, tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEWISE_HOME", str(tmp_path))   # nothing pulled: only the embedded model
    plan = P.make_plan(card(*RTX4090), cat, available=models.is_available)
    assert plan.model_id == "smollm2-135m-q4_1" and plan.engine == "llamacpp" and plan.n_gpu_layers == -1
    assert any("would fit" in r and f"`pagewise models pull {Q14}`" in r for r in plan.reasons)
    cpu = P.make_plan(no_gpu(), cat, available=models.is_available)
    assert cpu.model_id == "smollm2-135m-q4_1" and cpu.n_gpu_layers == 0


def test_preferred_model_not_downloaded_says_so(cat):
    plan = P.make_plan(card(*RTX4090), cat, prefer_model=Q7, available=lambda s: s.id != Q7)
    assert plan.model_id != Q7
    assert any(f"`pagewise models pull {Q7}`" in r for r in plan.reasons)


def test_plan_as_data(cat):
    plan = P.make_plan(card(*RTX4090), cat)
    data = json.loads(json.dumps(P.to_dict(plan)))
    assert data["summary"] == P.explain(plan) and data["engine"] == "vllm"
    assert P.from_dict(data) == plan


# --- the ladder -----------------------------------------------------------------------------------
def test_kv_cache_too_small_uses_the_engines_figure(cat):
    hw = card(*RTX4090)
    plan = P.make_plan(hw, cat)
    nxt = P.next_rung(plan, "kv_too_small:41234", hw, cat)
    assert nxt.gpu_memory_utilization == plan.gpu_memory_utilization
    assert nxt.max_model_len == 40 * 1024 and nxt.rung == 1
    assert nxt.reasons[-1].endswith(f"failed: KV cache holds 40K → retry {Q14} 0.92 / 40K")


def test_free_memory_failure_lowers_utilisation(cat):
    hw = card(*RTX4090)
    plan = P.make_plan(hw, cat)

    class FreeMemoryTooLow(Exception):             # as vLLM reports it: (21.0/23.99 GiB)
        kind = FailureKind.FREE_MEMORY             # the ladder reads the kind, never the class name
        free_bytes, total_bytes = int(21.0 * GiB), 24564 * MiB
    nxt = P.next_rung(plan, FreeMemoryTooLow(), hw, cat)
    assert nxt.gpu_memory_utilization * 24564 * MiB <= 21.0 * GiB - 0.9 * GiB
    assert nxt.max_model_len < plan.max_model_len and nxt.model_id == plan.model_id


def test_oom_turns_graphs_off_then_lowers_utilisation(cat):
    hw = card(*RTX4090)
    first = P.next_rung(P.make_plan(hw, cat), "oom", hw, cat)
    assert first.enforce_eager and first.gpu_memory_utilization == 0.92
    second = P.next_rung(first, "oom", hw, cat)
    assert second.enforce_eager and second.gpu_memory_utilization < 0.92


def test_unsupported_gpu_goes_straight_to_llamacpp(cat):
    hw = card(*RTX4090)
    nxt = P.next_rung(P.make_plan(hw, cat), "unsupported", hw, cat)
    assert nxt.engine == "llamacpp" and nxt.n_gpu_layers != 0


def test_ladder_goes_down_and_ends_on_the_cpu(cat):
    hw = card(*RTX4090)
    rungs = P.ladder(P.make_plan(hw, cat), hw, cat, limit=30)
    engines = [r.engine for r in rungs]
    assert engines.index("llamacpp") > engines.index("vllm")
    assert "vllm" not in engines[engines.index("llamacpp"):]          # never back up
    assert rungs[-1].engine == "llamacpp" and rungs[-1].n_gpu_layers == 0
    assert [r.rung for r in rungs] == list(range(1, len(rungs) + 1))
    sizes = [cat.get(r.model_id).params_b for r in rungs if r.engine == "vllm"]
    assert sizes == sorted(sizes, reverse=True)


def test_cpu_plan_is_the_last_rung(cat):
    hw = no_gpu()
    plan = P.make_plan(hw, cat, available=lambda s: s.source == "embedded")
    assert P.ladder(plan, hw, cat, available=lambda s: s.source == "embedded") == []
    smaller = P.next_rung(plan, "oom", hw, cat)        # a CPU OOM halves the context first
    assert smaller.max_model_len == plan.max_model_len // 2


# --- what worked last time --------------------------------------------------------------------------
def test_history_goes_straight_to_what_worked(cat, tmp_path):
    hw, history = card(*RTX4090), PlanHistory(tmp_path / "h.json")
    plan = P.make_plan(hw, cat)
    worked = P.next_rung(plan, "kv_too_small:41234", hw, cat)
    history.record(hw, plan.model_id, worked, limit=worked.max_model_len)
    again = P.make_plan(hw, cat, history=history)
    assert (again.model_id, again.max_model_len) == (plan.model_id, 40 * 1024)
    assert "remembered" in again.reasons[-1]
    # a document that needs less still caps it
    assert P.make_plan(hw, cat, need_tokens=10_000, history=history).max_model_len == 10_240


def test_history_remembers_a_different_model(cat, tmp_path):
    hw, history = card(*RTX4090), PlanHistory(tmp_path / "h.json")
    plan = P.make_plan(hw, cat)
    worked = P.next_rung(plan, "no_kv_memory", hw, cat)
    history.record(hw, plan.model_id, worked)
    again = P.make_plan(hw, cat, history=history)
    assert again.model_id == worked.model_id != plan.model_id


def test_history_forgets_on_hardware_change(cat, tmp_path):
    hw, history = card(*RTX4090), PlanHistory(tmp_path / "h.json")
    plan = P.make_plan(hw, cat)
    history.record(hw, plan.model_id, P.next_rung(plan, "oom", hw, cat))
    other = card(*RTX3090)
    assert fingerprint(other) != fingerprint(hw)
    assert history.lookup(other, plan.model_id) is None
    assert P.make_plan(other, cat, history=history) == P.make_plan(other, cat)
    assert history.lookup(hw, plan.model_id) is not None         # still there for the 4090
    history.record(other, plan.model_id, P.make_plan(other, cat))
    assert history.lookup(hw, plan.model_id) is None             # replaced by the new machine


def test_a_port_race_retries_the_same_plan(cat):
    """Another program took the free port between our pick and the engine's bind: the ladder keeps
    the plan (same rung, same settings) and says why; it is not a reason to step down."""
    hw = card(*RTX4090)
    plan = P.make_plan(hw, cat)
    again = P.next_rung(plan, "port_in_use", hw, cat)
    assert again.rung == plan.rung and again.max_model_len == plan.max_model_len
    assert again.gpu_memory_utilization == plan.gpu_memory_utilization and again.model_id == plan.model_id
    assert "port taken" in again.reasons[-1]
