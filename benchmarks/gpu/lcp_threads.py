"""Which of the worker's habits crashes llama.cpp's CUDA backend? (issue 30: the worker died at its
first llama_decode on the request thread, `ggml-cuda.cu:109: CUDA error`, with the embedded SmolLM2
model; the 7B-geometry file, through the same worker, did not.) Each case runs in its own process,
so a crash ends only that case; llama.cpp's own error lines (`CUDA error: …`, `current device …`)
are printed and each case's whole stderr is written to OUT/lcp_<case>.txt.

    python3 benchmarks/gpu/lcp_threads.py MODEL.gguf [--n-ctx 8192] [--ngl -1] [--out DIR]

Loading mirrors app/worker/llama/server.py (verbose load, threads = cores). A "short" request is
the old probe (384 + 200 tokens); a "long" one reads a ~2,600-token prompt in the worker's slices
(64, then 128) and decodes 8 tokens, as a question over the sample PDF does. Cases vary one thing:
the thread each step runs on, CUDA graphs, op offload, flash attention, the context size, and one
whole-prompt eval (llama-cpp-python's own 512-token batches).
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

LONG = 2600
# name: (env, threaded, prompt, extra Llama kwargs, n_ctx override, whole-prompt eval)
CASES = {
    "main_short": ({}, False, "short", {}, None, False),
    "threads_short": ({}, True, "short", {}, None, False),
    "main_long": ({}, False, "long", {}, None, False),
    "threads_long": ({}, True, "long", {}, None, False),
    "long_no_graphs": ({"GGML_CUDA_DISABLE_GRAPHS": "1"}, False, "long", {}, None, False),
    "long_no_op_offload": ({}, False, "long", {"op_offload": False}, None, False),
    "long_flash_attn": ({}, False, "long", {"flash_attn": True}, None, False),
    "long_ctx4096": ({}, False, "long", {}, 4096, False),
    "long_whole_eval": ({}, False, "long", {}, None, True),
    "long_blocking": ({"CUDA_LAUNCH_BLOCKING": "1"}, False, "long", {}, None, False),
}


def run_case(model: str, n_ctx: int, ngl: int, name: str) -> None:
    import llama_cpp
    _env, threaded, prompt, extra, ctx_override, whole = CASES[name]
    cores = os.cpu_count() or 1
    llm = llama_cpp.Llama(model, n_ctx=ctx_override or n_ctx, n_gpu_layers=ngl, n_threads=cores,
                          n_threads_batch=cores, verbose=True, **extra)
    llm.verbose = False
    text = b"The parties agree that the terms of this agreement apply to every order placed under it. "
    filler = llm.tokenize(text * 200, add_bos=True)
    size = 384 if prompt == "short" else LONG

    def calibrate():
        llm.n_tokens = 0
        llm.eval(filler[:32])
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = 0
        for start in range(0, 384, 128):
            llm.eval(filler[start:start + 128])
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = 0

    def request():
        tokens = filler[:size if prompt == "long" else 200]
        if whole:
            llm.eval(tokens)
        else:
            start, step = 0, 64
            while start < len(tokens):
                llm.eval(tokens[start:start + step])
                start, step = start + step, 128
                print(f"at {start}", file=sys.stderr, flush=True)
        for _ in range(8):
            token = llm.sample(temp=0.0)
            llm.eval([token])
    for step in (calibrate, request):
        if threaded:
            t = threading.Thread(target=step)
            t.start()
            t.join()
        else:
            step()
    print("ok", flush=True)


def main() -> None:
    if sys.argv[1] == "--case":
        _, _, model, n_ctx, ngl, name = sys.argv
        return run_case(model, int(n_ctx), int(ngl), name)
    model = sys.argv[1]
    arg = lambda flag, default: sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default  # noqa: E731
    n_ctx, ngl, out = int(arg("--n-ctx", 8192)), int(arg("--ngl", -1)), arg("--out", "")
    only = arg("--cases", "")
    for name, (env, *_rest) in CASES.items():
        if only and name not in only.split(","):
            continue
        try:
            proc = subprocess.run([sys.executable, __file__, "--case", model, str(n_ctx), str(ngl), name],
                                  capture_output=True, text=True, env={**os.environ, **env}, timeout=90)
            rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc, stdout, stderr = "timeout", str(exc.stdout or ""), str(exc.stderr or "")
        if out:
            with open(os.path.join(out, f"lcp_{name}.txt"), "w") as f:
                f.write(stderr)
        said = [line.strip() for line in stderr.splitlines()
                if "CUDA error" in line or "current device" in line or "ggml-cuda.cu" in line
                or line.startswith("  ") and "err" in line.lower()][:4]
        reached = [line for line in stderr.splitlines() if line.startswith("at ")][-1:]
        print(f"{name}: exit {rc} {stdout.strip()[-20:]} {reached} {said}", flush=True)


if __name__ == "__main__":
    main()
