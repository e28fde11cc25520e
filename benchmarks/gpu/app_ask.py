"""`pagewise ask` on the GPU machine, as a user runs it, with what that machine lacks injected:

* --card NAME:MIB:CC:HELD_MIB  the probe's reading of the GPU replaced by this card (what the
  planner sees; the engine still runs on the real GPU, so its real use can be held against it);
  --card cpu: no GPU at all.
* --ngl N        the plan's n_gpu_layers replaced (all = -1, none = 0) to compare with the planner's.
* --old-util     the plan as before issue 14.6: vLLM takes the card class's utilisation (0.92).

Records (JSON, one line appended to --out): the plan, time from launch to ready, GPU memory
(device total above the idle baseline, and per process through NVML, peak over the run), the
answer's usage and timing (prompt and decode tokens/s), citations verified, the gauge's data as
the status bar shows it (NVML VRAM + the engine's /metrics KV use, sampled while the engine is up),
and the engine log's lines about layers, buffers and the KV cache.

usage (device, repo root): python3 benchmarks/gpu/app_ask.py --out $OUT/x.jsonl --tag T [--card ...]
                               [--ngl N] [--old-util] -- ask FILE -q Q --json [--model ID]
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import re
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.support.enginecore import descendants, enginecores  # noqa: E402  (one copy with the tests)
MiB = 1 << 20
LOG_LINES = re.compile(r"offload|model buffer|KV buffer|compute buffer|llama_kv_cache: size|"
                       r"Available KV cache memory|GPU KV cache size|Maximum concurrency|Model loading took|"
                       r"torch.compile took|Graph capturing finished|init engine|memory profiling|"
                       r"gpu_memory_utilization|Free memory|structured|guidance|Error|error", re.I)


def simulated_card(spec: str):
    from app.core.plan import hardware
    real_probe = hardware.probe

    def probe():
        real = real_probe()
        if spec == "cpu":
            return dataclasses.replace(real, gpus=(), nvml_error="no NVIDIA GPU (simulated)")
        name, mib, cc, held = spec.split(":")
        major, minor = (int(x) for x in cc.split("."))
        total, used = int(mib) * MiB, int(held) * MiB
        base = real.gpus[0] if real.gpus else None
        gpu = hardware.GpuInfo(0, name, total, total - used, used, (major, minor),
                               base.driver if base else "", base.cuda if base else "")
        return dataclasses.replace(real, gpus=(gpu,))
    hardware.probe = probe


def force_layers(n: int) -> None:
    from app.core.plan import planner
    real = planner.make_plan

    def make_plan(*a, **k):
        plan = real(*a, **k)
        if plan.engine == "llamacpp":
            plan = dataclasses.replace(plan, n_gpu_layers=n, reasons=plan.reasons + (f"n_gpu_layers forced to {n}",))
        return plan
    planner.make_plan = make_plan


def old_utilisation() -> None:
    from app.core.plan import fit
    fit.util_for_need = lambda *a, **k: 1.0      # never below the class cap: the pre-14.6 plan


class Sampler(threading.Thread):
    """NVML every 0.1 s: device memory above the baseline, per-process peaks; the gauge's data
    (NVML + the engine's /metrics) every 1 s (the status bar's rate) once the engine is up."""

    def __init__(self, record: dict):
        super().__init__(daemon=True)
        self.nv = self.h = None
        self.base = 0
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
            self.base = pynvml.nvmlDeviceGetMemoryInfo(self.h).used
        except Exception:  # noqa: BLE001 - no GPU here (a dry run): the gauge part still runs
            pass
        self.rec, self.runtime, self.stop_evt = record, None, threading.Event()
        self.peak_used, self.procs, self.gauge, self.last_gauge = 0, {}, None, 0.0

    def run(self):
        while not self.stop_evt.is_set():
            if self.nv is not None:
                used = self.nv.nvmlDeviceGetMemoryInfo(self.h).used
                self.peak_used = max(self.peak_used, used - self.base)
                try:
                    for p in self.nv.nvmlDeviceGetComputeRunningProcesses(self.h):
                        self.procs[p.pid] = max(self.procs.get(p.pid, 0), p.usedGpuMemory or 0)
                except self.nv.NVMLError:
                    pass
            if self.runtime is not None and time.time() - self.last_gauge > 1.0:
                self.last_gauge = time.time()
                self.read_gauge()
            time.sleep(0.1)

    def read_gauge(self):
        """What the status bar shows: per-GPU VRAM (NVML) and the engine's KV use (/metrics)."""
        from app.core.plan import hardware
        from app.worker.client import kv_cache_usage
        try:
            metrics = self.runtime.metrics() or {}
        except Exception as exc:  # noqa: BLE001 - a busy engine: keep the last reading
            metrics = {"error": str(exc)[:100]}
        gpus = hardware.gpu_readings()
        kv = kv_cache_usage({k: v for k, v in metrics.items() if isinstance(v, (int, float))})
        reading = {"t": round(time.time(), 2),
                   "vram": [{"gpu": g.index, "name": g.name, "used_mib": g.used_bytes // MiB,
                             "total_mib": g.total_bytes // MiB} for g in gpus],
                   "kv_usage": kv, "kv_cells": metrics.get("pagewise_kv_cache_used_cells"),
                   "metrics": {k: v for k, v in metrics.items() if "kv" in k or "cache" in k}}
        if self.gauge is None or (kv or 0) >= (self.gauge.get("kv_usage") or 0):
            self.gauge = reading



def _kill_enginecore(api_pid: int, after_s: float, record: dict) -> None:
    import os
    import signal
    time.sleep(after_s)
    for pid in enginecores(api_pid):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        os.kill(pid, signal.SIGKILL)
        record["killed"] = {"pid": pid, "comm": comm, "t": round(time.time(), 2)}
        return
    record["killed"] = {"error": "no EngineCore child found", "children": descendants(api_pid)}


def bare_and_kill(record: dict, bare: int, kill_after: float | None) -> None:
    """Wrap ChatClient.chat: each question's TTFT next to bare requests of the same prompt on the
    same server (the app's cost against vLLM's own), and optionally an EngineCore kill mid-answer."""
    import uuid

    from app.worker.client import ChatClient
    from app.worker.runtime import EngineRuntime
    real_chat = ChatClient.chat
    record["app_ttft"], record["bare_same"], record["bare_salted"] = [], [], []
    state = {"killed": False, "rt": None}
    real_start = EngineRuntime.start

    def start(self, *args, **kw):
        state["rt"] = self
        return real_start(self, *args, **kw)
    EngineRuntime.start = start

    def chat(self, messages, json_schema=None, max_tokens=512, **kw):
        question = json_schema is not None and max_tokens > 8
        if question and kill_after is not None and not state["killed"]:
            state["killed"] = True
            threading.Thread(target=_kill_enginecore, args=(state["rt"].engine.pid, kill_after, record),
                             daemon=True).start()
        res = real_chat(self, messages, json_schema=json_schema, max_tokens=max_tokens, **kw)
        if question and bare:
            record["app_ttft"].append(round(res.ttft_s, 4))
            same, salted = [], []
            for _ in range(bare):
                same.append(round(real_chat(self, messages, json_schema=json_schema, max_tokens=1).ttft_s, 4))
                first = dict(messages[0], content=f"[{uuid.uuid4().hex[:8]}] {messages[0]['content']}")
                salted.append(round(real_chat(self, [first] + messages[1:], json_schema=json_schema,
                                              max_tokens=1).ttft_s, 4))
            record["bare_same"].append(same)
            record["bare_salted"].append(salted)
        return res
    ChatClient.chat = chat


def _kill_engine(runtime, record: dict, when: str) -> None:
    """SIGKILL what a crash would take: vLLM's EngineCore (the API server's child), else our worker."""
    import os
    import signal
    pid = runtime.engine.pid
    if runtime.plan.engine.value == "vllm":
        cores = enginecores(pid)
        pid = cores[0] if cores else None
    entry = {"when": when, "pid": pid, "t": round(time.time(), 3)}
    if pid is None:
        entry["error"] = "no EngineCore child found"
    else:
        os.kill(pid, signal.SIGKILL)
    record.setdefault("kills", []).append(entry)


def kills(record: dict, first_token: bool, between: int | None, wait_back: float = 0.0) -> None:
    """The engine killed at the first token of the first question (--kill-first-token), and/or
    right after question N's answer, before N+1 is asked (--kill-between N); each question's
    start and end kept (record["asked"]), so kill → next answer is the time to recover, and the
    engine that answered it (record["answered_by"]: a llama.cpp stand-in while vLLM restarts).
    --wait-back S: after the first answer given by a stand-in, wait up to S seconds for vLLM to be
    ready again (record["comeback"]), so the next question shows the switch back."""
    from app.worker.client import ChatClient
    from app.worker.runtime import EngineRuntime
    real_chat, real_ask = ChatClient.chat, EngineRuntime.ask
    state = {"rt": None, "fired": False}
    record["asked"], record["answered_by"] = [], []

    def chat(self, messages, json_schema=None, max_tokens=512, on_delta=None, **kw):
        question = json_schema is not None and max_tokens > 8
        if question and first_token and not state["fired"]:
            state["fired"] = True

            def delta(text, _outer=on_delta, _done=[]):
                if not _done:
                    _done.append(1)
                    _kill_engine(state["rt"], record, "first token")
                if _outer:
                    _outer(text)
            return real_chat(self, messages, json_schema=json_schema, max_tokens=max_tokens, on_delta=delta, **kw)
        return real_chat(self, messages, json_schema=json_schema, max_tokens=max_tokens, on_delta=on_delta, **kw)

    def ask(self, *args, **kw):
        state["rt"] = self
        t0 = time.time()
        try:
            answer = real_ask(self, *args, **kw)
            record["answered_by"].append(getattr(answer.engine, "name", None))
            return answer
        finally:
            record["asked"].append([round(t0, 3), round(time.time(), 3)])
            if between is not None and len(record["asked"]) == between:
                _kill_engine(self, record, f"after question {between}")
                time.sleep(1.0)      # as a user would: the next question comes a moment later
            elif wait_back and "comeback" not in record and self.engine.behind_stand_in() is not None:
                began = time.time()
                ready = self.engine.wait_comeback(wait_back)
                record["comeback"] = {"ready": ready, "waited_s": round(time.time() - began, 1),
                                      "t": round(time.time(), 3)}
    ChatClient.chat, EngineRuntime.ask = chat, ask


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--card", default="")
    ap.add_argument("--ngl", type=int, default=None)
    ap.add_argument("--old-util", action="store_true")
    ap.add_argument("--bare", type=int, default=0,
                    help="after each question, N bare requests of the same prompt and schema (max_tokens 1) "
                         "on the same server: the same messages, and salted ones that miss the prefix cache")
    ap.add_argument("--kill-enginecore", type=float, default=None,
                    help="SIGKILL vLLM's EngineCore this many seconds into the first question")
    ap.add_argument("--kill-first-token", action="store_true",
                    help="SIGKILL the engine (vLLM: its EngineCore) at the first question's first token")
    ap.add_argument("--kill-between", type=int, default=None,
                    help="SIGKILL the engine (vLLM: its EngineCore) after question N is answered")
    ap.add_argument("--wait-back", type=float, default=0.0,
                    help="after a stand-in's first answer, wait up to this many seconds for vLLM to be back")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    argv = a.rest[1:] if a.rest[:1] == ["--"] else a.rest
    if a.card:
        simulated_card(a.card)
    if a.ngl is not None:
        force_layers(a.ngl)
    if a.old_util:
        old_utilisation()

    from app import cli
    from app.core import paths
    from app.worker.runtime import EngineRuntime

    record: dict = {"tag": a.tag, "card": a.card or "real", "ngl_forced": a.ngl, "old_util": a.old_util,
                    "argv": argv, "events": []}
    sampler = Sampler(record)
    t_launch: dict = {}
    real_status, real_start = EngineRuntime._status, EngineRuntime.start

    def status(self, state, detail):
        record["events"].append([round(time.time(), 2), state, detail[:300]])
        if state == "launching":
            t_launch["t"] = time.time()
        if state == "ready" and "t" in t_launch:
            record["ready_s"] = round(time.time() - t_launch["t"], 1)
        return real_status(self, state, detail)

    def start(self, *args, **kw):
        sampler.runtime = None
        real_start(self, *args, **kw)
        record["plan"] = {k: getattr(self.plan, k) for k in ("engine", "model_id", "gpu_memory_utilization",
                                                             "max_model_len", "n_gpu_layers", "kv_tokens")}
        record["plan"]["reasons"] = list(self.plan.reasons)
        spec = getattr(getattr(self.engine, "_supervisor", None), "spec", None)     # what was launched
        record["worker_argv"] = list(spec.argv)[2:] if spec else []
        sampler.runtime = self

    EngineRuntime._status, EngineRuntime.start = status, start
    if a.bare or a.kill_enginecore is not None:
        bare_and_kill(record, a.bare, a.kill_enginecore)
    if a.kill_first_token or a.kill_between is not None:
        kills(record, a.kill_first_token, a.kill_between, a.wait_back)
    sampler.start()
    out = io.StringIO()
    t0 = time.time()
    with contextlib.redirect_stdout(out):
        rc = cli.main(argv)
    sampler.stop_evt.set()
    sampler.join(timeout=2)
    record.update(rc=rc, wall_s=round(time.time() - t0, 1), gpu_peak_mib=sampler.peak_used // MiB,
                  gpu_procs_peak_mib={str(p): m // MiB for p, m in sampler.procs.items()},
                  gauge=sampler.gauge,
                  recoveries=getattr(getattr(sampler.runtime, "engine", None), "recoveries", None))
    text = out.getvalue()
    try:
        ans = json.loads(text)
    except ValueError:
        ans = {"raw": text[-2000:]}
    record["answer"] = ans
    t, u = ans.get("timing", {}), ans.get("usage", {})
    if t.get("ttft_s"):
        fresh = (u.get("prompt_tokens") or 0) - (u.get("cached_tokens") or 0)
        record["prompt_tok_s"] = round(fresh / t["ttft_s"], 1)
        gen_s = (t.get("total_s") or 0) - t["ttft_s"]
        if gen_s > 0 and u.get("completion_tokens"):
            record["gen_tok_s"] = round(u["completion_tokens"] / gen_s, 1)
    record["citations_verified"] = [c.get("verified") for c in ans.get("citations", [])]
    lines = []
    for log in sorted(paths.log_dir().glob("worker-*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if LOG_LINES.search(line) and line not in lines:
                lines.append(line[-300:])
    record["log"] = lines[-40:]
    if rc:      # a failed run: the worker logs' last lines as they are (the error's own words)
        record["log_tail"] = [line[-300:] for log in sorted(paths.log_dir().glob("worker-*.log"))
                              for line in log.read_text(errors="replace").splitlines()[-40:]]
    with open(a.out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    short = {k: record.get(k) for k in ("tag", "rc", "ready_s", "wall_s", "gpu_peak_mib", "gpu_procs_peak_mib",
                                        "prompt_tok_s", "gen_tok_s", "citations_verified")}
    short["plan"] = {k: v for k, v in (record.get("plan") or {}).items() if k != "reasons"}
    short["ttft_s"], short["usage"] = t.get("ttft_s"), u
    short["gauge"] = record["gauge"] and {k: record["gauge"][k] for k in ("vram", "kv_usage", "kv_cells")}
    short["error"] = ans.get("error")
    for key in ("app_ttft", "bare_same", "bare_salted", "killed", "kills", "asked", "answered_by", "comeback",
                "recoveries"):
        if key in record:
            short[key] = record[key]
    if isinstance(ans.get("answers"), list):
        short["answers"] = [{"ttft_s": x.get("timing", {}).get("ttft_s"), "warnings": x.get("warnings"),
                             "verified": [c.get("verified") for c in x.get("citations", [])],
                             "text": (x.get("answer") or "")[:160]} for x in ans["answers"]]
    elif ans.get("answer") is not None:
        short["text"], short["warnings"] = ans.get("answer", "")[:200], ans.get("warnings")
    print(json.dumps(short), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
