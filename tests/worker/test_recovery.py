"""A dead or hung engine comes back around one question (app/worker/recovery.py, the Engine's
restart), and a failed request is not taken for a failed start. Real processes, real signals, real sockets: the slow
tests run the real llama.cpp worker with the embedded SmolLM2 through EngineRuntime; the fast
ones inject the fault with tests/support/fake_server.py (llama.cpp's place) or fake_vllm.py."""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from app.core.answer import qa
from app.core.library import Library
from app.core.models import catalogue as models
from app.core.plan import hardware
from app.core.plan import planner as P
from app.core.plan.hardware import GpuInfo, Hardware
from app.core.plan.plan_history import PlanHistory
from app.failure_messages import describe
from app.worker import engine_errors as errors
from app.worker import runtime as runtime_module
from app.worker.downgrade import DowngradeSwitch
from app.worker.runtime import EngineRuntime
from app.service.planning import start_planned
from app.worker.supervisor import Supervisor
from tests.support.fake_server import fake_spec
from tests.worker.test_downgrade import RTX4090, Rig
from tests.support.waiting import pid_alive, wait_for


def _echoed(answer) -> bool:
    """The fake engine's reply came back: shown, or dropped as an echo of the prompt's
    instructions (what the fake engine sends is the prompt itself)."""
    return answer.text.startswith("echo:") or answer.raw.startswith("echo:")


def _replied(answer) -> bool:
    """The engine replied (its text shown, or dropped as an echo of the prompt)."""
    return bool(answer.text or answer.raw)


MiB, GiB = 1 << 20, 1 << 30


def busy_4090() -> Hardware:
    """The RTX 4090 after another program took 2.7 GiB of it."""
    return Hardware((GpuInfo(0, "NVIDIA GeForce RTX 4090", 24564 * MiB, 21 * GiB, 24564 * MiB - 21 * GiB, (8, 9)),),
                    64 * GiB, 60 * GiB, 16, ("avx2",))

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"
FIGURES = os.environ.get("PAGEWISE_RECOVERY_FIGURES")     # a JSON-lines file the figures go to


def record_figure(name: str, **values) -> None:
    print(f"\nrecovery figure {name}: {values}")
    if FIGURES:
        with open(FIGURES, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"test": name, **values}) + "\n")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    lib = Library(tmp_path_factory.mktemp("lib") / "library.sqlite")
    refs = [qa.DocRef(1, lib.add(SAMPLE).id, str(SAMPLE))]
    yield lib, refs
    lib.close()


class Statuses(list):
    def __bool__(self):          # a callback, even while nothing was said yet
        return True

    def __call__(self, state, detail):
        self.append((state, detail))
        if state == "restarted":
            self.restarted_at = time.monotonic()

    def restarts(self) -> list[str]:
        return [d for s, d in self if s == "restarted"]



# --- the fault injected by a fake engine (fast) --------------------------------------------------

class FakeRuntime:
    """An EngineRuntime whose engine is the fake server (its launcher injected): `make_spec(n)` is
    incarnation n's spec."""

    def __init__(self, make_spec):
        self.statuses = Statuses()
        self.launches: list[Supervisor] = []
        self.make_spec = make_spec
        self.rt = EngineRuntime(on_status=self.statuses, launcher=self._launch)
        self.rt.engine.start(P.make_plan(hardware.probe(), models.load_catalogue(), available=models.is_available))

    def _launch(self, plan, options, on_status):
        sup = Supervisor(self.make_spec(len(self.launches)))
        sup.start()
        self.launches.append(sup)
        return sup

    def ask(self, library, question="Who are the parties?"):
        lib, refs = library
        return self.rt.ask(lib, refs, question, mode="retrieval")

    def stop(self):
        self.rt.stop()
        for sup in self.launches:
            sup.stop()


@pytest.fixture
def fake_runtime():
    made = []

    def make(make_spec):
        made.append(FakeRuntime(make_spec))
        return made[-1]
    yield make
    for f in made:
        f.stop()


