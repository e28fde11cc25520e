"""While vLLM starts again after a death (about a minute), a llama.cpp stand-in answers
(app/worker/standin.py, the Engine's comeback): which model stands in, where it may run, and,
with the real CPU vLLM engine and the real llama.cpp worker, an EngineCore killed mid-answer →
the question answered by the stand-in before vLLM is back, then vLLM answering again."""
from __future__ import annotations

import os
import signal
import time

import pytest

from app.core.answer import qa
from app.core.models import catalogue as models
from app.core.plan.hardware import GpuInfo, Hardware
from app.core.plan.types import Plan
from app.worker import standin
from tests.worker.test_recovery import Statuses, record_figure, small_library  # noqa: F401 (a fixture)
from tests.support.enginecore import kill_enginecores
from tests.support.waiting import pid_alive

MiB, GiB = 1 << 20, 1 << 30


def _vllm_plan(model_id: str, util: float | None, ctx: int = 32768, devices=(0,)) -> Plan:
    return Plan(engine="vllm", model_id=model_id, weights_format="awq", gpu_memory_utilization=util,
                max_model_len=ctx, devices=devices)


def _card(total_mib: int, free_mib: int, name: str = "NVIDIA H200") -> Hardware:
    return Hardware((GpuInfo(0, name, total_mib * MiB, free_mib * MiB, (total_mib - free_mib) * MiB, (9, 0)),),
                    64 * GiB, 48 * GiB, 16, ("avx2",))


def test_the_same_models_gguf_stands_in_for_its_awq_copy():
    cat = models.load_catalogue()
    for awq, gguf in (("qwen2.5-7b-instruct-awq", "qwen2.5-7b-instruct-q4_k_m"),
                      ("qwen2.5-14b-instruct-awq", "qwen2.5-14b-instruct-q4_k_m"),
                      ("qwen2.5-3b-instruct-awq", "qwen2.5-3b-instruct-q4_k_m")):
        assert standin.same_model_gguf(cat.get(awq), cat, lambda spec: True).id == gguf
    # not on disk: no "same model"; the caller then takes the embedded one
    assert standin.same_model_gguf(cat.get("qwen2.5-7b-instruct-awq"), cat, lambda spec: False) is None


def test_without_the_same_models_gguf_the_embedded_model_stands_in_on_the_cpu():
    """This machine: no GGUF of the AWQ model is downloaded, no GPU."""
    choice = standin.choose(_vllm_plan("qwen2.5-7b-instruct-awq", 0.9),
                            probe=lambda: Hardware((), 16 * GiB, 8 * GiB, 2, ("avx2",)))
    assert choice.plan.engine == "llamacpp" and choice.plan.model_id == models.load_catalogue().default_id
    assert choice.plan.n_gpu_layers == 0 and choice.plan.max_model_len <= standin.CONTEXT_CAP
    assert "the embedded model" in choice.line and "on the CPU" in choice.line


def test_the_stand_in_takes_the_gpu_only_beside_vllms_own_budget(monkeypatch):
    """vLLM refuses to start again when less than utilisation × the card is free: a stand-in on
    the GPU may only use what is left beyond that budget."""
    monkeypatch.setattr(models, "is_available", lambda spec: True)
    # the H200 run: vLLM sized to the need (0.0189 of 143,771 MiB = 2.7 GB): the GGUF goes on the GPU
    big = standin.choose(_vllm_plan("qwen2.5-7b-instruct-awq", 0.0189), probe=lambda: _card(143771, 142000))
    assert big.plan.model_id == "qwen2.5-7b-instruct-q4_k_m" and big.plan.n_gpu_layers != 0
    assert "the GGUF of the same model" in big.line and "on the GPU" in big.line
    # a 24 GB card at 0.92: what is left beyond vLLM's budget holds no layer: the CPU
    small = standin.choose(_vllm_plan("qwen2.5-7b-instruct-awq", 0.92), probe=lambda: _card(24564, 24000, "RTX 4090"))
    assert small.plan.n_gpu_layers == 0 and "on the CPU" in small.line


# --- the Engine's comeback, with fake engines: the order of things, no timing ------------------------

