"""Check the product's vLLM plan on a real GPU: start vLLM exactly as the app would for a
24 GB RTX 4090 and a 16 GB RTX 4080, inside a memory budget scaled to the big card, and measure.

The command line is the app's own: app.core.plan.planner.make_plan(...) → app.worker.engines.vllm
.launch_spec(plan, model_path, served_name). Only one flag is changed, --gpu-memory-utilization:
on a card of T_dev bytes (the H200's 139.8 GiB) a budget of U × T_card is U' = U × T_card / T_dev.

Per budget: (1) the plan's start: time to ready, GPU memory, vLLM's KV-cache lines, then a 30K-token
prompt (TTFT, decode tok/s) and a follow-up sharing its prefix (TTFT); (2) a probe for the largest
context that starts in the same budget: --max-model-len auto with YaRN ×4 (ceiling 131072), where
vLLM prints "Auto-fit max_model_len: reduced from 131072 to N" or that the full context fits; a
probe past the ceiling (VLLM_ALLOW_LONG_MAX_MODEL_LEN) makes vLLM print "the estimated maximum
model length is N", its pure-memory answer.

--emulate consumer adds the batch limits vLLM itself picks on a card under 70 GiB (see
CONSUMER_DEFAULTS): without it the H200's larger defaults inflate activations and CUDA graphs.

usage (device, repo root): PYTHONPATH=/tmp/site python3 benchmarks/gpu/bench_plan.py --model /tmp/model152 \
                               [--emulate consumer] [--tag _x] [--budgets 24,16] [--probe 24:past,16:auto]
       here, no GPU:       .venv/bin/python benchmarks/gpu/bench_plan.py --dry [--emulate consumer]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vllm_run import Server, device_total_bytes, gpu_apps, gpu_used_mib, kv_lines  # noqa: E402

from app.core.models import catalogue as models  # noqa: E402
from app.core.plan import planner  # noqa: E402
from app.core.plan.hardware import GpuInfo, Hardware  # noqa: E402
from app.worker.engines import vllm as vllm_engine  # noqa: E402

MiB, GiB = 1 << 20, 1 << 30
MODEL_ID = "qwen2.5-7b-instruct-awq"
# Real cards as NVML reports them (total MiB); the desktop and other programs hold a little.
CARDS = {"24": ("NVIDIA GeForce RTX 4090", 24564), "16": ("NVIDIA GeForce RTX 4080", 16376)}
HELD_BY_OTHERS = int(0.3 * GiB)
YARN = {"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768,
                            "rope_theta": 1000000.0}}
# vLLM picks its batch defaults by the card's total memory (EngineArgs.get_batch_defaults): on a
# card under 70 GiB the API server gets max_num_batched_tokens 2048 and max_num_seqs 256, on the
# H200 8192 and 1024. --emulate consumer passes the small-card values, so activation memory, CUDA
# graphs and prefill chunking are those a real 4090/4080 would get from the same command line.
CONSUMER_DEFAULTS = ["--max-num-batched-tokens", "2048", "--max-num-seqs", "256"]
VLLM_ENV = {"VLLM_USE_FLASHINFER_SAMPLER": "0",   # FlashInfer is not in the bundle (recipe)
            "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def card_hardware(budget: str) -> Hardware:
    name, mib = CARDS[budget]
    total = mib * MiB
    gpu = GpuInfo(0, name, total, total - HELD_BY_OTHERS, HELD_BY_OTHERS, (8, 9), "580.00", "13.0")
    return Hardware((gpu,), 64 * GiB, 48 * GiB, 16, ("avx", "avx2", "fma"))


def product_launch(budget: str, model_path: str):
    """The app's plan and launch spec for this card (7B AWQ asked for: the benchmark's model)."""
    hw = card_hardware(budget)
    cat = models.load_catalogue()
    plan = planner.make_plan(hw, cat, prefer_model=MODEL_ID, available=lambda spec: True)
    spec = vllm_engine.launch_spec(plan, Path(model_path), served_name=plan.model_id)
    return hw, plan, spec


def get_arg(argv: list[str], flag: str) -> str | None:
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def set_arg(argv: list[str], flag: str, value: str) -> list[str]:
    """argv with flag's value replaced (or appended)."""
    out, i, done = [], 0, False
    while i < len(argv):
        a = argv[i]
        if a == flag:
            out += [flag, value]
            i, done = i + 2, True
        elif a.startswith(flag + "="):
            out.append(f"{flag}={value}")
            i, done = i + 1, True
        else:
            out.append(a)
            i += 1
    return out if done else out + [flag, value]


def simulated_util(plan_util: float, card_total: int, dev_total: int) -> float:
    return round(plan_util * card_total / dev_total, 4)


