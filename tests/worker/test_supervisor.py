"""Supervisor: real llama.cpp worker start/stop and crash detection; faults via the fake server."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.core.models.catalogue import load_catalogue, local_path
from app.worker import engine_errors as errors
from app.worker.client import ChatClient
from app.worker.engines import llamacpp
from app.core.models.catalogue import is_available
from app.core.plan.hardware import probe
from app.core.plan.planner import make_plan
from app.worker.engine import Engine
from app.worker.restart import RestartPolicy
from app.worker.supervisor import Supervisor, WorkerStatus
from tests.support.fake_server import fake_spec
from tests.support.waiting import wait_for

OOM_LINE = ("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 17179869184")


def real_spec(tmp_path, **kw):
    model = local_path(load_catalogue().default)
    return llamacpp.launch_spec(model, n_ctx=kw.pop("n_ctx", 2048), kv_dir=tmp_path / "kv",
                                model_name="smollm2", **kw)


class Recorder:
    def __init__(self):
        self.seen: list[WorkerStatus] = []

    def __call__(self, status, detail):
        self.seen.append(status)



# --- the real llama.cpp worker ------------------------------------------------------------------

@pytest.mark.slow
def test_real_worker_start_ask_stop(tmp_path):
    rec = Recorder()
    sup = Supervisor(real_spec(tmp_path), log_path=tmp_path / "worker.log", on_status=rec)
    sup.start()
    try:
        assert sup.status == WorkerStatus.READY and sup.is_alive()
        assert rec.seen[0] == WorkerStatus.LAUNCHING and WorkerStatus.LOADING in rec.seen
        client = ChatClient(sup.spec.base_url, sup.spec.api_key, "smollm2")
        assert client.health()
        result = client.chat([{"role": "user", "content": "Say hello."}], max_tokens=8)
        assert result.completion_tokens > 0 and result.text
    finally:
        sup.stop()
    assert sup.status == WorkerStatus.STOPPED and not sup.is_alive()
    with pytest.raises(OSError):
        os.kill(sup.pid, 0)                       # reaped: nothing left behind
    sup.stop()                                    # idempotent
    log = (tmp_path / "worker.log").read_text()
    assert "model loaded" in log and "listening on" in log
    assert any("model loaded" in line for line in sup.tail())


@pytest.mark.slow
def test_kill_9_makes_worker_dead_and_fails_the_pending_request(tmp_path):
    rec = Recorder()
    sup = Supervisor(real_spec(tmp_path), on_status=rec)
    sup.start()
    client = ChatClient(sup.spec.base_url, sup.spec.api_key, "smollm2")
    outcome: dict = {}

    def ask():
        try:
            client.chat([{"role": "user", "content": "Write a long story about the sea."}],
                        max_tokens=2000, temperature=0.8, on_delta=lambda d: outcome.setdefault("first", 1))
        except errors.WorkerError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=ask)
    thread.start()
    assert wait_for(lambda: "first" in outcome, 60), "no token streamed"
    os.kill(sup.pid, signal.SIGKILL)
    thread.join(60)                                           # a hang guard, not a speed claim
    assert not thread.is_alive(), "the request did not end when its worker died"
    assert isinstance(outcome.get("error"), errors.WorkerDied), outcome   # not the read timeout
    assert wait_for(lambda: sup.status == WorkerStatus.DEAD, 5)
    assert rec.seen[-1] == WorkerStatus.DEAD
    with pytest.raises(errors.WorkerUnavailable):
        client.chat([{"role": "user", "content": "hi"}], max_tokens=4)
    sup.stop()
    assert sup.status == WorkerStatus.DEAD                    # stop() keeps the cause visible


@pytest.mark.slow
def test_missing_and_invalid_model_files_are_classified(tmp_path):
    spec = real_spec(tmp_path)
    spec.argv[spec.argv.index("--model") + 1] = str(tmp_path / "nowhere.gguf")
    with pytest.raises(errors.ModelFileMissing, match="nowhere.gguf"):
        Supervisor(spec).start()
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"this is not a gguf file" * 100)
    spec = real_spec(tmp_path)
    spec.argv[spec.argv.index("--model") + 1] = str(junk)
    sup = Supervisor(spec)
    with pytest.raises(errors.ModelLoadFailed) as info:
        sup.start()
    assert "\n" not in str(info.value) and info.value.tail
    assert sup.status == WorkerStatus.FAILED and not sup.is_alive()


@pytest.mark.slow
def test_port_taken_is_port_in_use(tmp_path):
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        spec = real_spec(tmp_path)
        # where sockets cannot be handed down (--port: the worker binds it), a port taken meanwhile
        at = spec.argv.index("--listen-fd")
        spec.argv[at:at + 2] = ["--port", str(taken.getsockname()[1])]
        spec.listen_socket.close()
        spec.listen_socket = None
        spec.health_path = "/nothing-here"          # the taken port must not look ready
        with pytest.raises(errors.PortInUse, match="could not listen"):
            Supervisor(spec).start()


# --- faults injected with the fake server -------------------------------------------------------

def test_oom_line_at_start_becomes_out_of_memory():
    sup = Supervisor(fake_spec("--print", "llama_model_loader: loaded meta data", OOM_LINE,
                               "--exit-code", "1", classify=llamacpp.classify))
    with pytest.raises(errors.OutOfMemory, match="failed to allocate"):
        sup.start()
    assert sup.status == WorkerStatus.FAILED


def test_unclassified_exit_reports_code_and_last_line():
    sup = Supervisor(fake_spec("--print", "something odd happened", "--exit-code", "7",
                               classify=llamacpp.classify))
    with pytest.raises(errors.WorkerExited) as info:
        sup.start()
    assert info.value.code == 7 and "something odd happened" in str(info.value)


def test_slow_start_with_progress_lines_becomes_ready():
    rec = Recorder()
    began = time.monotonic()
    sup = Supervisor(fake_spec("--progress-for", "4", stall_timeout_s=2), on_status=rec)
    sup.start()                                   # 4 s loading > 2 s stall window: progress moves it
    try:
        assert time.monotonic() - began >= 4
        assert rec.seen[:3] == [WorkerStatus.LAUNCHING, WorkerStatus.LOADING, WorkerStatus.READY]
    finally:
        sup.stop()


@pytest.mark.parametrize("fault", [("--silent-for", "300"), ("--hang",)])
def test_silence_past_the_stall_window_is_a_start_timeout(fault):
    rec = Recorder()
    began = time.monotonic()
    sup = Supervisor(fake_spec(*fault, stall_timeout_s=2, ready_timeout_s=300), on_status=rec)
    with pytest.raises(errors.StartTimeout):
        sup.start()
    # the 2 s stall window ended it, not the 300 s ready timeout (nor the end of the silence);
    # the upper bound only tells the two apart, with room for a loaded machine
    assert 2 <= time.monotonic() - began < 60
    assert WorkerStatus.NOT_RESPONDING in rec.seen and sup.status == WorkerStatus.FAILED
    assert not sup.is_alive()


def test_a_busy_port_at_start_is_waited_for_not_a_stall():
    """Issue 32, point 6: while other connections held the worker's places, /health said 503 and
    the start ended as a stall ("no engine could start on this machine"). A 503 is an engine that
    answers: the wait goes on (the ready timeout still caps it)."""
    sup = Supervisor(fake_spec("--busy-for", "5", stall_timeout_s=2, ready_timeout_s=60))
    began = time.monotonic()
    sup.start()
    try:
        assert time.monotonic() - began >= 5 and sup.status == WorkerStatus.READY
    finally:
        sup.stop()


def test_ready_timeout_caps_even_a_progressing_start():
    sup = Supervisor(fake_spec("--progress-for", "300", stall_timeout_s=2, ready_timeout_s=3))
    began = time.monotonic()
    with pytest.raises(errors.StartTimeout):                  # progress alone would end at 300 s, ready
        sup.start()
    assert 3 <= time.monotonic() - began < 60                 # the 3 s cap; the bound is a hang guard


def _engine(specs, policy: RestartPolicy) -> Engine:
    """An Engine whose launcher starts the fake server: each launch takes the next spec."""
    def launch(plan, options, on_status):
        sup = Supervisor(next(specs))
        sup.start()
        return sup
    engine = Engine(launcher=launch, policy=policy)
    engine.start(make_plan(probe(), load_catalogue(), available=is_available))
    return engine


def _ping(engine: Engine) -> str:
    return engine.chat([{"role": "user", "content": "ping"}]).text.strip()


def test_restart_policy_restarts_a_crashing_worker_up_to_its_limit():
    restarts, gave_up = [], []
    policy = RestartPolicy(limit=2, stable_after_s=60, on_restart=lambda n, why: restarts.append(n),
                           on_give_up=gave_up.append)
    engine = _engine(iter(lambda: fake_spec("--crash-after", "1"), None), policy)
    try:
        for attempt in range(3):                   # the first incarnation + 2 restarts
            assert _ping(engine) == "echo: ping", f"attempt {attempt}"
            url = engine.base_url
            with pytest.raises(errors.WorkerDied) as died:
                _ping(engine)
            if attempt < 2:
                engine.restart(died.value, "stopped")
                assert engine.base_url != url                 # a fresh port
        with pytest.raises(errors.WorkerDied) as info:
            engine.restart(died.value, "stopped")
        assert restarts == [1, 2] and "gave up after 2 restarts" in gave_up[0]
        assert "not restarted after 2 restarts" in str(info.value)
    finally:
        engine.stop()
    with pytest.raises(errors.WorkerUnavailable):
        _ping(engine)


def test_restart_budget_resets_after_a_stable_run():
    policy = RestartPolicy(limit=1, stable_after_s=10)
    assert policy.should_restart(up_for_s=1, reason="crash")
    assert not policy.should_restart(up_for_s=1, reason="crash again")
    assert policy.should_restart(up_for_s=11, reason="crash after a long stable run")


def _crash_then_relaunch_fails_with(line: str) -> tuple[Engine, errors.WorkerError]:
    """An engine that crashes on its first request; every relaunch prints `line` and exits 1.
    Returns it with what its restart raised."""
    specs = iter([fake_spec("--crash-after", "0")] +
                 [fake_spec("--print", line, "--exit-code", "1", classify=llamacpp.classify) for _ in range(5)])
    engine = _engine(specs, RestartPolicy(limit=3))
    with pytest.raises(errors.WorkerDied) as died:
        _ping(engine)
    with pytest.raises(errors.WorkerError) as failed:
        engine.restart(died.value, "stopped")
    return engine, failed.value


def test_failed_restarts_count_against_the_limit():
    """Crash, then the relaunch itself fails for a reason a retry may cure: give up after the limit."""
    engine, failure = _crash_then_relaunch_fails_with("something odd happened")
    assert "something odd" in str(failure) and engine.policy.restarts == 3
    engine.stop()


def test_a_restart_that_runs_out_of_memory_is_left_to_the_ladder():
    """The relaunch fails with a kind a restart of the same plan cannot cure (out of memory):
    no second try of the same plan; without a ladder (a plan started alone) the error is the user's."""
    engine, failure = _crash_then_relaunch_fails_with("cudaMalloc failed: out of memory")
    assert failure.kind.value == "oom" and engine.policy.restarts == 1
    engine.stop()


