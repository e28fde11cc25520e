"""The downgrade switch end to end: real Supervisor, real child processes. vLLM is played by
tests/support/fake_vllm.py, which makes vLLM's start-up checks on a simulated RTX 4090 and prints
vLLM's real messages; the last rung is the real llama.cpp worker with the embedded SmolLM2.
The message texts below are quoted from vLLM's source and from real logs (see each test)."""
from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from app.core.models import catalogue as models
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware
from app.core.plan.plan_history import PlanHistory
from app.core.plan.ladder import short
from app.worker import engine_errors as errors
from app.worker.client import kv_cache_usage, parse_metrics
from app.worker.downgrade import DowngradeSwitch, NoEngineStarted
from app.worker.engines import llamacpp, vllm
from app.worker.supervisor import Supervisor, probe

FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_vllm.py")
MiB, GiB = 1 << 20, 1 << 30
Q14, Q7 = "qwen2.5-14b-instruct-awq", "qwen2.5-7b-instruct-awq"
SMOL = "smollm2-135m-q4_1"
# loaded GiB : activation GiB : CUDA graph GiB : KV bytes/token, near vLLM 0.26's real figures
PHYSICS = {Q14: "9.4:1.5:1.0:196608", Q7: "5.4:1.3:0.92:57344", "qwen2.5-3b-instruct-awq": "2.7:1.1:0.8:36864"}


# --- classify: vLLM's own words ---------------------------------------------------------------------
def test_kv_cache_too_small_gives_the_engines_estimate():
    # ../shared/gpu-recipe/README.md, vLLM 0.26 on the H200 at a 16 GB budget with YaRN ×4
    line = ("(EngineCore_DP0 pid=8) ERROR 11-29 10:12:01 [core.py:708] ValueError: To serve at least one "
            "request with the model's max seq len (131072), (7.0 GiB KV cache is needed, which is larger "
            "than the available KV cache memory (6.85 GiB). Based on the available memory, the estimated "
            "maximum model length is 128304. Try increasing `gpu_memory_utilization` or decreasing "
            "`max_model_len` when initializing the engine.")
    err = vllm.classify(["INFO loading", line, "RuntimeError: Engine core initialization failed. "
                         "See root cause above. Failed core proc(s): {}"])
    assert isinstance(err, errors.KvCacheTooSmall) and err.max_len == 128304


def test_kv_cache_older_wordings():
    # vLLM 0.9 ("models's", no estimate when none fits) and V0 (raise_if_cache_size_invalid)
    v1 = ("ValueError: To serve at least one request with the models's max seq len (16384), (3.0 GiB KV "
          "cache is needed, which is larger than the available KV cache memory (0.18 GiB). Based on the "
          "available memory, the estimated maximum model length is 976.")
    assert vllm.classify([v1]).max_len == 976
    no_estimate = ("ValueError: To serve at least one request with the model's max seq len (32768), (1.0 GiB "
                   "KV cache is needed, which is larger than the available KV cache memory (0.01 GiB). Try "
                   "increasing `gpu_memory_utilization`")
    err = vllm.classify([no_estimate])
    assert isinstance(err, errors.KvCacheTooSmall) and err.max_len is None
    v0 = ("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can "
          "be stored in KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`")
    assert vllm.classify([v0]).max_len == 20000


@pytest.mark.parametrize("line,free_gib,total_gib", [
    ("ValueError: Free memory on device cuda:0 (12.18/23.56 GiB) on startup is less than desired GPU memory "
     "utilization (0.92, 21.67 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
     "processes.", 12.18, 23.56),
    ("ValueError: Free memory on device (6.92/8.0 GiB) on startup is less than desired GPU memory "
     "utilization (0.9, 7.2 GiB)", 6.92, 8.0),
])
def test_free_memory_below_utilisation(line, free_gib, total_gib):
    err = vllm.classify([line])
    assert isinstance(err, vllm.FreeMemoryTooLow) and isinstance(err, errors.OutOfMemory)
    assert err.free_bytes == int(free_gib * GiB) and err.total_bytes == int(total_gib * GiB)


