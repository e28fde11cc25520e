"""Storage faults with real processes and real file systems (issue 15, point 10): two processes
creating one library at once, a full disk (a tiny tmpfs), a read-only logs folder, an unwritable
and a corrupt KV cache. Read-only folders are read-only mounts in a private mount namespace when
we are root (root ignores permission bits), and chmod 0500 otherwise."""
from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import app_argv

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _can_mount() -> bool:
    if not IS_ROOT or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "tmpfs", "/mnt"], capture_output=True).returncode == 0


CAN_MOUNT = _can_mount()


def in_namespace(mounts: list[str], argv: list[str], **kw) -> subprocess.CompletedProcess:
    """Run argv after `mounts` (shell lines) in a private mount namespace: nothing outside sees them."""
    script = " && ".join([*mounts, 'exec "$@"'])
    return subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", *argv], capture_output=True, text=True, **kw)


def read_only(folder: Path, argv: list[str], **kw) -> subprocess.CompletedProcess:
    """argv run while `folder` cannot be written to (by root either)."""
    folder.mkdir(parents=True, exist_ok=True)
    if CAN_MOUNT:
        return in_namespace([f"mount --bind '{folder}' '{folder}'", f"mount -o remount,bind,ro '{folder}'"], argv, **kw)
    if IS_ROOT:
        pytest.skip("root without mount namespaces: cannot make a folder read-only to root")
    os.chmod(folder, 0o500)
    try:
        return subprocess.run(argv, capture_output=True, text=True, **kw)
    finally:
        os.chmod(folder, 0o700)


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


# --- the KV cache -------------------------------------------------------------------------------
def _model() -> Path:
    from app.core.models.catalogue import load_catalogue, local_path
    return local_path(load_catalogue().default)


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Worker:
    """Our llama.cpp worker as its own process (optionally with a read-only KV folder)."""

    def __init__(self, kv_dir: Path, read_only_kv: bool = False):
        self.port, self.key = _free_port(), "k" * 32
        argv = [sys.executable, "-m", "app.worker.llama", "--model", str(_model()), "--port", str(self.port),
                "--api-key", self.key, "--n-ctx", "2048", "--threads", "1", "--kv-dir", str(kv_dir)]
        self.log = kv_dir.parent / f"worker-{self.port}.log"
        out = open(self.log, "w")
        if read_only_kv and CAN_MOUNT:
            kv_dir.mkdir(parents=True, exist_ok=True)
            argv = ["unshare", "-m", "sh", "-c", f"mount --bind '{kv_dir}' '{kv_dir}' && "
                    f"mount -o remount,bind,ro '{kv_dir}' && exec \"$@\"", "sh", *argv]
        elif read_only_kv:
            if IS_ROOT:
                pytest.skip("root without mount namespaces: cannot make a folder read-only to root")
            kv_dir.mkdir(parents=True, exist_ok=True)
            os.chmod(kv_dir, 0o500)
        self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker exited {self.proc.returncode}: {self.log.read_text()[-1500:]}")
            try:
                if self.request("GET", "/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("worker did not start")

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            conn.request(method, path, json.dumps(body) if body else None,
                         {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"{}")
        finally:
            conn.close()

    def ask(self, document: str) -> dict:
        status, reply = self.request("POST", "/v1/chat/completions", {
            "messages": [{"role": "user", "content": document + "\n\nWho are the parties?"}], "max_tokens": 4})
        assert status == 200, reply
        return reply["usage"]

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def document() -> str:
    import pymupdf
    with pymupdf.open(SAMPLE) as doc:
        return "\n".join(page.get_text() for page in doc)[:3500]      # ~800 tokens: worth a KV entry


@pytest.mark.slow
def test_unwritable_kv_folder_worker_answers_without_cache(tmp_path, document):
    """Before: KvStore's mkdir raised and the worker exited before listening."""
    worker = Worker(tmp_path / "kv", read_only_kv=True)
    try:
        assert worker.ask(document)["prompt_tokens"] > 512
    finally:
        log = worker.stop()
        os.chmod(tmp_path / "kv", 0o700)
    assert "KV cache folder is not writable" in log and "Traceback" not in log
    assert not list((tmp_path / "kv").rglob("*.kv"))


@pytest.mark.slow
def test_corrupt_kv_entry_is_dropped_and_the_prompt_read_once(tmp_path, document):
    """Before: the damaged entry stayed; each restart matched it, failed to restore it, read the
    whole prompt and did not save it again (it 'had' that prefix), every time."""
    kv = tmp_path / "kv"
    worker = Worker(kv)
    first = worker.ask(document)
    worker.stop()
    [entry] = list(kv.rglob("*.kv"))
    data = entry.read_bytes()
    entry.write_bytes(data[:12] + b"\xff" * 64 + data[76:len(data) // 2])    # llama.cpp's header garbled, cut short
    reads = []
    for _ in range(2):                               # a restart, a question; again
        worker = Worker(kv)
        usage = worker.ask(document)
        log = worker.stop()
        reads.append(usage["prompt_tokens"] - usage["prompt_tokens_details"]["cached_tokens"])
        assert "Traceback" not in log
    assert first["prompt_tokens"] > 512
    assert reads[0] > 512                            # the damaged entry: read once more ...
    assert reads[1] < 64, reads                      # ... then restored from the entry saved anew
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("worker-*.log"))
    assert logs.count("could not be restored; deleted") == 1, logs[-2000:]


def test_corrupt_entries_are_deleted_not_kept(tmp_path):
    """The store's own checks, without an engine: a .kv too short for its header, and a .tok whose
    tokens do not hash to its name, are deleted when met."""
    from app.worker.llama.kv_store import KvStore, _digest
    store = KvStore(tmp_path, "m", min_tokens=1)
    toks = np.arange(600, dtype=np.int32)
    digest = _digest(toks)
    toks.tofile(store.dir / f"{digest}.tok")
    (store.dir / f"{digest}.kv").write_bytes(b"PWKV")                     # truncated mid-header
    assert store.best(toks.tolist()).common == 600
    assert store.load(None, digest, 2048) is None
    assert list(store.dir.iterdir()) == []
    other = np.arange(5, 700, dtype=np.int32)
    name = _digest(other)
    other[100] = 7                                                          # flipped after naming
    other.tofile(store.dir / f"{name}.tok")
    (store.dir / f"{name}.kv").write_bytes(b"x" * 100)
    assert store.best(list(range(5, 700))) is None
    assert list(store.dir.iterdir()) == []
