"""The plan's types and the planner's constants: a leaf every plan module imports (no cycles)."""
from __future__ import annotations

import enum
from dataclasses import dataclass

MIN_VLLM_CONTEXT = 8192       # below this a vLLM start is not worth it: llama.cpp instead
MIN_LLAMA_CONTEXT = 2048
DEFAULT_TARGET = 32768        # context wanted when the document is not known yet (~100 pages)
NEED_FLOOR = 8192             # a document's cap still leaves room for follow-up questions
VLLM_MIN_CC = (7, 5)          # vLLM's AWQ kernels need compute capability 7.5 (AWQConfig: 75)
FP8_KV_MIN_CC = (8, 9)        # fp8 (e4m3) KV cache: Triton needs sm89+, FlashAttention-3 sm90
CPU_PARAMS_PER_CORE = 0.5     # billions of parameters per core that still read a page in seconds


class EngineName(str, enum.Enum):
    """The engines a plan can name. Compared as members (`plan.engine is EngineName.VLLM`), never as
    strings; a str underneath, so settings, JSON and the plan history read and write "vllm" as before."""
    VLLM = "vllm"
    LLAMACPP = "llamacpp"
    REMOTE = "remote"

    __str__ = str.__str__
    __format__ = str.__format__

    @property
    def label(self) -> str:
        """The engine's own spelling, as users know it."""
        return ENGINE_NAMES[self.value]


@dataclass(frozen=True)
class RemoteEndpoint:
    base_url: str
    model: str
    context: int = 32768


@dataclass(frozen=True, kw_only=True)
class Plan:
    """Built with keywords only: 19 fields are too many to pass by position."""
    engine: EngineName                   # a plain "vllm" string is turned into the member
    model_id: str
    weights_format: str                  # "awq" | "gguf" | "remote"
    gpu_memory_utilization: float | None = None   # vLLM only
    max_model_len: int
    n_gpu_layers: int = 0                # llama.cpp: -1 all, 0 CPU
    kv_cache_dtype: str = "auto"         # "auto" | "fp8"
    tensor_parallel: int = 1
    enforce_eager: bool = False
    enable_prefix_caching: bool = True
    enable_chunked_prefill: bool = True
    reasons: tuple[str, ...] = ()
    rung: int = 0
    yarn_factor: float = 1.0             # >1: rope scaling (YaRN) beyond the native context
    devices: tuple[int, ...] = ()        # GPU indices (CUDA_VISIBLE_DEVICES)
    kv_tokens: int = 0                   # tokens the planner expects the KV cache to hold
    hardware: str = ""                   # "24 GB RTX 4090"
    note: str = ""                       # "128K would need 38 GB"
    need_tokens: int = 0                 # the document's need it was capped by (0: unknown)
    base_url: str = ""                   # remote only

    def __post_init__(self):
        object.__setattr__(self, "engine", EngineName(self.engine))


ENGINE_NAMES = {"vllm": "vLLM", "llamacpp": "llama.cpp", "remote": "remote"}