@pytest.mark.parametrize("line,kind", [
    ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
     "initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more "
     "details.", vllm.NoCacheMemory),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 5.78 GiB. GPU 0 has a total capacity of "
     "139.80 GiB of which 4.12 GiB is free.", errors.OutOfMemory),
    ("ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. "
     "Current capability: 70.", errors.UnsupportedGpu),
    ("ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=128, "
     "dtype=torch.float16, kv_cache_dtype=fp8, block_size=None, use_mla=False). Reasons: {FLASH_ATTN: "
     "[kv_cache_dtype not supported]}.", vllm.KvCacheDtypeUnsupported),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", errors.UnsupportedGpu),
    ("ValueError: Invalid repository ID or local directory specified: '/mnt/models'.", errors.ModelFileMissing),
    ("RuntimeError: Cannot find any model weights with `/var/lib/models/acme__m`", errors.ModelFileMissing),
    ("ValueError: Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: "
     "dict_keys(['LlamaForCausalLM'])", errors.ModelLoadFailed),
    ("OSError: [Errno 98] Address already in use", errors.PortInUse),
    ("/usr/bin/python3: Error while finding module specification for 'vllm.entrypoints.openai.api_server' "
     "(ModuleNotFoundError: No module named 'vllm')", vllm.EngineMissing),
])
def test_each_failure_has_its_type(line, kind):
    err = vllm.classify(["(APIServer pid=1) INFO 11-29 10:00:00 [model.py:541] Resolved architecture", line])
    assert type(err) is kind
    assert "\n" not in str(err) and "Traceback" not in str(err)


def test_ordinary_output_is_not_a_failure():
    assert vllm.classify(["INFO Resolved architecture: Qwen2ForCausalLM", "INFO Using max model len 32768",
                          "WARNING ulimit is low"]) is None


# --- launch spec ---------------------------------------------------------------------------------------
def _plan(**kw):
    base = P.Plan(engine="vllm", model_id=Q7, weights_format="awq", gpu_memory_utilization=0.92,
                  max_model_len=131072, yarn_factor=4.0, devices=(1,))
    return P.from_dict({**P.to_dict(base), **kw})


def test_launch_spec_flags(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 32768, "rope_theta": 1e6}))
    spec = vllm.launch_spec(_plan(kv_cache_dtype="fp8", enforce_eager=True, tensor_parallel=2),
                            tmp_path, "doc-qa", env={"VLLM_USE_FLASHINFER_SAMPLER": "1"})
    argv = spec.argv
    assert argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    flag = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("--")}
    assert flag["--model"] == str(tmp_path) and flag["--served-model-name"] == "doc-qa"
    assert flag["--host"] == "127.0.0.1" and flag["--port"] == str(spec.extra["port"])
    assert flag["--gpu-memory-utilization"] == "0.92" and flag["--max-model-len"] == "131072"
    assert flag["--kv-cache-dtype"] == "fp8" and flag["--tensor-parallel-size"] == "2"
    assert {"--enforce-eager", "--enable-prefix-caching", "--enable-chunked-prefill"} <= set(argv)
    assert "--quantization" not in argv          # vLLM picks awq_marlin itself
    rope = json.loads(flag["--hf-overrides"])["rope_parameters"]
    assert rope == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768,
                    "rope_theta": 1e6}
    assert spec.api_key not in " ".join(argv) and spec.env["VLLM_API_KEY"] == spec.api_key
    assert spec.env["CUDA_VISIBLE_DEVICES"] == "1" and spec.env["HF_HUB_OFFLINE"] == "1"
    assert spec.env["VLLM_USE_FLASHINFER_SAMPLER"] == "1"           # caller's setting wins
    assert spec.base_url == f"http://127.0.0.1:{spec.extra['port']}/v1" and spec.classify is vllm.classify


