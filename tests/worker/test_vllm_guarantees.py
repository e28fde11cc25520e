"""The vLLM path holds llama.cpp's guarantees (issue 30): health means healthy, a dead EngineCore
is restarted and the question asked again, a reply the engine cut keeps its text and names the
engine's reason, a looping answer is ended by the client, and the structured-output path is warm
before the first question. fake_vllm.py injects what the CPU engine cannot make (llguidance giving
up, an EngineCore death at a chosen moment); the slow test kills the real CPU engine's EngineCore.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.core.answer import qa
from app.core.library import Library
from app.core.plan.types import Plan
from app.worker.client import LOOP_CUT
from app.worker.engines import vllm
from app.worker.supervisor import Supervisor
from tests.worker.test_recovery import SAMPLE

FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_vllm.py")
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    lib = Library(tmp_path_factory.mktemp("lib") / "library.sqlite")
    yield lib, [qa.DocRef(1, lib.add(SAMPLE).id, str(SAMPLE))]
    lib.close()


@pytest.fixture
def fake_server(tmp_path):
    started = []

    def start(*flags: str) -> Supervisor:
        (tmp_path / "m").mkdir(exist_ok=True)
        (tmp_path / "m" / "config.json").write_text("{}")
        plan = Plan(engine="vllm", model_id="fake", weights_format="awq", gpu_memory_utilization=0.9,
                    max_model_len=4096)
        spec = vllm.launch_spec(plan, tmp_path / "m", "fake", entry=[sys.executable, FAKE], extra_args=flags,
                                ready_timeout_s=30, stall_timeout_s=15)
        sup = Supervisor(spec, log_path=tmp_path / "fake.log")
        sup.start()
        started.append(sup)
        return sup
    yield start
    for sup in started:
        sup.stop()


def test_a_503_from_health_is_unhealthy_though_the_models_list_still_answers(fake_server, tmp_path):
    """vLLM after its EngineCore died: /health 503, /v1/models 200. The client called that healthy."""
    sup = fake_server("--fake-die-mid-answer", str(tmp_path / "died"))
    client = vllm.VllmAdapter().client(sup.spec, 1.0)
    assert client.health()
    reply = client.chat([{"role": "user", "content": "Who?"}])          # the EngineCore dies on it
    assert reply.cut and "EngineCore encountered an issue" in reply.cut
    assert client.models() == ["fake"]                                 # the API server still answers …
    assert client.health() is False                                    # … but the engine is not healthy


def test_an_enginecore_dying_mid_answer_is_restarted_and_the_question_answered(library, vllm_runtime, tmp_path):
    v = vllm_runtime(extra=("--fake-die-mid-answer", str(tmp_path / "died")))
    lib, refs = library
    answer = v.rt.ask(lib, refs, "Who are the parties?", mode="retrieval")
    assert answer.text.startswith("echo:") or answer.raw.startswith("echo:")     # the second incarnation's
    assert v.statuses.restarts() == ["the engine stopped; restarted it (1 of 3) and asked again"]
    assert len(v.rig.plans) == 2 and v.rig.plans[0] == v.rig.plans[1] and not v.steps   # same plan, no downgrade


def test_a_reply_the_engine_cut_keeps_its_text_and_names_the_engines_reason(library, vllm_runtime):
    """vLLM's llguidance gave up after ~226 tokens (ParserTooComplex): the streamed text was
    thrown away and the user read "Internal server error"."""
    v = vllm_runtime(extra=("--fake-cut",))
    lib, refs = library
    answer = v.rt.ask(lib, refs, "Who are the parties?", mode="retrieval")
    assert "Acme Ltd. and Beta LLC." in answer.text
    cut = answer.warnings[0]
    assert "grammar rejected tokens" in cut or "ParserTooComplex" in cut, cut
    assert "\n" not in cut and "Internal server error" not in cut
    assert not v.statuses.restarts() and len(v.rig.plans) == 1          # a request's failure restarts nothing


def test_a_looping_answer_is_ended_by_the_client_and_parses(fake_server):
    sup = fake_server("--fake-loop")
    client = vllm.VllmAdapter().client(sup.spec, 1.0)
    reply = client.chat([{"role": "user", "content": "How long is it?"}], json_schema=SCHEMA, max_tokens=900)
    assert reply.finish_reason == "loop" and reply.cut == LOOP_CUT        # the answer's warning says so
    text, cites = qa.parse_reply(reply.raw if hasattr(reply, "raw") else reply.text)
    assert text == "The document is 5 pages long." and cites == []
    sent = _wait_line(sup, "loop chunks")
    streamed = int(sent.split("streamed ")[1].split()[0])
    assert streamed < 400, sent                                         # the engine stopped generating early
    # usage from the stream (vLLM's continuous usage), though the server never sent its final usage
    assert reply.prompt_tokens == 10 and 1 < reply.completion_tokens <= streamed + 1


CITED = {"type": "object", "properties": {
    "answer": {"type": "string"},
    "citations": {"type": "array", "items": {"type": "object", "properties": {
        "doc": {"type": "string"}, "page": {"type": "integer"}, "quote": {"type": "string"}}}}},
    "required": ["answer", "citations"]}


def test_a_looping_answer_still_gets_its_citations_as_llama_cpps_loop_guard_gives(fake_server):
    """Our llama.cpp worker closes a looping answer string and the grammar goes on to the
    citations; on vLLM the stream is ended, then continued after the closed answer."""
    sup = fake_server("--fake-loop")
    client = vllm.VllmAdapter().client(sup.spec, 1.0)
    reply = client.chat([{"role": "user", "content": "How long is it?"}], json_schema=CITED, max_tokens=900)
    assert reply.finish_reason == "loop" and reply.cut == LOOP_CUT
    data = json.loads(reply.text)
    assert data["citations"] == [{"doc": "nda.pdf", "page": 1, "quote": "The document is 5 pages long."}]
    text, _ = qa.parse_reply(reply.text)
    assert text == "The document is 5 pages long."
    head = _wait_line(sup, "fake: continued after")
    assert head.endswith(""""citations":'""") and "long. " in head     # the closed answer, then the key


