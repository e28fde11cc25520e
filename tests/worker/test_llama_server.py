"""Our llama.cpp worker over real HTTP with the embedded SmolLM2 model."""
from __future__ import annotations

import http.client
import json
import threading
import time

import pymupdf
import pytest

from app.core.models.catalogue import load_catalogue, local_path
from app.worker import engine_errors as errors
from app.worker.client import ChatClient
from tests.support.corpus import corpus_path
from tests.support.llama_worker import start_worker

pytestmark = pytest.mark.slow
PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age"],
          "properties": {"name": {"type": "string", "maxLength": 40}, "age": {"type": "integer"}}}


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("llama-worker")
    sup = start_worker(tmp / "kv", n_ctx=2048, log_path=tmp / "worker.log")
    yield sup
    sup.stop()


@pytest.fixture
def client(worker) -> ChatClient:
    return ChatClient(worker.spec.base_url, worker.spec.api_key, "smollm2", timeout_s=120)


def post(worker, path: str, body: dict, key: str | None = "default") -> tuple[int, bytes]:
    spec = worker.spec
    conn = http.client.HTTPConnection("127.0.0.1", spec.extra["port"], timeout=300)   # a hang guard
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {spec.api_key if key == 'default' else key}"
    conn.request("POST" if body is not None else "GET", path, json.dumps(body) if body is not None else None, headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


HELLO = [{"role": "user", "content": "What colour is the sky on a clear day?"}]


def test_non_streamed_completion_has_openai_shape(worker):
    status, data = post(worker, "/v1/chat/completions", {"messages": HELLO, "max_tokens": 12})
    assert status == 200
    reply = json.loads(data)
    choice = reply["choices"][0]
    assert reply["object"] == "chat.completion" and choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] and choice["finish_reason"] in ("stop", "length")
    usage = reply["usage"]
    assert usage["prompt_tokens"] > 5 and 0 < usage["completion_tokens"] <= 12
    assert "cached_tokens" in usage["prompt_tokens_details"]


def test_streamed_completion_is_sse_with_done_and_usage(worker):
    status, data = post(worker, "/v1/chat/completions", {"messages": HELLO, "max_tokens": 12, "stream": True,
                                                         "stream_options": {"include_usage": True}})
    assert status == 200
    events = [line[6:] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    assert chunks[-2]["choices"][0]["finish_reason"] in ("stop", "length")
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1])
    assert text.strip()


def test_client_streams_deltas_and_reports_usage(client):
    deltas: list[str] = []
    result = client.chat(HELLO, max_tokens=16, on_delta=deltas.append)
    assert "".join(deltas) == result.text and len(deltas) > 1
    assert result.completion_tokens > 0 and result.prompt_tokens > 5
    assert 0 < result.ttft_s <= result.total_s


def test_json_schema_output_parses_with_the_right_keys(client, worker):
    result = client.chat([{"role": "user", "content": "Describe a person called Ada as JSON."}],
                         json_schema=PERSON, max_tokens=60)
    person = json.loads(result.text)
    assert set(person) == {"name", "age"} and isinstance(person["age"], int)
    # llama.cpp's own form: json_object + schema
    status, data = post(worker, "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "A person, as JSON."}], "max_tokens": 60,
        "response_format": {"type": "json_object", "schema": PERSON}})
    assert status == 200
    assert set(json.loads(json.loads(data)["choices"][0]["message"]["content"])) == {"name", "age"}


def test_tokenize_counts_the_prompt_exactly(client):
    count = client.count_tokens(HELLO)
    assert count == client.chat(HELLO, max_tokens=2).prompt_tokens
    longer = client.count_tokens(HELLO + [{"role": "assistant", "content": "Blue."},
                                          {"role": "user", "content": "Why?"}])
    assert longer > count + 3


