"""`pagewise doctor` applies the plan history and says so, as a user runs it: a real subprocess
with its own PAGEWISE_HOME. The RTX 4090 this machine lacks is injected into that process by a
sitecustomize that answers pynvml's calls (as tests/core/test_hardware.py does in-process); the
AWQ models are "downloaded" as placeholder files (doctor only checks that they are there)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.core.models import catalogue as models
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware
from app.core.plan.plan_history import PlanHistory
from tests.support.cli import run_process

ROOT = Path(__file__).resolve().parents[2]
MiB, GiB = 1 << 20, 1 << 30
TOTAL_MIB = 24564
FAKE_NVML = """import types
import pynvml
_used = {used_mib} * (1 << 20)
_total = {total_mib} * (1 << 20)
pynvml.nvmlInit = lambda: None
pynvml.nvmlShutdown = lambda: None
pynvml.nvmlDeviceGetCount = lambda: 1
pynvml.nvmlDeviceGetHandleByIndex = lambda i: i
pynvml.nvmlDeviceGetName = lambda h: "NVIDIA GeForce RTX 4090"
pynvml.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=_total, used=_used, free=_total - _used)
pynvml.nvmlDeviceGetCudaComputeCapability = lambda h: (8, 9)
pynvml.nvmlSystemGetDriverVersion = lambda: "550.54.14"
pynvml.nvmlSystemGetCudaDriverVersion = lambda: 12040
"""


def rtx4090(used_gib: float) -> Hardware:
    used = int(used_gib * GiB)
    return Hardware((GpuInfo(0, "NVIDIA GeForce RTX 4090", TOTAL_MIB * MiB, TOTAL_MIB * MiB - used, used, (8, 9)),),
                    64 * GiB, 58 * GiB, 16, ("avx2",))


def doctor(home: Path, tmp_path: Path, used_gib: float) -> dict:
    site = tmp_path / "fake-nvml"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(FAKE_NVML.format(used_mib=int(used_gib * 1024), total_mib=TOTAL_MIB))
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    res = run_process("doctor", "--json", home=home, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    human = run_process("doctor", home=home, env=env, timeout=120)
    assert human.returncode == 0, human.stderr
    return {**json.loads(res.stdout), "human": human.stdout}


@pytest.fixture
def awq_downloaded(pagewise_home):
    cat = models.load_catalogue()
    for spec in cat.models:
        if spec.format == "awq":
            folder = models.model_dir(spec)
            folder.mkdir(parents=True, exist_ok=True)
            for name in spec.files:
                (folder / name).write_bytes(b"")
    return cat


def test_doctor_says_it_will_try_higher_because_the_card_is_free_again(pagewise_home, tmp_path, awq_downloaded):
    cat = awq_downloaded
    busy, free = rtx4090(9.0), rtx4090(0.3)
    planned = P.make_plan(free, cat, available=models.is_available)
    worked = P.make_plan(busy, cat, available=models.is_available)      # the squeeze: a lower plan started
    PlanHistory().record(busy, planned.model_id, worked, free_bytes=busy.gpus[0].free_bytes)
    out = doctor(pagewise_home, tmp_path, used_gib=0.3)
    assert out["hardware"]["gpus"][0]["name"] == "NVIDIA GeForce RTX 4090"
    assert out["history"]["action"] == "reprobe"
    assert out["plan"]["gpu_memory_utilization"] == pytest.approx(0.92)
    line = out["history"]["line"]
    assert line.startswith(f"history: last start here used {worked.model_id} {worked.gpu_memory_utilization:.2f} / ")
    assert line.endswith("will try 0.92 first because 24 GiB are free (only 15 GiB were then)")
    assert line in out["human"].splitlines()


def test_doctor_shows_the_remembered_plan_a_start_would_use(pagewise_home, tmp_path, awq_downloaded):
    """Before, doctor planned without the history and showed 56K where a start would use 40K."""
    cat = awq_downloaded
    hw = rtx4090(0.3)
    planned = P.make_plan(hw, cat, available=models.is_available)
    worked = P.next_rung(planned, "kv_too_small:41234", hw, cat)
    PlanHistory().record(hw, planned.model_id, worked, limit=worked.max_model_len)
    out = doctor(pagewise_home, tmp_path, used_gib=0.3)
    assert out["history"]["action"] == "remembered"
    assert out["plan"]["max_model_len"] == 40 * 1024 < planned.max_model_len
    assert "remembered: starting there" in out["history"]["line"]
    assert out["history"]["line"] in out["human"].splitlines()


def test_doctor_without_history_says_nothing_about_it(pagewise_home, tmp_path):
    out = doctor(pagewise_home, tmp_path, used_gib=0.3)
    assert out["history"] == {"action": "none", "line": ""}
    assert "history:" not in out["human"]