def test_an_engine_that_dies_on_the_question_is_restarted_on_a_new_port_and_asked_again(library, fake_runtime):
    f = fake_runtime(lambda n: fake_spec("--crash-after", "0") if n == 0 else fake_spec())
    answer = f.ask(library)
    assert _echoed(answer)
    assert len(f.launches) == 2 and not f.launches[0].is_alive()
    assert f.launches[0].spec.base_url != f.launches[1].spec.base_url          # a fresh port
    assert f.statuses.restarts() == ["the engine stopped; restarted it (1 of 3) and asked again"]


def test_an_engine_that_died_between_answers_is_back_for_the_next_question(library, fake_runtime):
    f = fake_runtime(lambda n: fake_spec())
    assert _echoed(f.ask(library))
    os.kill(f.launches[0].pid, signal.SIGKILL)
    assert wait_for(f.launches[0].exited.is_set, 5)
    assert _echoed(f.ask(library))
    assert len(f.launches) == 2
    assert f.statuses.restarts() == ["the engine had stopped; restarted it (1 of 3)"]


def test_a_crash_loop_gives_up_after_the_restart_budget_with_one_line(library, fake_runtime):
    f = fake_runtime(lambda n: fake_spec("--crash-after", "0"))
    seen = []
    while not any("not restarted" in line for line in seen) and len(seen) < 6:
        with pytest.raises(errors.WorkerError) as info:
            f.ask(library)
        seen.append(describe(info.value))
    # each question restarts at most twice (found dead, died on it) and retries once; how the
    # restarts fall on the questions depends on when each exit is reaped, the total does not
    assert len(f.launches) == 4                            # the first start + 3 restarts, then no more
    assert seen[0].startswith("the engine failed again after a restart: ")
    assert "; not restarted after 3 restarts within 60 s: " in seen[-1]
    assert all("\n" not in line for line in seen)


def test_a_port_race_on_restart_keeps_the_plan(library, fake_runtime):
    taken = []

    def make(n):
        if n == 1 and not taken:                # the restart's first port is taken by another program
            taken.append(1)
            raise errors.PortInUse("could not listen on 127.0.0.1:1: address in use")
        return fake_spec("--crash-after", "0") if n == 0 else fake_spec()
    f = fake_runtime(make)
    plan = f.rt.plan
    assert _echoed(f.ask(library))
    assert taken and f.rt.plan == plan and len(f.launches) == 2


def test_a_port_race_at_start_is_never_a_downgrade(tmp_path):
    """Three port races in a row used to count as three failed tries of the model: the switch
    then moved to the next model. Now each one only takes a fresh port."""
    cat = models.load_catalogue()
    plans, races = [], 3

    def start(plan):
        plans.append(plan)
        if len(plans) <= races:
            raise errors.PortInUse("could not listen: address already in use")
        return "started"
    sw = DowngradeSwitch(RTX4090, cat, start, history=PlanHistory(tmp_path / "h.json"),
                         available=lambda s: s.format == "awq" or s.source == "embedded")
    first = P.make_plan(RTX4090, cat)
    plan, sup = sw.start(first)
    assert sup == "started" and len(plans) == races + 1
    assert {(p.model_id, p.gpu_memory_utilization, p.max_model_len) for p in plans} == \
        {(first.model_id, first.gpu_memory_utilization, first.max_model_len)}
    assert not (tmp_path / "h.json").exists()            # nothing learned from a port race


# --- vLLM (fake_vllm.py plays it) ----------------------------------------------------------------

class VllmRuntime:
    def __init__(self, tmp_path, **rig):
        self.statuses, self.steps = Statuses(), []
        self.rig = Rig(tmp_path, **rig)
        self.rt = EngineRuntime(on_status=self.statuses, launcher=lambda plan, options, on_status: self.rig(plan))
        busy = lambda: self.hw                              # noqa: E731  (the probe after a failure)
        self.hw = RTX4090
        cat = models.load_catalogue()
        switch = DowngradeSwitch(RTX4090, cat, self.rt.engine.launch, history=PlanHistory(tmp_path / "h.json"),
                                 on_step=self.steps.append, probe=busy,
                                 available=lambda s: s.format == "awq" or s.source == "embedded")
        self.rt.engine.start(P.make_plan(RTX4090, cat), switch)

    def stop(self):
        self.rt.stop()
        self.rig.stop_all()