def test_api_key_is_required_on_v1_but_not_on_health(worker):
    assert post(worker, "/v1/chat/completions", {"messages": HELLO}, key=None)[0] == 401
    assert post(worker, "/v1/chat/completions", {"messages": HELLO}, key="wrong")[0] == 401
    assert post(worker, "/v1/models", None, key=None)[0] == 401
    status, data = post(worker, "/v1/models", None)
    assert status == 200 and json.loads(data)["data"][0]["id"] == "smollm2"
    assert post(worker, "/health", None, key=None)[0] == 200
    with pytest.raises(errors.AuthFailed):
        ChatClient(worker.spec.base_url, "wrong-key", "smollm2").chat(HELLO, max_tokens=2)


def test_metrics_count_requests_and_kv_use(client):
    before = client.metrics()
    client.chat(HELLO, max_tokens=4)
    after = client.metrics()
    assert after["pagewise_requests_total"] == before["pagewise_requests_total"] + 1
    assert after["pagewise_generation_tokens_total"] > before["pagewise_generation_tokens_total"]
    assert 0 < after["pagewise_kv_cache_usage_ratio"] <= 1 and after["pagewise_n_ctx"] == 2048
    assert after["pagewise_prompt_progress_tokens"] == after["pagewise_prompt_progress_total"]  # read it all


def test_bad_requests_get_400_with_a_message(client, worker):
    with pytest.raises(errors.BadRequest, match="context holds 2048"):
        client.chat([{"role": "user", "content": "word " * 3000}], max_tokens=4)
    status, data = post(worker, "/v1/chat/completions", {"messages": HELLO, "response_format": {"type": "xml"}})
    assert status == 400 and "response_format" in json.loads(data)["error"]["message"]
    assert post(worker, "/v1/chat/completions", {"nothing": 1})[0] == 400


def test_stop_strings_and_seed_are_honoured(worker):
    body = {"messages": [{"role": "user", "content": "Count from 1 to 20, separated by commas."}],
            "max_tokens": 60, "temperature": 0.9, "seed": 1234}
    texts = [json.loads(post(worker, "/v1/chat/completions", body)[1])["choices"][0]["message"]["content"]
             for _ in range(2)]
    # The first request reads the prompt cold, the second finds it cached: the same seed must
    # still give the same sample (a seeded request's last token is evaluated on its own, so the
    # logits do not depend on the batch shape; AVX2 CPUs rounded the two differently).
    assert texts[0] == texts[1] and len(texts[0]) > 10
    middle = len(texts[0]) // 2
    stop = texts[0][middle:middle + 3]                        # a stop string the answer will reach
    stopped = json.loads(post(worker, "/v1/chat/completions", {**body, "stop": [stop]})[1])["choices"][0]
    assert stopped["message"]["content"] == texts[0][:texts[0].find(stop)]
    assert stopped["finish_reason"] == "stop"


def test_repeat_penalty_from_the_client_breaks_a_loop(worker):
    """A model's penalty (models.toml `repeat_penalty`) travels with each request: SmolLM2
    asked to continue a counting pattern loops on "1." without one, and less with 1.15."""
    penalty = 1.15
    messages = [{"role": "user", "content": "Continue the list exactly: 1.1.1.1.1.1.1.1.1.1.1.1"}]
    texts = {}
    for p in (1.0, penalty):
        client = ChatClient(worker.spec.base_url, worker.spec.api_key, "smollm2", timeout_s=120, repeat_penalty=p)
        texts[p] = client.chat(messages, max_tokens=48).text
    assert texts[1.0].count("1.1.1.1") >= 5                # the loop this guards against
    assert texts[penalty].count("1.1.1.1") < texts[1.0].count("1.1.1.1")