def test_vllm_gets_the_catalogue_penalty_as_an_output_only_penalty():
    """vLLM's repetition_penalty also counts the prompt's tokens: the penalty goes as presence_penalty."""
    spec = SimpleNamespace(base_url="http://127.0.0.1:9/v1", api_key="k", model_name="m")
    adapter = vllm.VllmAdapter()
    plain = adapter.client(spec, adapter.repeat_penalty(1.0)).request_fields()
    assert "presence_penalty" not in plain and "repeat_penalty" not in plain
    assert plain["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    fields = adapter.client(spec, adapter.repeat_penalty(1.1)).request_fields()
    assert fields["presence_penalty"] == 1.5 and "repetition_penalty" not in fields


def test_the_structured_output_path_is_warmed_before_the_first_question(vllm_runtime):
    """The first question after each vLLM start paid 0.46 s for llguidance's tokenizer build."""
    from tests.support.waiting import wait_for
    v = vllm_runtime()
    # the engine writes its log line as it answers the warm-up: read it once it is there (a busy
    # machine let the test read the log first, seen in a full fast-lane run)
    wait_for(lambda: any("fake: structured request" in line for line in v.rt.engine.log_tail()), 5.0)
    assert any("fake: structured request" in line for line in v.rt.engine.log_tail())


def _wait_line(sup: Supervisor, words: str, timeout_s: float = 5.0) -> str:
    from tests.support.waiting import wait_for
    wait_for(lambda: any(words in line for line in sup.tail()), timeout_s)
    return next(line for line in sup.tail() if words in line)


def test_llama_cpps_errors_and_their_continuation_lines_stay_in_the_worker_log_after_load():
    """ggml's CUDA error is three lines (ERROR, then continuations) before its abort; the worker
    turned llama.cpp's log down after load and the reason never reached the log."""
    from app.worker.llama import server
    said = [server.engine_line(level, text) for level, text in (
        # ggml's levels: 1 debug, 2 info, 3 warn, 4 error, 5 continuation (ggml.h ggml_log_level)
        (2, b"llama_perf_context_print: eval time = 12 ms\n"),
        (4, b"CUDA error: an illegal memory access was encountered\n"),
        (5, b"  current device: 0, in function ggml_cuda_graph_launch\n"),
        (2, b"srv  log: a request\n"), (5, b" and its end\n"))]
    assert said == [None, b"CUDA error: an illegal memory access was encountered\n",
                    b"  current device: 0, in function ggml_cuda_graph_launch\n", None, None]


def test_the_engines_reason_is_the_telling_line_of_its_log():
    from app.worker import engine_log
    tail = ["pagewise-worker: listening on http://127.0.0.1:1", "CUDA error: an illegal memory access was encountered",
            "  current device: 0, in function launch at ggml-cuda.cu:2300",
            "/src/ggml/ggml-cuda/ggml-cuda.cu:109: CUDA error", "/lib/libggml-base.so.0(ggml_abort+0x15b)[0x7f]"]
    assert engine_log.reason(lambda: tail, wait_s=0) == "CUDA error: an illegal memory access was encountered"


# --- the real vLLM engine (CPU build): its EngineCore killed mid-answer and between answers -----

@pytest.mark.slow
def test_real_vllm_enginecore_killed_mid_answer_and_between_answers_is_restarted_and_answers(
        vllm_py, vllm_kernels, tmp_path, monkeypatch):
    import time

    from app.worker import recovery
    from tests.support.enginecore import kill_enginecores
    from tests.worker.conftest import start_real_vllm
    said = []
    engine = start_real_vllm(vllm_py, vllm_kernels, tmp_path, monkeypatch,
                             on_status=lambda state, detail: said.append((state, detail)))
    # an answer long enough that the kill at its first token lands while the engine still writes it
    messages = [{"role": "user", "content": "Count from one to sixty in words, separated by commas."}]

    def ask(on_delta=None):
        return recovery.ask(engine, lambda cut: engine.chat(messages, json_schema=SCHEMA, max_tokens=160,
                                                            cancel=cut, on_delta=on_delta))
    try:
        killed = {}

        def kill_once(_delta):
            if not killed:
                killed["pids"] = kill_enginecores(engine.pid)
        began = time.monotonic()
        reply = ask(on_delta=kill_once)                               # mid-answer
        mid_s = time.monotonic() - began
        assert killed["pids"] and reply.text and engine.recoveries, (killed, reply, said)
        assert kill_enginecores(engine.pid)                            # between answers
        time.sleep(1.0)
        began = time.monotonic()
        again = ask()
        between_s = time.monotonic() - began
        assert again.text and len(engine.recoveries) == 2, said
        print(f"\nvLLM CPU: EngineCore killed mid-answer → answered in {mid_s:.1f} s; between answers → "
              f"next answer in {between_s:.1f} s; restarts {engine.recoveries}")
    finally:
        engine.stop()


def test_a_gpu_build_of_llama_cpp_reads_with_flash_attention_and_a_cpu_build_as_before():
    """Issue 30: without flash attention llama.cpp's CUDA graphs died on the H200 past ~2,400
    prompt tokens (docs/gpu-results.md). The GPU build is the hardware this machine lacks:
    the module's one answer is injected; the real CPU build must keep flash attention off."""
    import types

    import llama_cpp

    from app.worker.llama import server
    assert server.gpu_flash_attention(types.SimpleNamespace(llama_supports_gpu_offload=lambda: True)) is True
    assert server.gpu_flash_attention(llama_cpp) is bool(llama_cpp.llama_supports_gpu_offload()) is False
