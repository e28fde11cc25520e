"""Which of the worker's habits crashes llama.cpp's CUDA backend? (issue 30: the worker died at its
first llama_decode on the request thread, `ggml-cuda.cu:109: CUDA error`; the recipe's direct runs of
the same model and build, all on the main thread, worked.) Each case runs in its own process, so a
crash ends only that case; its last stderr lines (ggml's `CUDA error: …`) are printed.

    python3 benchmarks/gpu/lcp_threads.py MODEL.gguf [--n-ctx 8192] [--ngl -1]

cases: main (load, calibrate-like eval and a request-like eval on the main thread), threads (load on
main, the calibration eval on one thread, the request eval on another, as the worker does), and
threads with GGML_CUDA_DISABLE_GRAPHS=1.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading

CASES = {"main": ({}, False), "threads": ({}, True), "threads_no_graphs": ({"GGML_CUDA_DISABLE_GRAPHS": "1"}, True)}


def run_case(model: str, n_ctx: int, ngl: int, threaded: bool) -> None:
    import llama_cpp
    llm = llama_cpp.Llama(model, n_ctx=n_ctx, n_gpu_layers=ngl, verbose=False)
    filler = llm.tokenize(b"The parties agree that the terms apply to every order. " * 40, add_bos=True)[:384]

    def calibrate():
        llm.n_tokens = 0
        for start in range(0, len(filler), 128):
            llm.eval(filler[start:start + 128])
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = 0

    def request():
        llm.eval(filler[:200])
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
        _, _, model, n_ctx, ngl, threaded = sys.argv
        return run_case(model, int(n_ctx), int(ngl), threaded == "1")
    model = sys.argv[1]
    n_ctx = int(sys.argv[sys.argv.index("--n-ctx") + 1]) if "--n-ctx" in sys.argv else 8192
    ngl = int(sys.argv[sys.argv.index("--ngl") + 1]) if "--ngl" in sys.argv else -1
    for name, (env, threaded) in CASES.items():
        proc = subprocess.run([sys.executable, __file__, "--case", model, str(n_ctx), str(ngl), str(int(threaded))],
                              capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
        said = [line for line in proc.stderr.splitlines() if "error" in line.lower() or "device" in line][:4]
        print(f"{name}: exit {proc.returncode} {proc.stdout.strip()[-20:]} {said}", flush=True)


if __name__ == "__main__":
    main()