def test_cancel_stops_generation_on_the_server(client):
    cancel, seen = threading.Event(), []

    def on_delta(text):
        seen.append(text)
        if len(seen) == 3:
            cancel.set()

    before = client.metrics()["pagewise_generation_tokens_total"]
    with pytest.raises(errors.Cancelled):
        client.chat([{"role": "user", "content": "Tell a very long story."}], max_tokens=1500,
                    temperature=0.8, on_delta=on_delta, cancel=cancel)
    deadline = time.monotonic() + 10              # the worker notices the closed socket and stops
    while client.metrics()["pagewise_requests_running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.metrics()["pagewise_requests_running"] == 0
    assert client.metrics()["pagewise_generation_tokens_total"] - before < 100
    assert client.chat(HELLO, max_tokens=4).completion_tokens > 0     # and serves the next one


def mnda_text() -> str:
    with pymupdf.open(corpus_path("contracts-en/common-paper-mnda.pdf")) as doc:
        return "\n".join(f"[p. {i + 1}]\n{page.get_text()}" for i, page in enumerate(doc))


def test_follow_up_and_restart_reuse_the_document_prefix(tmp_path):
    """~2,000-token document: the follow-up reuses the in-memory KV, a restarted worker the disk KV."""
    document = mnda_text()[:9000]
    system = {"role": "system", "content": f"Answer from this document.\n\n{document}"}

    def ask(sup, question):
        client = ChatClient(sup.spec.base_url, sup.spec.api_key, "smollm2", timeout_s=600)
        return client.chat([system, {"role": "user", "content": question}], max_tokens=8), client

    sup = start_worker(tmp_path / "kv", log_path=tmp_path / "w.log")
    try:
        first, _ = ask(sup, "Who are the parties?")
        follow, _ = ask(sup, "How long does the agreement last?")
    finally:
        sup.stop()
    sup = start_worker(tmp_path / "kv", log_path=tmp_path / "w.log")
    try:
        again, client = ask(sup, "What law governs the agreement?")
        restores = client.metrics()["pagewise_disk_cache_restores_total"]
    finally:
        sup.stop()
    print(f"\nTTFT, {first.prompt_tokens}-token prompt, SmolLM2-135M on this CPU: first {first.ttft_s:.2f} s; "
          f"follow-up {follow.ttft_s:.2f} s (cached {follow.cached_tokens}); after restart {again.ttft_s:.2f} s "
          f"(cached {again.cached_tokens}, from disk)")
    assert 1500 < first.prompt_tokens < 4096 and first.cached_tokens == 0
    assert follow.cached_tokens > 0.9 * follow.prompt_tokens
    assert again.cached_tokens > 0.9 * again.prompt_tokens and restores == 1
    # the cached-token counts above are the proof; the times (printed) only have to be in order
    assert follow.ttft_s < first.ttft_s and again.ttft_s < first.ttft_s


def test_quotes_offered_as_an_enum_come_back_verbatim_in_any_script(client):
    """The answer schema lists the prompt's sentences as the only quotes: what comes back
    is one of them, character for character, Chinese and curly quotes included (spelled
    as UTF-8 in the grammar, not as \\u escapes the model would have to choose)."""
    from app.core.answer import prompts
    quotes = ["当事人可以约定一方违约时应当根据违约情况向对方支付一定数额的违约金。",
              'Provider will use commercially reasonable efforts to keep the "Service" available.']
    schema = prompts.answer_schema(quotes, prompts.answer_chars("zh", 400))
    result = client.chat([{"role": "user", "content": "违约金可以约定吗？请用JSON回答，并引用原文：" + quotes[0]}],
                         json_schema=schema, max_tokens=400)
    data = json.loads(result.text)                   # the bounded answer leaves room for the citations
    assert len(data["answer"]) <= prompts.answer_chars("zh", 400)
    assert all(c["quote"] in quotes for c in data["citations"])


def test_the_answer_begins_in_the_questions_language(client):
    """Issue 33: the embedded model answered a Chinese question in English ("The document does
    not say.") whatever the prompt said; the schema's pattern holds the answer's first letter to
    the question's script, after at most a few opening marks, and keeps its length bound."""
    import re

    from app.core.answer import prompts
    english, chinese = ("The Receiving Party shall keep the Confidential Information secret for two years.",
                        "当事人可以约定一方违约时应当根据违约情况向对方支付一定数额的违约金。")
    for page, question, lang, letter in ((english, "保密义务持续多久？", "zh", r"[\u4e00-\u9fff]"),
                                          (chinese, "Can the parties agree on a penalty?", "en", r"[A-Za-z]")):
        schema = prompts.answer_schema([page], 120, lang)
        result = client.chat([{"role": "user", "content": f"[doc 1, p. 1] {page}\n\n{question} Answer in JSON."}],
                             json_schema=schema, max_tokens=200)
        data = json.loads(result.text)
        first = re.search(r"[A-Za-z\u4e00-\u9fff]", data["answer"])
        assert first and re.fullmatch(letter, first.group()), data["answer"]
        assert first.start() <= prompts.LEAD_CHARS and len(data["answer"]) <= 120


def test_grammar_keeps_utf8_constants_and_a_bounded_cache():
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    from app.core.answer import prompts
    from app.worker.llama import chat as llama_chat
    quotes = ["违约金不得超过损失。", "the “Service” works", '13.18 "Framework Terms" means', "a \\ b"]
    gbnf = llama_chat.schema_to_gbnf(prompts.answer_schema(quotes, 300))
    assert "违约金不得超过损失。" in gbnf and "“Service”" in gbnf and "\\u" not in gbnf
    llm = Llama(str(local_path(load_catalogue().default)), n_ctx=256, verbose=False, vocab_only=True)
    # ASCII quotes and backslashes escaped for GBNF: llama.cpp's own parser accepts it
    assert llama_chat.grammar_compiles(llm, LlamaGrammar.from_string(gbnf, verbose=False))
    engine = llama_chat.ChatEngine(llm)
    for i in range(llama_chat.GRAMMARS_CACHE + 3):
        engine._grammar(prompts.answer_schema([f"sentence number {i} of the page."], 300))
    assert len(engine._grammars) == llama_chat.GRAMMARS_CACHE


def test_every_answer_bound_compiles_in_llama_cpp():
    """llama.cpp parses a grammar only when a reply starts, and refuses a bounded repetition
    that unrolls into more than 2,000 rules: the answer's pattern did past ~1,000 characters, which
    a real model's English prompt (~4.8 characters a token) reached, and the worker died on an
    H100 comparing two DPAs. Every bound answer_chars can give compiles, in both scripts."""
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    from app.core.answer import prompts
    from app.worker.llama import chat as llama_chat
    llm = Llama(str(local_path(load_catalogue().default)), n_ctx=256, verbose=False, vocab_only=True)
    assert prompts.answer_chars("en", 400, 6.0) == prompts.MAX_ANSWER_CHARS
    bounds = sorted({prompts.answer_chars(lang, 400, ratio) for lang in ("en", "zh")
                     for ratio in (None, 0.3, 1.0, 2.5, 4.0, 4.8, 6.0, 9.0)})
    assert bounds[-1] == prompts.MAX_ANSWER_CHARS
    for chars in bounds:
        for lang in ("en", "zh"):
            for schema in (prompts.answer_schema(["One sentence."], chars, lang),
                           prompts.card_schema(["E1", "E2", "E3"], chars, lang)):
                grammar = LlamaGrammar.from_string(llama_chat.schema_to_gbnf(schema), verbose=False)
                assert llama_chat.grammar_compiles(llm, grammar), (chars, lang)


def test_a_grammar_llama_cpp_refuses_is_a_400_and_the_worker_lives_on(client):
    from app.core.answer import prompts
    too_long = prompts.card_schema(["E1", "E2"], 2000, "en")       # the bound before MAX_ANSWER_CHARS
    with pytest.raises(errors.BadRequest, match="refused the reply's grammar"):
        client.chat(HELLO, max_tokens=8, json_schema=too_long)
    assert client.chat(HELLO, max_tokens=4).text                   # the same worker still answers
