"""How to launch our llama.cpp worker (app.worker.llama, the child process) and how to read its failures."""
from __future__ import annotations

import re
import sys
from pathlib import Path

from app.core.plan.types import EngineName, Plan
from app.worker import engine_errors as errors
from app.worker import protocol
from app.worker.engines import base as rules
from app.worker.engines.base import EngineAdapter, FailureRule, LaunchOptions
from app.worker.launch import LaunchSpec
from app.worker.ports import PASSES_SOCKETS, bound_socket, free_port, random_key

# Lines that mean "still loading": our own progress lines and llama.cpp's loader output.
PROGRESS = (re.escape(protocol.LOG_PREFIX) + r" (loading|model loaded)", r"^llama_model_loader:", r"^load_tensors:",
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


def _rule(rx: re.Pattern, make) -> FailureRule:
    return FailureRule(rx, lambda line, _m, _lines: make(line))


# Most specific first: the first rule that matches the output tail names the failure.
RULES = (
    _rule(_PORT, lambda line: errors.PortInUse(f"the llama.cpp worker could not listen: {line}")),
    _rule(_MISSING, lambda line: errors.ModelFileMissing(f"model file missing: {line.split(': ', 1)[-1]}")),
    _rule(_OOM, lambda line: errors.OutOfMemory(f"out of memory while loading the model: {line}")),
    _rule(_GPU, lambda line: errors.UnsupportedGpu(f"GPU not usable by llama.cpp: {line}")),
    _rule(_CTX, lambda line: errors.KvCacheTooSmall(f"context too large: {line}")),
    _rule(_LOAD, lambda line: errors.ModelLoadFailed(f"llama.cpp cannot read the model: {line}")),
)


def classify(lines: list[str]) -> errors.StartError | None:
    """Map the output tail to a typed error (RULES, most specific first)."""
    return rules.classify(RULES, lines)


def worker_command() -> list[str]:
    """How to start our worker: `python -m app.worker.llama` from a source tree or venv;
    inside a frozen bundle (PyInstaller) there is no `-m`: the bundle's own program is started with
    `--worker`, which app/__main__.py hands to app.worker.llama.server.main."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--worker"]
    return [sys.executable, "-m", protocol.MODULE]


def worker_cwd() -> Path:
    """The source tree (so `-m app…` imports this checkout), or the bundle's folder when frozen."""
    if getattr(sys, "frozen", False):
        return Path(sys.executable).resolve().parent
    return Path(__file__).resolve().parents[3]


def launch_spec(model_path: Path, n_ctx: int, n_gpu_layers: int = 0, threads: int | None = None,
                kv_dir: Path | None = None, model_name: str = "local", host: str = "127.0.0.1",
                kv_store: bool = True, kv_max_gb: float | None = None, ready_timeout_s: float = 300, stall_timeout_s: float = 60,
                calibrate_tokens: int = 0) -> LaunchSpec:
    """A fresh port and key per launch. The key travels in the environment, not argv (`ps` shows argv).
    The port is bound here and the socket handed to the child (its fd number in argv): another
    account never finds it free between our choice and the child's bind."""
    key, sock = random_key(), None
    if PASSES_SOCKETS:
        sock = bound_socket(host)
        port, where_to_listen = sock.getsockname()[1], ["--listen-fd", str(sock.fileno())]
    else:
        port = free_port(host)
        where_to_listen = ["--port", str(port)]
    argv = worker_command() + ["--model", str(Path(model_path).resolve()), "--host", host, *where_to_listen,
                               "--n-ctx", str(n_ctx), "--n-gpu-layers", str(n_gpu_layers),
                               "--model-name", model_name]
    from app.core.settings import usable_threads      # --threads 1000 on 2 cores: clamped, said so
    if threads := usable_threads(threads):
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
    return LaunchSpec(argv=argv, env={protocol.KEY_ENV: key}, base_url=f"http://{host}:{port}/v1",
                      api_key=key, model_name=model_name, engine="llamacpp", progress_patterns=PROGRESS,
                      classify=classify, ready_timeout_s=ready_timeout_s, stall_timeout_s=stall_timeout_s,
                      cwd=worker_cwd(),
                      description=f"llama.cpp, {where}, {n_ctx // 1024}K context",
                      extra={"n_ctx": n_ctx, "n_gpu_layers": n_gpu_layers, "port": port},
                      listen_socket=sock, check_listener=sock is None)


class LlamaCppAdapter(EngineAdapter):
    """Our llama.cpp worker: streams its reading, keeps KV state on disk, measures itself at start."""
    name = EngineName.LLAMACPP
    streams_reading = True
    cuts_passages = True
    restores_kv = True
    measures_at_start = True

    def launch_spec(self, plan: Plan, model_path: Path, options: LaunchOptions) -> LaunchSpec:
        return launch_spec(model_path, n_ctx=plan.max_model_len, n_gpu_layers=plan.n_gpu_layers,
                           model_name=plan.model_id, threads=options.threads,
                           calibrate_tokens=options.calibrate_tokens)

    def repeat_penalty(self, catalogue_penalty: float) -> float:
        return catalogue_penalty

    def speed_key(self, plan: Plan, threads: int | None) -> str:
        return f"{plan.model_id}@llamacpp/t{threads or 'auto'}/gpu{plan.n_gpu_layers}"

    def on_gpu(self, plan: Plan) -> bool:
        return bool(plan.n_gpu_layers)