def describe(budget: str, model_path: str, dev_total: int, emulate: str = "") -> dict:
    hw, plan, spec = product_launch(budget, model_path)
    util_sim = simulated_util(plan.gpu_memory_utilization, hw.gpus[0].total_bytes, dev_total)
    argv = set_arg(spec.argv, "--gpu-memory-utilization", str(util_sim))
    argv += CONSUMER_DEFAULTS if emulate == "consumer" else []
    return {"budget": budget, "card": CARDS[budget][0], "card_total_mib": CARDS[budget][1],
            "plan": planner.explain(plan), "plan_util": plan.gpu_memory_utilization,
            "plan_max_model_len": plan.max_model_len, "plan_kv_tokens": plan.kv_tokens,
            "plan_kv_dtype": plan.kv_cache_dtype, "plan_yarn": plan.yarn_factor, "emulate": emulate or "device",
            "budget_gib": round(util_sim * dev_total / GiB, 3), "util_sim": util_sim,
            "argv": argv, "env": spec.env, "base_url": spec.base_url, "api_key": spec.api_key,
            "model_name": spec.model_name}


def probe_argv(argv: list[str], past_ceiling: int | None) -> tuple[list[str], dict]:
    """argv for the 'largest that starts' probe: auto-fit under the YaRN ceiling, or past it."""
    if get_arg(argv, "--hf-overrides") is None:
        argv = argv + ["--hf-overrides", json.dumps(YARN)]
    if past_ceiling:
        return set_arg(argv, "--max-model-len", str(past_ceiling)), {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    return set_arg(argv, "--max-model-len", "auto"), {}


def run_budget(d: dict, out: Path, deadline: float, n_prompt: int, probe: str, tag: str = "") -> dict:
    res = {k: v for k, v in d.items() if k not in ("api_key", "env")}
    res["env"] = {k: ("<random per launch>" if k == "VLLM_API_KEY" else v) for k, v in d["env"].items()}
    root = d["base_url"].rstrip("/").removesuffix("/v1")
    env = {**d["env"], **VLLM_ENV}
    base_mib = gpu_used_mib()
    srv = Server(d["argv"], env, out / f"s{d['budget']}{tag}_plan.log")
    state = srv.wait_ready(root, d["api_key"], deadline - time.time() - 5)
    res.update(start=state, ready_s=srv.ready_s, gpu_used_mib=(gpu_used_mib() or 0) - (base_mib or 0),
               gpu_apps=gpu_apps(), log=kv_lines(srv.log))
    if state == "ready" and n_prompt > 0:
        from bench_client import measure
        n = min(n_prompt, d["plan_max_model_len"] - 400)
        try:
            res["bench"] = measure(root, d["api_key"], d["model_name"], n, 256, 152064)
            res["metrics"] = srv.metrics(root, d["api_key"])
        except Exception as exc:                       # keep the figures we have
            res["bench_error"] = f"{type(exc).__name__}: {exc}"
    srv.stop()
    if probe and time.time() < deadline - 60:
        past = None if probe == "auto" else int(probe)
        argv, extra = probe_argv(d["argv"], past)
        p = Server(argv, {**env, **extra}, out / f"s{d['budget']}{tag}_probe.log")
        until = "ready" if probe == "auto" and time.time() < deadline - 150 else "kv"
        st = p.wait_ready(root, d["api_key"], deadline - time.time() - 5, stop_at=until)
        res["probe"] = {"mode": probe, "state": st, "ready_s": p.ready_s, "log": kv_lines(p.log)}
        p.stop()
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="/tmp/model152")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/bench_out"))
    ap.add_argument("--budgets", default="24,16")
    ap.add_argument("--probe", default="24:past,16:auto", help="per budget: auto | past | none")
    ap.add_argument("--prompt", type=int, default=30000, help="0: no benchmark, start only")
    ap.add_argument("--emulate", default="", help="consumer: vLLM's batch defaults for a <70 GiB card")
    ap.add_argument("--tag", default="", help="suffix for the log names (a second run in one $OUT)")
    ap.add_argument("--seconds", type=float, default=540, help="stop starting new work after this")
    ap.add_argument("--dry", action="store_true", help="print the plans and argv only (no GPU)")
    ap.add_argument("--device-gib", type=float, default=139.80, help="--dry: the device's total")
    a = ap.parse_args()
    deadline = time.time() + a.seconds
    dev_total = int(a.device_gib * GiB) if a.dry else device_total_bytes()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    probes = dict(p.split(":") for p in a.probe.split(","))
    results = []
    for b in a.budgets.split(","):
        d = describe(b, a.model, dev_total, a.emulate)
        print(f"### {b} GB: {d['plan']}\n    util {d['plan_util']} → simulated {d['util_sim']} "
              f"({d['budget_gib']} GiB of {dev_total / GiB:.2f})\n    argv: {' '.join(d['argv'][1:])}", flush=True)
        if a.dry:
            results.append(d)
            continue
        probe = probes.get(b, "none")
        # past the ceiling: 1.25 × the planner's KV estimate, above what vLLM will find (the
        # block table grows with max_model_len, so not much more: it comes out of the KV budget)
        probe = {"none": "", "past": str(-(-d["plan_kv_tokens"] * 5 // 4 // 1024) * 1024)}.get(probe, probe)
        r = run_budget(d, out, deadline, a.prompt, probe, a.tag)
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k not in ("argv", "env")}, indent=1), flush=True)
    (out / f"results{a.tag}.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
