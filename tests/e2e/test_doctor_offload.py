"""`pagewise doctor` says whether the llama.cpp build in use can put layers on a GPU (issue 21):
the CPU build this machine has cannot, and doctor says so with what set-up does about it."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.cli import run_cli


def doctor(home: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_cli("doctor", *extra, home=home)


def test_doctor_says_the_cpu_build_cannot_offload(tmp_path):
    res = doctor(tmp_path, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["llama_gpu_offload"] is False
    res = doctor(tmp_path)
    line = next(x for x in res.stdout.splitlines() if x.startswith("llama.cpp GPU offload"))
    assert line.startswith("llama.cpp GPU offload: no") and "scripts/setup.sh" in line