def test_launch_spec_native_context_has_no_rope_override(tmp_path):
    spec = vllm.launch_spec(_plan(max_model_len=32768, yarn_factor=1.0, devices=()), tmp_path, "m")
    assert "--hf-overrides" not in spec.argv and "CUDA_VISIBLE_DEVICES" not in spec.env
    assert vllm.launch_spec(_plan(), tmp_path, "m").env["VLLM_USE_FLASHINFER_SAMPLER"] == "0"


def test_kv_cache_usage_from_metrics():
    text = ('# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n'
            'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25\n')
    assert kv_cache_usage(parse_metrics(text)) == 0.25
    assert kv_cache_usage(parse_metrics('vllm:gpu_cache_usage_perc{model_name="m"} 0.5\n')) == 0.5
    assert kv_cache_usage({"vllm:kv_cache_usage_perc": 1.5}) == 1.0       # clamped


# --- the switch, with child processes ----------------------------------------------------------------------
RTX4090 = Hardware((GpuInfo(0, "NVIDIA GeForce RTX 4090", 24564 * MiB, 24264 * MiB, 300 * MiB, (8, 9)),),
                   64 * GiB, 60 * GiB, 16, ("avx2",))


class Rig:
    """start_fn for the switch: fake vLLM for AWQ plans, the real llama.cpp worker for GGUF ones."""

    def __init__(self, tmp: Path, gpu: str = "23.99:23.70:8.9", fail: str | None = None, runs: int | None = 1,
                 llama_model: Path | None = None, oom_after: int | None = None, extra: tuple = ()):
        self.tmp, self.gpu, self.fail, self.runs, self.oom_after = tmp, gpu, fail, runs, oom_after
        self.extra = extra                     # more fake_vllm.py fault flags
        self.llama_model, self.started, self.plans = llama_model, [], []
        for model_id in PHYSICS:
            (tmp / model_id).mkdir(exist_ok=True)
            (tmp / model_id / "config.json").write_text('{"max_position_embeddings": 32768}')

    def __call__(self, plan: P.Plan):
        self.plans.append(plan)
        if plan.engine == "vllm":
            fake = ["--fake-gpu", self.gpu, "--fake-model", PHYSICS[plan.model_id]]
            if self.fail:
                fake += ["--fake-fail", self.fail]
                if self.runs is not None:
                    fake += ["--fake-fail-runs", str(self.runs), "--fake-state", str(self.tmp / "runs")]
            if self.oom_after is not None:
                fake += ["--fake-oom-after", str(self.oom_after)]
            fake += list(self.extra)
            spec = vllm.launch_spec(plan, self.tmp / plan.model_id, plan.model_id, entry=[sys.executable, FAKE],
                                    extra_args=tuple(fake), ready_timeout_s=30, stall_timeout_s=15)
        else:
            path = self.llama_model or models.local_path(models.load_catalogue().get(plan.model_id))
            spec = llamacpp.launch_spec(path, n_ctx=min(plan.max_model_len, 2048), model_name=plan.model_id,
                                        kv_store=False, ready_timeout_s=120)
        sup = Supervisor(spec, log_path=self.tmp / "worker.log")
        sup.start()
        self.started.append(sup)
        return sup

    def stop_all(self):
        for sup in self.started:
            sup.stop()


@pytest.fixture
def cat():
    return models.load_catalogue()


@pytest.fixture
def rig_factory(tmp_path):
    rigs = []

    def make(**kw):
        rigs.append(Rig(tmp_path, **kw))
        return rigs[-1]
    yield make
    for r in rigs:
        r.stop_all()


def healthy(sup) -> bool:
    return probe(sup.spec.root_url + "/health") == 200 and sup.is_alive()


def switch_for(rig, cat, tmp_path, **kw):
    steps = []
    sw = DowngradeSwitch(RTX4090, cat, rig, history=PlanHistory(tmp_path / "history.json"),
                         on_step=steps.append, available=lambda s: s.format == "awq" or s.source == "embedded",
                         **kw)
    return sw, steps


