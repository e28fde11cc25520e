"""One adapter per engine (llama.cpp, vLLM, remote): everything the Engine needs to know of one."""
from __future__ import annotations

import functools

from app.core.plan.types import EngineName


@functools.cache          # adapters hold no state: one each, asked on every question
def adapter_for(name: EngineName):
    """The adapter of a plan's engine (imported on demand: vLLM's module is only for GPU plans)."""
    from app.worker.engines.llamacpp import LlamaCppAdapter
    from app.worker.engines.remote import RemoteAdapter
    from app.worker.engines.vllm import VllmAdapter
    adapters = {EngineName.LLAMACPP: LlamaCppAdapter, EngineName.VLLM: VllmAdapter,
                EngineName.REMOTE: RemoteAdapter}
    return adapters[EngineName(name)]()
