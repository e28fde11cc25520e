"""How to launch our llama.cpp worker (app.worker.llama_server) and how to read its failures."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from app.worker import errors
from app.worker.launch import LaunchSpec
from app.worker.ports import free_port, random_key

# Lines that mean "still loading": our own progress lines and llama.cpp's loader output.
PROGRESS = (r"pagewise-worker: (loading|model loaded)", r"^llama_model_loader:", r"^load_tensors:",
            r"^llama_context:", r"^llama_kv_cache", r"^print_info:")

_OOM = re.compile(r"failed to allocate|cudaMalloc failed|out of memory|ggml_backend_\w*buffer\w*.*(failed|alloc)"
                  r"|unable to allocate|std::bad_alloc|MemoryError|cannot allocate memory", re.I)
_MISSING = re.compile(r"model file not found|Model path does not exist|No such file or directory", re.I)
_LOAD = re.compile(r"failed to load model|error loading model|invalid magic|unknown model architecture"
                   r"|failed to read|unsupported model", re.I)
_GPU = re.compile(r"no CUDA-capable device|CUDA driver version is insufficient|unsupported gpu architecture"
                  r"|no kernel image is available", re.I)
_PORT = re.compile(r"cannot listen on .*(in use|Address already)", re.I)
_CTX = re.compile(r"n_ctx.*(too large|exceeds)|context size .* too (large|big)", re.I)


def classify(lines: list[str]) -> errors.StartError | None:
    """Map the output tail to a typed error; the first matching rule wins (most specific first)."""
    text = "\n".join(lines)

    def last(rx: re.Pattern) -> str:
        return next(line.strip() for line in reversed(lines) if rx.search(line))[:300]

    if _PORT.search(text):
        return errors.PortInUse(f"the llama.cpp worker could not listen: {last(_PORT)}")
    if _MISSING.search(text):
        return errors.ModelFileMissing(f"model file missing: {last(_MISSING).split(': ', 1)[-1]}")
    if _OOM.search(text):
        return errors.OutOfMemory(f"out of memory while loading the model: {last(_OOM)}")
    if _GPU.search(text):
        return errors.UnsupportedGpu(f"GPU not usable by llama.cpp: {last(_GPU)}")
    if _CTX.search(text):
        return errors.KvCacheTooSmall(f"context too large: {last(_CTX)}")
    if _LOAD.search(text):
        return errors.ModelLoadFailed(f"llama.cpp cannot read the model: {last(_LOAD)}")
    return None


def worker_command() -> list[str]:
    """How to start our worker: `python -m app.worker.llama_server` from a source tree or venv;
    inside a frozen bundle (PyInstaller) there is no `-m`: the bundle's own program is started with
    `--worker`, which app/__main__.py hands to llama_server.main."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--worker"]
    return [sys.executable, "-m", "app.worker.llama"]


def worker_cwd() -> Path:
    """The source tree (so `-m app…` imports this checkout), or the bundle's folder when frozen."""
    if getattr(sys, "frozen", False):
        return Path(sys.executable).resolve().parent
    return Path(__file__).resolve().parents[3]


def launch_spec(model_path: Path, n_ctx: int, n_gpu_layers: int = 0, threads: int | None = None,
                kv_dir: Path | None = None, model_name: str = "local", host: str = "127.0.0.1",
                kv_store: bool = True, kv_max_gb: float | None = None, ready_timeout_s: float = 300, stall_timeout_s: float = 60,
                calibrate_tokens: int = 0) -> LaunchSpec:
    """A fresh port and key per launch. The key travels in the environment, not argv (`ps` shows argv)."""
    port, key = free_port(host), random_key()
    argv = worker_command() + ["--model", str(Path(model_path).resolve()), "--host", host,
                               "--port", str(port), "--n-ctx", str(n_ctx), "--n-gpu-layers", str(n_gpu_layers),
                               "--model-name", model_name]
    if threads:
        argv += ["--threads", str(threads)]
    if kv_dir:
        argv += ["--kv-dir", str(Path(kv_dir).resolve())]
    if kv_max_gb is not None:
        argv += ["--kv-max-gb", str(kv_max_gb)]
    if not kv_store:
        argv += ["--no-kv-store"]
    if calibrate_tokens:          # measure prefill speed once, before any KV state is restored
        argv += ["--calibrate-tokens", str(calibrate_tokens)]
    where = "CPU" if n_gpu_layers == 0 else f"{n_gpu_layers} layers on GPU"
    return LaunchSpec(argv=argv, env={"PAGEWISE_WORKER_KEY": key}, base_url=f"http://{host}:{port}/v1",
                      api_key=key, model_name=model_name, engine="llamacpp", progress_patterns=PROGRESS,
                      classify=classify, ready_timeout_s=ready_timeout_s, stall_timeout_s=stall_timeout_s,
                      cwd=worker_cwd(),
                      description=f"llama.cpp, {where}, {n_ctx // 1024}K context",
                      extra={"n_ctx": n_ctx, "n_gpu_layers": n_gpu_layers, "port": port})