class Comeback:
    """An Engine whose vLLM is fake_vllm.py (its first launch dies mid-answer) and whose stand-in is
    fake_server.py; vLLM's restart waits for `gate`, as a real one takes a minute."""

    def __init__(self, tmp_path, standin_fails: bool = False):
        import sys
        import threading

        from app.worker import engine_errors as errors
        from app.worker.engine import Engine
        from app.worker.engines import vllm
        from app.worker.supervisor import Supervisor
        from tests.support.fake_server import fake_spec
        from tests.worker.test_vllm_guarantees import FAKE
        self.gate, self.vllm_sups, self.standin_sups, self.said = threading.Event(), [], [], Statuses()
        (tmp_path / "m").mkdir()
        (tmp_path / "m" / "config.json").write_text("{}")
        self.vllm_plan = _vllm_plan("fake", 0.5, 4096)
        self.standin_plan = Plan(engine="llamacpp", model_id="stand-in", weights_format="gguf", max_model_len=2048)

        def launch_vllm(plan, _options, on_status):
            if self.vllm_sups:
                self.gate.wait(60)                     # the restart: held until the test lets it finish
            spec = vllm.launch_spec(plan, tmp_path / "m", "fake", entry=[sys.executable, FAKE], ready_timeout_s=30,
                                    stall_timeout_s=15, extra_args=("--fake-die-mid-answer", str(tmp_path / "died")))
            sup = Supervisor(spec, on_status=on_status)
            sup.start()
            self.vllm_sups.append(sup)
            return sup

        def launch_standin(plan, _options, on_status):
            if standin_fails:
                raise errors.ModelLoadFailed("llama.cpp cannot read the model: injected")
            sup = Supervisor(fake_spec(), on_status=on_status)
            sup.start()
            self.standin_sups.append(sup)
            return sup
        choice = standin.Choice(self.standin_plan, "llama.cpp with the test's stand-in,")
        self.engine = Engine(on_status=self.said, launcher=launch_vllm, standin=lambda plan: choice,
                             standin_launcher=launch_standin)
        self.engine.start(self.vllm_plan)

    def ask(self):
        from app.worker import recovery
        messages = [{"role": "user", "content": "Who are the parties?"}]
        return recovery.ask(self.engine, lambda cut: self.engine.chat(messages, max_tokens=16, cancel=cut))

    def stop(self):
        self.gate.set()
        self.engine.stop()
        for sup in self.vllm_sups + self.standin_sups:
            sup.stop()


@pytest.fixture
def comeback(tmp_path):
    made = []

    def make(**kw):
        made.append(Comeback(tmp_path, **kw))
        return made[-1]
    yield make
    for c in made:
        c.stop()


def test_vllm_dying_mid_answer_is_answered_by_the_stand_in_then_vllm_takes_over_at_the_next_question(comeback):
    c = comeback()
    first = c.engine.pid
    assert c.ask().text.startswith("echo:")                              # the stand-in's answer
    assert c.engine.plan == c.standin_plan and c.engine.behind_stand_in() == c.vllm_plan
    assert c.said.restarts() == ["vLLM stopped; llama.cpp with the test's stand-in, answers while vLLM restarts "
                                 "in the background (1 of 3) and asked again"]
    assert c.ask().text.startswith("echo:") and c.engine.plan == c.standin_plan   # vLLM not back: the stand-in
    c.gate.set()                                                          # vLLM's restart finishes
    assert c.engine.wait_comeback(60)
    assert c.engine.plan == c.standin_plan                                # not before a question begins …
    reply = c.ask()                                                       # … then vLLM answers again
    assert c.engine.plan == c.vllm_plan and c.engine.behind_stand_in() is None
    assert reply.text and c.engine.pid not in (first, c.standin_sups[0].pid)
    assert not c.standin_sups[0].is_alive()                               # the stand-in stopped
    states = [state for state, _ in c.said]
    assert "restarting" in states and states[-1] == "ready"
    assert c.said[-1][1].startswith("vLLM answers again")
    assert [r["kind"] for r in c.engine.recoveries] == ["worker_died", "back"]


def test_a_stand_in_that_does_not_start_leaves_the_question_waiting_for_vllm_as_before(comeback):
    c = comeback(standin_fails=True)
    c.gate.set()
    assert c.ask().text                                                   # vLLM's second incarnation
    assert c.engine.plan == c.vllm_plan and c.engine.behind_stand_in() is None
    assert c.said.restarts() == ["the engine stopped; restarted it (1 of 3) and asked again"]


def test_a_stand_in_that_dies_is_restarted_as_a_stand_in_while_vllm_still_comes_back(comeback):
    c = comeback()
    c.ask()
    os.kill(c.standin_sups[0].pid, signal.SIGKILL)
    assert c.ask().text.startswith("echo:")                              # a second stand-in answered
    assert len(c.standin_sups) == 2 and len(c.vllm_sups) == 1            # vLLM's restart is still held
    assert c.engine.plan == c.standin_plan and c.engine.behind_stand_in() == c.vllm_plan
    c.gate.set()
    assert c.engine.wait_comeback(60)
    c.ask()
    assert c.engine.plan == c.vllm_plan and not c.standin_sups[1].is_alive()


def test_stopping_while_vllm_comes_back_leaves_nothing_running(comeback):
    c = comeback()
    c.ask()
    c.engine.stop()                       # the app quits (or switches model) while vLLM restarts
    c.gate.set()
    from tests.support.waiting import wait_for
    assert wait_for(lambda: len(c.vllm_sups) == 2, 30)
    assert wait_for(lambda: not any(sup.is_alive() for sup in c.vllm_sups + c.standin_sups), 30)


# --- the real engines: vLLM (CPU build) killed mid-answer, the llama.cpp stand-in answers ----------