def test_a_frozen_worker_is_not_responding_until_it_answers_again():
    rec = Recorder()
    sup = Supervisor(fake_spec(watch_interval_s=0.3), on_status=rec)
    sup.start()
    try:
        os.kill(sup.pid, signal.SIGSTOP)                      # alive but silent
        assert wait_for(lambda: sup.status == WorkerStatus.NOT_RESPONDING, 10)
        os.kill(sup.pid, signal.SIGCONT)
        assert wait_for(lambda: sup.status == WorkerStatus.READY, 10)
        assert rec.seen[-2:] == [WorkerStatus.NOT_RESPONDING, WorkerStatus.READY]
    finally:
        os.kill(sup.pid, signal.SIGCONT)
        sup.stop()


@pytest.mark.slow
def test_worker_exits_when_the_app_is_killed(tmp_path):
    """The worker runs in its own session, so it must notice its parent's SIGKILL by itself."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from tests.worker.test_supervisor import real_spec\n"
        "from app.worker.supervisor import Supervisor\n"
        f"sup = Supervisor(real_spec(Path({str(tmp_path)!r})))\n"
        "sup.start()\n"
        "print(sup.pid, flush=True)\n"
        "time.sleep(600)\n")
    app = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[2])
    worker_pid = int(app.stdout.readline())
    os.kill(worker_pid, 0)                                    # the worker runs
    app.kill()
    app.wait()

    def gone():                                               # exited (a zombie counts: init reaps it)
        try:
            return Path(f"/proc/{worker_pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
        except FileNotFoundError:
            return True
    assert wait_for(gone, 10), "orphaned worker still running"


def test_stop_during_start_up_cancels_it():
    rec = Recorder()
    sup = Supervisor(fake_spec("--progress-for", "300", ready_timeout_s=300), on_status=rec)
    threading.Timer(1.0, sup.stop).start()
    with pytest.raises(errors.StartError, match="cancelled"):   # not ready, not timed out: stopped
        sup.start()
    assert sup.status == WorkerStatus.STOPPED and not sup.is_alive()
    assert WorkerStatus.FAILED not in rec.seen
