"""Storage faults with real processes and real file systems (issue 15, point 10): two processes
creating one library at once, a full disk (a tiny tmpfs), a read-only logs folder (the KV cache's faults:
tests/worker/test_kv_storage_faults.py). Read-only folders are read-only mounts in a private mount namespace when
we are root (root ignores permission bits), and chmod 0500 otherwise."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import app_argv
from tests.support.mounts import CAN_MOUNT, in_namespace, read_only

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"


def env_for(home: Path) -> dict:
    return {**os.environ, "PAGEWISE_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    return lines[0]


# --- two processes creating one library ---------------------------------------------------------
_OPENER = """
import sys, time
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from app.core.library import schema
start = float(sys.argv[2])
while time.time() < start:
    pass
con = schema.connect(Path(sys.argv[1]))
print(con.execute("PRAGMA user_version").fetchone()[0])
"""


def test_processes_opening_a_new_library_at_once_all_succeed(tmp_path):
    """Before: the loser read version 0 before the lock and failed 'table documents already exists'."""
    from app.core.library.schema import MIGRATIONS
    rounds, per_round, failures = 6, 5, []
    for r in range(rounds):
        path = tmp_path / f"round{r}" / "library.sqlite"
        start = time.time() + 1.5                     # every process is imported and waiting by then
        procs = [subprocess.Popen([sys.executable, "-c", _OPENER, str(path), str(start), str(ROOT)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(per_round)]
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            if proc.returncode != 0 or out.strip() != str(len(MIGRATIONS)):
                failures.append(err.strip().splitlines()[-1] if err.strip() else out)
    assert failures == [], f"{len(failures)} of {rounds * per_round} opens failed: {failures[:3]}"


# --- a full disk --------------------------------------------------------------------------------
@pytest.mark.skipif(not CAN_MOUNT, reason="needs root and mount namespaces for a tiny tmpfs")
@pytest.mark.parametrize("size", ["96k", "160k"])     # full while migrating / while adding the document
def test_disk_full_is_one_line_with_its_cause(tmp_path, size):
    """Before: 'cannot rollback - no transaction is active' (the cause only in the log)."""
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    res = in_namespace([f"mount -t tmpfs -o size={size} tmpfs '{home / 'data'}'"],
                       app_argv("index", str(SAMPLE), "--no-dense"), env=env_for(home), cwd=ROOT, timeout=300)
    assert res.returncode == 1
    line = one_line(res.stderr)
    assert "disk is full" in line and "library.sqlite" in line, line


# --- a read-only logs folder --------------------------------------------------------------------
def test_read_only_logs_folder_one_warning_and_the_command_works(tmp_path):
    """Before: a 16-line traceback and exit 1."""
    home = tmp_path / "home"
    res = read_only(home / "logs", app_argv("index", str(SAMPLE), "--no-dense", "--json"),
                    env=env_for(home), cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "cannot write the log" in one_line(res.stderr)
    assert json.loads(res.stdout)


@pytest.mark.slow
def test_read_only_logs_folder_engine_still_starts(tmp_path):
    """The worker's log is unwritable too: the engine starts and answers all the same."""
    home = tmp_path / "home"
    assert subprocess.run(app_argv("index", str(SAMPLE), "--no-dense"), env=env_for(home), cwd=ROOT,
                          capture_output=True).returncode == 0
    res = read_only(home / "logs", app_argv("ask", str(SAMPLE), "-q", "Who are the parties?", "--json",
                                                 "--mode", "retrieval"),     # PASSIVE: a busy CI machine
                    env={**env_for(home), "OMP_WAIT_POLICY": "PASSIVE"}, cwd=ROOT, timeout=900)
    assert res.returncode == 0, res.stderr
    assert "cannot write the log" in one_line(res.stderr)
    assert json.loads(res.stdout)["answer"]