def test_vllm_schema_request_failing_with_an_empty_message_is_one_clear_line_and_no_restart(library,
                                                                                          vllm_runtime):
    """The issue's case: vLLM streamed an error with an empty message; the app took it for a
    failed start (downgrade, 63 s restart) and printed `pagewise: error: 127.0.0.1:54471:`."""
    v = vllm_runtime(extra=("--fake-stream-error",))
    lib, refs = library
    with pytest.raises(errors.ServerError) as info:
        v.rt.ask(lib, refs, "Who are the parties?", mode="retrieval")
    line = describe(info.value)
    assert "Failed to compile the JSON schema" in line and not line.rstrip().endswith(":"), line
    assert "\n" not in line
    assert len(v.rig.plans) == 1 and not v.steps and not v.statuses.restarts()   # no downgrade, no restart


def test_vllm_http_500_from_a_running_engine_is_one_line_and_neither_restart_nor_downgrade(library,
                                                                                         vllm_runtime):
    """Before, any ServerError on vLLM sent the switch one rung down and restarted the engine."""
    v = vllm_runtime(extra=("--fake-request-status", "500"))
    lib, refs = library
    with pytest.raises(errors.ServerError) as info:
        v.rt.ask(lib, refs, "Who are the parties?", mode="retrieval")
    line = describe(info.value)
    assert "fake failure 500" in line and "\n" not in line
    assert len(v.rig.plans) == 1 and not v.rt.engine.ended()
    assert not v.steps and not v.statuses.restarts()


def test_vllm_dying_on_a_question_restarts_and_steps_down_only_when_the_same_plan_no_longer_starts(
        library, vllm_runtime):
    v = vllm_runtime(oom_after=1)
    lib, refs = library
    first = v.rt.plan
    assert _replied(v.rt.ask(lib, refs, "Who are the parties?", mode="retrieval"))
    # another program takes 2.7 GiB; vLLM answers the next request 500 and its engine exits
    v.rig.gpu = "23.99:21.0:8.9"
    v.hw = busy_4090()
    answer = v.rt.ask(lib, refs, "How long does it last?", mode="retrieval")
    assert _replied(answer)
    tried = [(p.model_id, p.gpu_memory_utilization) for p in v.rig.plans]
    assert tried[:2] == [(first.model_id, first.gpu_memory_utilization)] * 2     # same plan first
    assert v.rt.plan.gpu_memory_utilization < first.gpu_memory_utilization      # then one rung down
    assert "GiB free" in v.steps[-1]
    assert v.statuses.restarts() == ["the engine stopped; restarted it (1 of 3) and asked again"]


# --- the real llama.cpp worker (slow) ------------------------------------------------------------

@pytest.fixture(scope="module")
def small_library(tmp_path_factory):
    """A one-page agreement (a real PDF made here): a short prompt, so the figures measure the
    recovery and not a 2-core machine reading a long contract."""
    import pymupdf
    folder = tmp_path_factory.mktemp("small")
    pdf = folder / "short-nda.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), (
            "MUTUAL NONDISCLOSURE AGREEMENT\n\n1. Parties. This Agreement is made between Acme Ltd. "
            "and Beta LLC.\n\n2. Term. The obligations of confidentiality last three years from the "
            "Effective Date.\n\n3. Governing law. This Agreement is governed by the laws of Delaware."),
            fontsize=11)
        doc.save(pdf)
    lib = Library(folder / "library.sqlite")
    refs = [qa.DocRef(1, lib.add(pdf).id, str(pdf))]
    yield lib, refs
    lib.close()