@pytest.mark.slow
def test_real_vllm_killed_mid_answer_the_stand_in_answers_before_vllm_is_back_then_vllm_answers_again(
        small_library, vllm_py, vllm_kernels, tmp_path, monkeypatch):  # noqa: F811 (the fixture)
    from app.worker.engines import vllm
    from app.worker.runtime import EngineRuntime
    from app.worker.supervisor import Supervisor
    from tests.worker.conftest import build_awq_smollm2, build_hf_smollm2, vllm_child_env
    from tests.worker.test_vllm_cpu import CPU_ENV
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 16)          # short answers: the recovery is what is timed
    monkeypatch.setenv(vllm.PYTHON_ENV, vllm_py)
    weights = "awq" if vllm_kernels["awq"] else "float32"
    folder = build_awq_smollm2(vllm_py) if weights == "awq" else build_hf_smollm2(vllm_py)
    plan = Plan(engine="vllm", model_id="smollm2-test", weights_format=weights, gpu_memory_utilization=None,
                max_model_len=2048, enforce_eager=True)

    def launch(plan, _options, on_status):        # vLLM with the CPU build's settings
        spec = vllm.launch_spec(plan, folder, "smollm2", env={**CPU_ENV, **vllm_child_env()},
                                ready_timeout_s=600, stall_timeout_s=300)
        sup = Supervisor(spec, log_path=tmp_path / "vllm.log", on_status=on_status)
        sup.start()
        return sup
    statuses, timeline, readings = Statuses(), [], []

    def said(state, detail):
        statuses(state, detail)
        timeline.append((time.monotonic(), state, detail[:60]))
    rt = EngineRuntime(on_status=said, threads=2, launcher=launch)
    rt.engine.standin = standin.choose             # the real choice and the real llama.cpp launch
    lib, refs = small_library
    try:
        rt.start(plan)
        first_pid, killed = rt.engine.pid, {}

        def kill_enginecore(_text):
            if not killed:                               # the first token streamed: SIGKILL the EngineCore
                killed["at"] = time.monotonic()
                killed["pid"] = kill_enginecores(first_pid)
        answer = rt.ask(lib, refs, "Who are the parties?", mode="retrieval", on_delta=kill_enginecore,
                        on_reading=lambda _r: readings.append(time.monotonic()))
        answered_at = time.monotonic()
        vllm_back = rt.engine.wait_comeback(0)
        assert killed.get("pid"), "no EngineCore found under vLLM's API server"
        assert answer.raw or answer.text
        assert answer.engine.name == "llamacpp", answer.engine       # the stand-in answered …
        assert rt.engine.behind_stand_in() == plan
        # … before vLLM was back: the bound is vLLM's own restart, measured in this run
        assert not vllm_back, "vLLM was ready again before the stand-in answered: nothing gained here"
        (line,) = statuses.restarts()
        assert line.startswith("vLLM stopped; llama.cpp with the embedded model") and "(1 of 3)" in line, line
        kill_to_answer = answered_at - killed["at"]

        assert rt.engine.wait_comeback(600), "vLLM did not come back within 10 minutes"
        standin_pid = rt.engine.pid
        again = rt.ask(lib, refs, "How long does confidentiality last?", mode="retrieval")
        assert again.raw or again.text
        assert again.engine.name == "vllm" and rt.engine.behind_stand_in() is None    # switched back
        assert rt.engine.pid != standin_pid and not pid_alive(standin_pid)                 # the stand-in stopped
        assert any(state == "ready" and detail.startswith("vLLM answers again") for state, detail in statuses)
        back = rt.engine.recoveries[-1]
        ready_s = back["restart_s"]                       # vLLM's restart, from its death to ready
        assert back["kind"] == "back" and kill_to_answer < ready_s
        # killed again between answers: the stand-in's speed is known now (measured once above)
        assert kill_enginecores(rt.engine.pid)
        second_kill = time.monotonic()
        third = rt.ask(lib, refs, "Which law governs it?", mode="retrieval")
        second_kill_to_answer = time.monotonic() - second_kill
        assert third.engine.name == "llamacpp" and rt.engine.behind_stand_in() == plan
        line = statuses.restarts()[-1]        # "had stopped" or "stopped": whether its API server had exited yet
        assert "llama.cpp with the embedded model" in line and "(2 of 3)" in line, line
        assert rt.engine.wait_comeback(600)      # nothing left starting when the test stops the engine
        after_kill = [(round(t - killed["at"], 2), state, detail) for t, state, detail in timeline if t >= killed["at"]]
        print("\nafter the kill:", *after_kill, f"stand-in reading began at {round(readings[1] - killed['at'], 2)} s",
              sep="\n  ")
        record_figure("vLLM EngineCore killed mid-answer, llama.cpp stand-in",
                      stand_in_reading_began_s=round(readings[1] - killed["at"], 2),
                      between_answers_kill_to_answer_s=round(second_kill_to_answer, 2),
                      kill_to_answer_s=round(kill_to_answer, 2), stand_in_ready_s=rt.engine.recoveries[0]["restart_s"],
                      vllm_back_s=round(ready_s, 2), stand_in=rt.engine.recoveries[0].get("stand_in"),
                      weights=weights, next_answer_engine=again.engine.name,
                      stand_in_answer_ttft_s=answer.timing.ttft_s, stand_in_answer_total_s=answer.timing.total_s,
                      prompt_tokens=answer.usage.prompt_tokens)
    finally:
        rt.stop()


