"""`pagewise doctor`: this machine's hardware, the engines available, the plan a start would use."""
from __future__ import annotations

import sys


def run(args):
    from app.core.models import catalogue as models
    from app.core.plan import hardware, planner
    hw = hardware.probe()
    cat = models.load_catalogue()
    chosen = planner.make_plan(hw, cat, available=models.is_available)
    # what a start will do with what worked (or failed) here before: doctor shows that plan
    from app.core.plan.plan_history import PlanHistory
    history = PlanHistory().decide(chosen, hw, cat)
    chosen = history.plan
    engines = _engines_available()
    data = {"hardware": hardware.to_dict(hw) if hasattr(hardware, "to_dict") else hardware.describe(hw),
            "engines": engines, "plan": planner.to_dict(chosen),
            "models": [{"id": m.id, "available": models.is_available(m)} for m in cat.models]}
    data["history"] = history.to_dict()
    offload = _llama_gpu_offload() if engines.get("llama.cpp") else None
    data["llama_gpu_offload"] = offload
    human = "\n".join([f"hardware: {hardware.describe(hw)}",
                       "engines: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in engines.items()),
                       *([_offload_line(offload, chosen)] if offload is not None else []),
                       f"plan: {planner.explain(chosen)}",
                       *[f"  - {r}" for r in chosen.reasons if r != history.line],
                       *([history.line] if history.line else [])])
    return data, human


def _llama_gpu_offload() -> bool | None:
    """Can the llama.cpp build in use put layers on a GPU? Asked in a child: loading a CUDA
    build initialises the driver, which doctor's own process need not do. None: unknown."""
    import subprocess
    code = "import llama_cpp; print(bool(llama_cpp.llama_supports_gpu_offload()))"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    last = (out.stdout.strip().splitlines() or [""])[-1]
    return {"True": True, "False": False}.get(last)


def _offload_line(offload: bool, plan) -> str:
    from app.core.plan.types import EngineName
    if offload:
        return "llama.cpp GPU offload: yes (this build can put layers on the GPU)"
    line = "llama.cpp GPU offload: no (a CPU-only build"
    if plan.engine is EngineName.LLAMACPP and plan.n_gpu_layers:
        line += "; the plan's GPU layers will run on the CPU"
    return line + "; scripts/setup.sh builds it with CUDA where the CUDA toolkit's nvcc is found)"


def _engines_available() -> dict:
    import importlib.util

    from app.worker.engines import vllm as vllm_engine
    return {"llama.cpp": importlib.util.find_spec("llama_cpp") is not None,
            "vllm": vllm_engine.available() if hasattr(vllm_engine, "available") else False}
