"""Inside a frozen bundle there is no `python -m`: the worker is the bundle's own program started
with `--worker` (app/__main__.py hands that to app.worker.llama.server), from the bundle's folder.

The "bundle" here is a real executable file standing in for PyInstaller's: it runs app/__main__.py
with the venv's Python, exactly as the frozen program runs that entry script."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.core.models import catalogue as models
from app.worker.client import ChatClient
from app.worker.engines import llamacpp
from app.worker.supervisor import Supervisor

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def frozen(tmp_path, monkeypatch) -> Path:
    exe = tmp_path / "Pagewise" / "Pagewise"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                   f"runpy.run_path({str(ROOT / 'app' / '__main__.py')!r}, run_name='__main__')\n")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(exe))
    return exe


def test_frozen_command_is_the_bundle_program_with_worker(frozen, tmp_path):
    spec = llamacpp.launch_spec(tmp_path / "m.gguf", n_ctx=2048)
    assert spec.argv[:2] == [str(frozen), "--worker"] and "-m" not in spec.argv
    assert spec.argv[2] == "--model"
    assert spec.cwd == frozen.parent


def test_source_command_is_python_dash_m():
    spec = llamacpp.launch_spec(Path("m.gguf"), n_ctx=2048)
    assert spec.argv[:3] == [sys.executable, "-m", "app.worker.llama"]
    assert spec.cwd == ROOT


@pytest.mark.slow
def test_the_bundle_program_starts_a_worker_that_answers(frozen, tmp_path):
    gguf = models.local_path(models.load_catalogue().default)
    spec = llamacpp.launch_spec(gguf, n_ctx=2048, model_name="m", kv_store=False, ready_timeout_s=120)
    sup = Supervisor(spec, log_path=tmp_path / "worker.log")
    sup.start()
    try:
        reply = ChatClient(spec.base_url, spec.api_key, "m").chat(
            [{"role": "user", "content": "Say yes."}], max_tokens=4)
        assert reply.text.strip()
        assert Path(f"/proc/{sup.pid}/cmdline").read_bytes().split(b"\0")[1] == str(frozen).encode()
    finally:
        sup.stop()
    assert not sup.is_alive()