@pytest.fixture
def real_runtime(monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 16)          # a short answer: the recovery is what is timed
    statuses = Statuses()
    rt = EngineRuntime(on_status=statuses)
    start_planned(rt)
    assert rt.plan.engine == "llamacpp"
    yield rt, statuses
    rt.stop()


@pytest.mark.slow
def test_kill_9_mid_answer_is_answered_after_a_restart(small_library, real_runtime):
    rt, statuses = real_runtime
    lib, refs = small_library
    first_pid, killed = rt.engine.pid, {}

    def on_delta(_text):
        if not killed:                                   # the first token streamed: kill -9 now
            killed["at"] = time.monotonic()
            os.kill(first_pid, signal.SIGKILL)
    answer = rt.ask(lib, refs, "Who are the parties?", mode="retrieval", on_delta=on_delta)
    took = time.monotonic() - killed["at"]
    assert killed and answer.text and answer.mode == "retrieval"
    assert rt.engine.pid != first_pid and not rt.engine.ended()
    assert statuses.restarts() == ["the engine stopped; restarted it (1 of 3) and asked again"]
    restart_s = rt.engine.recoveries[-1]["restart_s"]
    record_figure("kill -9 mid-answer", kill_to_answer_s=round(took, 2), restart_s=restart_s)


@pytest.mark.slow
def test_kill_9_between_answers_the_next_question_is_answered(small_library, real_runtime):
    rt, statuses = real_runtime
    lib, refs = small_library
    assert _replied(rt.ask(lib, refs, "Who are the parties?", mode="retrieval"))
    pid = rt.engine.pid
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    assert wait_for(rt.engine.ended, 5)
    answer = rt.ask(lib, refs, "How long does confidentiality last?", mode="retrieval")
    assert answer.text and rt.engine.pid != pid
    assert statuses.restarts() == ["the engine had stopped; restarted it (1 of 3)"]
    record_figure("kill -9 between answers", kill_to_answer_s=round(time.monotonic() - killed, 2),
                  restart_s=rt.engine.recoveries[-1]["restart_s"])


@pytest.mark.slow
def test_sigstop_mid_question_times_out_within_the_stall_deadline_kills_restarts_and_answers(small_library,
                                                                                              real_runtime):
    rt, statuses = real_runtime
    lib, refs = small_library
    stall_s = runtime_module.LLAMA_STALL_S      # the real deadline: our worker says something every ~1 s
    pid, stopped = rt.engine.pid, {}

    def stop_when_reading():
        """SIGSTOP once the worker is reading the prompt (its /metrics say so)."""
        end = time.monotonic() + 60
        while time.monotonic() < end:
            m = rt.engine.metrics()
            if m.get("pagewise_requests_running", 0) >= 1:
                os.kill(pid, signal.SIGSTOP)
                stopped["at"] = time.monotonic()
                stopped["prompt"] = (m.get("pagewise_prompt_progress_tokens"), m.get("pagewise_prompt_progress_total"))
                return
            time.sleep(0.02)
    watcher = threading.Thread(target=stop_when_reading)
    watcher.start()
    try:
        answer = rt.ask(lib, refs, "Who are the parties?", mode="whole-document")
    finally:
        watcher.join()
        _continue(pid)
    took = time.monotonic() - stopped["at"]
    assert answer.text and rt.engine.pid != pid and not pid_alive(pid)
    (line,) = statuses.restarts()
    assert line == "the engine stopped answering; killed and restarted it (1 of 3) and asked again"
    restart_s = rt.engine.recoveries[-1]["restart_s"]
    # the stall was noticed within the deadline (the retried answer's own time is the machine's)
    noticed_s = statuses.restarted_at - restart_s - stopped["at"]
    assert 0 < noticed_s < stall_s + 8
    record_figure("SIGSTOP mid-question", stop_to_answer_s=round(took, 2), noticed_s=round(noticed_s, 2),
                  restart_s=restart_s,
                  stall_s=stall_s, prompt_progress_at_stop=stopped["prompt"])


def _continue(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass
