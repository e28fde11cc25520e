"""The llama.cpp worker's KV cache on a faulty disk: an unwritable KV folder, a damaged entry, a
.kv or .tok that does not match its name — the worker answers all the same and drops what is bad."""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from app.worker.llama.kv_store import KvStore, _digest
from tests.support.mounts import CAN_MOUNT, IS_ROOT

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"


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

