"""A --threads above the machine's cores reaches the llama.cpp worker clamped (and said)."""
from __future__ import annotations

from app.core import settings
from app.worker.engines import llamacpp


def test_a_threads_flag_above_the_cores_reaches_the_worker_clamped(tmp_path, capsys):
    spec = llamacpp.launch_spec(tmp_path / "m.gguf", n_ctx=2048, threads=1000)
    assert spec.argv[spec.argv.index("--threads") + 1] == str(settings.cores())
    assert "is more than the" in capsys.readouterr().err