def test_kv_too_small_retries_at_the_length_vllm_reported_and_remembers_it(cat, tmp_path, rig_factory):
    # the real activation (3.5 GiB) is far above the planner's estimate: 22.07 − 9.4 − 3.5 GiB of KV
    # holds 50,080 tokens, less than the planned 56K.
    rig = rig_factory()
    PHYSICS[Q14] = "9.4:3.5:1.0:196608"
    try:
        sw, steps = switch_for(rig, cat, tmp_path)
        first = P.make_plan(RTX4090, cat)
        assert (first.model_id, first.max_model_len) == (Q14, 56 * 1024)
        plan, sup = sw.start(first)
        assert (plan.model_id, plan.gpu_memory_utilization, plan.max_model_len) == (Q14, 0.92, 48 * 1024)
        assert plan.rung == 1 and healthy(sup)
        assert steps == [f"{Q14} 0.92 / 56K failed: KV cache holds 48K → retry {Q14} 0.92 / 48K"]
        sup.stop()
        # the next start goes straight to 48K: one launch, no failure
        rig.plans.clear()
        sw2, steps2 = switch_for(rig, cat, tmp_path)
        plan2, sup2 = sw2.start(P.make_plan(RTX4090, cat))
        assert [p.max_model_len for p in rig.plans] == [48 * 1024] and healthy(sup2)
        assert "what worked last time" in steps2[0]
    finally:
        PHYSICS[Q14] = "9.4:1.5:1.0:196608"


def test_desktop_took_vram_after_the_probe(cat, tmp_path, rig_factory):
    # planned with 23.7 GiB free; by launch time only 21.0 GiB are: vLLM's free-memory check fails
    rig = rig_factory(gpu="23.99:21.0:8.9")
    sw, steps = switch_for(rig, cat, tmp_path)
    plan, sup = sw.start(P.make_plan(RTX4090, cat))
    assert plan.model_id == Q14 and plan.gpu_memory_utilization * 23.99 <= 21.0 - 1.0
    assert healthy(sup) and "only 21.0 of 24.0 GiB free" in steps[0]


@pytest.mark.parametrize("fail,expect", [
    ("kv:40960", lambda a, b: (b.model_id, b.max_model_len, b.gpu_memory_utilization) == (a.model_id, 40960, 0.92)),
    ("oom", lambda a, b: b.model_id == a.model_id and b.enforce_eager and not a.enforce_eager),
    ("nocache", lambda a, b: b.engine == "vllm" and b.model_id == Q7),
    ("missing", lambda a, b: b.engine == "vllm" and b.model_id == Q7),
    ("arch", lambda a, b: b.engine == "vllm" and b.model_id == Q7),
    ("free", lambda a, b: b.model_id == a.model_id and b.gpu_memory_utilization < a.gpu_memory_utilization),
])
def test_each_real_failure_message_moves_to_the_right_rung(cat, tmp_path, rig_factory, fail, expect):
    rig = rig_factory(fail=fail, runs=1)
    sw, steps = switch_for(rig, cat, tmp_path)
    plan, sup = sw.start(P.make_plan(RTX4090, cat))
    first, second = rig.plans
    assert expect(first, second) and plan == second and healthy(sup)
    assert len(steps) == 1 and steps[0].startswith(f"{short(first)} failed: ")
    assert steps[0].endswith(f"→ retry {short(second)}")


def test_fp8_kv_refused_falls_back_to_fp16(cat, tmp_path, rig_factory):
    rig = rig_factory(fail="backend", runs=1)
    sw, steps = switch_for(rig, cat, tmp_path)
    first = P.make_plan(RTX4090, cat, need_tokens=100_000)
    assert first.kv_cache_dtype == "fp8"
    plan, sup = sw.start(first)
    assert plan.model_id == first.model_id and plan.kv_cache_dtype == "auto" and healthy(sup)
    assert "fp8 KV cache not supported" in steps[0]


@pytest.mark.slow
def test_unsupported_gpu_falls_back_to_real_llamacpp(cat, tmp_path, rig_factory):
    rig = rig_factory(fail="quant", runs=None)
    sw, steps = switch_for(rig, cat, tmp_path)
    plan, sup = sw.start(P.make_plan(RTX4090, cat))
    assert [p.engine for p in rig.plans] == ["vllm", "llamacpp"]
    assert plan.engine == "llamacpp" and plan.model_id == SMOL and healthy(sup)
    assert "GPU or quantisation not supported" in steps[0]


@pytest.mark.slow
def test_every_vllm_rung_failing_ends_on_llamacpp(cat, tmp_path, rig_factory):
    rig = rig_factory(fail="oom", runs=None)
    sw, steps = switch_for(rig, cat, tmp_path)
    plan, sup = sw.start(P.make_plan(RTX4090, cat))
    engines = [p.engine for p in rig.plans]
    assert engines[-1] == "llamacpp" and set(engines[:-1]) == {"vllm"}
    tried = [p.model_id for p in rig.plans if p.engine == "vllm"]
    assert tried[0] == Q14 and Q7 in tried and len(tried) <= 3 * 3      # at most 3 tries per model
    assert plan.model_id == SMOL and healthy(sup) and len(steps) == len(rig.plans) - 1
    assert PlanHistory(tmp_path / "history.json").lookup(RTX4090, Q14)["plan"]["engine"] == "llamacpp"


@pytest.mark.slow
def test_raises_only_when_llamacpp_on_cpu_fails_too(cat, tmp_path, rig_factory):
    rig = rig_factory(fail="quant", runs=None, llama_model=tmp_path / "gone.gguf")
    sw, steps = switch_for(rig, cat, tmp_path)
    with pytest.raises(NoEngineStarted) as info:
        sw.start(P.make_plan(RTX4090, cat))
    kinds = [type(e).__name__ for _, e in info.value.failures]
    assert kinds[0] == "UnsupportedGpu" and kinds[-1] == "ModelFileMissing"
    assert [p.engine for p, _ in info.value.failures][-1] == "llamacpp"
    assert "nothing left to try" in steps[-1] and "\n" not in str(info.value)


def _chat(sup, text="hi"):
    body = json.dumps({"model": sup.spec.model_name, "messages": [{"role": "user", "content": text}]}).encode()
    req = urllib.request.Request(sup.spec.base_url + "/chat/completions", body,
                                 {"Authorization": f"Bearer {sup.spec.api_key}", "Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req, timeout=10).read())


def test_runtime_oom_after_another_program_took_vram_steps_down(cat, tmp_path, rig_factory):
    rig = rig_factory(oom_after=1)
    busy = Hardware((GpuInfo(0, "NVIDIA GeForce RTX 4090", 24564 * MiB, 21 * GiB, 24564 * MiB - 21 * GiB, (8, 9)),),
                    64 * GiB, 60 * GiB, 16, ("avx2",))
    sw, steps = switch_for(rig, cat, tmp_path, probe=lambda: busy)
    plan, sup = sw.start(P.make_plan(RTX4090, cat))
    assert _chat(sup)["choices"][0]["message"]["content"] == "echo: hi"
    with pytest.raises(urllib.error.HTTPError) as info:
        _chat(sup)
    assert info.value.code == 500
    rig.gpu = "23.99:21.0:8.9"                      # the other program keeps its 2.7 GiB
    sup.stop()                                      # its owner (the Engine) stops it first
    new_plan, new_sup = sw.on_runtime_failure(plan, errors.ServerError("HTTP 500: EngineCore encountered an issue"))
    assert not sup.is_alive() and healthy(new_sup)
    assert new_plan.model_id == plan.model_id
    assert new_plan.gpu_memory_utilization < plan.gpu_memory_utilization
    assert new_plan.gpu_memory_utilization * 23.99 <= 21.0 - 1.0
    assert "GiB free" in steps[-1]
