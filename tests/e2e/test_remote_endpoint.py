"""engine = remote: `pagewise ask` against a real OpenAI-compatible server on loopback standing
in for a team's (our own llama.cpp worker, started with its key), the key in a real keyring
backend; and the ways a remote endpoint fails, each one line."""
from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest
import tomli_w

from app.core.models.catalogue import load_catalogue, local_path
from app.worker.engines import llamacpp
from app.worker.supervisor import Supervisor
from tests.e2e.test_cli import SAMPLE
from tests.support.cli import run_process

TEAM_MODEL = "team-smollm2"


def remote_ask(home: Path, url: str, key: str | None, model: str = TEAM_MODEL, timeout: float = 900,
               doc: Path = SAMPLE, question: str = "Who are the parties?"):
    """`pagewise ask --json --mode retrieval` (a few passages: minutes, not tens of them, on a busy
    2-core machine) with settings engine = remote and the key in the keyring."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "settings.toml").write_text(tomli_w.dumps(
        {"engine": "remote", "remote_url": url, "remote_model": model}))
    vault = home.parent / "os-keyring.json"         # the "OS keyring": outside the app's folders
    vault.write_text(json.dumps({"Pagewise": {"remote_api_key": key}} if key else {}))
    env = {"PAGEWISE_TEST_KEYRING": str(vault), "PYTHON_KEYRING_BACKEND": "tests.support.file_keyring.FileKeyring"}
    began = time.monotonic()
    # a real process: keyring picks its backend once per process
    res = run_process("ask", str(doc), "-q", question, "--mode", "retrieval", "--json", home=home, env=env,
                      timeout=timeout)
    return res, time.monotonic() - began


def one_line_error(res) -> str:
    assert res.returncode == 1 and "Traceback" not in res.stderr + res.stdout
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert json.loads(res.stdout)["error"] in lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    """Our llama.cpp worker with its own key, as the team's server (8K context)."""
    tmp = tmp_path_factory.mktemp("team-server")
    spec = llamacpp.launch_spec(local_path(load_catalogue(imported=False).default), n_ctx=8192,
                                kv_dir=tmp / "kv", model_name=TEAM_MODEL)
    sup = Supervisor(spec, log_path=tmp / "worker.log")
    sup.start()
    yield spec
    sup.stop()


@pytest.mark.slow
def test_a_corpus_question_through_the_team_server(team_server, tmp_path):
    # the Common Paper mutual NDA (resources/samples): a dev.jsonl Bonterms question took
    # over 900 s here with 2 cores shared by 8 engines (its vectors, then the answer)
    home = tmp_path / "home"
    res, _ = remote_ask(home, team_server.base_url, team_server.api_key)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["engine"]["name"] == "remote" and out["engine"]["model"] == TEAM_MODEL
    assert out["engine"]["summary"].startswith(f"remote: {team_server.base_url}")
    assert out["engine"]["context"] == 8192                     # what the server reports, not a guess
    assert any(c["verified"] for c in out["citations"]), out
    assert not list((home / "logs").glob("worker-*.log"))         # no local engine was started
    assert not any(team_server.api_key.encode() in p.read_bytes() for p in home.rglob("*") if p.is_file())


@pytest.mark.slow
def test_a_wrong_key_is_one_line(team_server, tmp_path):
    res, _ = remote_ask(tmp_path / "home", team_server.base_url, "not-the-key")
    line = one_line_error(res)
    assert "refused the API key" in line and "set-secret remote_api_key" in line
    assert json.loads(res.stdout)["kind"] == "auth"


@pytest.mark.slow
def test_an_unknown_model_is_one_line(team_server, tmp_path):
    res, _ = remote_ask(tmp_path / "home", team_server.base_url, team_server.api_key, model="gpt-5")
    line = one_line_error(res)
    assert "does not serve model 'gpt-5'" in line and TEAM_MODEL in line


def test_an_unreachable_endpoint_is_one_line_and_fast(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]                  # closed again: nothing listens there
    res, took = remote_ask(tmp_path / "home", f"http://127.0.0.1:{port}/v1", "k")
    line = one_line_error(res)
    assert f"remote: http://127.0.0.1:{port}/v1" in line and "no engine answers" in line
    assert took < 60                              # the interpreter's start on a busy machine; no waiting


def test_a_stalled_server_is_one_line(tmp_path):
    """A server that accepts the connection and then says nothing (a hung proxy or engine)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []
    threading.Thread(target=lambda: [held.append(listener.accept()) for _ in range(8)], daemon=True).start()
    try:
        res, took = remote_ask(tmp_path / "home", f"http://127.0.0.1:{listener.getsockname()[1]}/v1", "k")
        line = one_line_error(res)
        assert "sent nothing for 10 s (the server stalled)" in line
        assert took < 90
    finally:
        listener.close()
        for conn, _ in held:
            conn.close()


def test_the_settings_choose_the_endpoint_and_cap_the_context():
    from app.core import settings
    from app.core.failures import BadInput
    from app.core.plan.types import Plan
    from app.worker import remote
    assert remote.endpoint_from_settings(settings.Settings()) is None        # engine auto: a local engine
    with pytest.raises(BadInput, match="remote_url or remote_model is not set"):
        remote.endpoint_from_settings(settings.Settings(engine="remote"))
    ep = remote.endpoint_from_settings(settings.Settings(engine="remote", remote_url="http://h:1/v1",
                                                         remote_model="m", context_cap=16384))
    assert (ep.base_url, ep.model, ep.context) == ("http://h:1/v1", "m", 16384)
    plan = Plan(engine="vllm", model_id="x", weights_format="awq", max_model_len=57344, kv_tokens=57344)
    capped = remote.capped(plan, settings.Settings(context_cap=4096))
    assert capped.max_model_len == 8192 and "context_cap" in capped.reasons[-1]     # vLLM's floor
    assert remote.capped(plan, settings.Settings()) is plan
