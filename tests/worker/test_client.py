"""ChatClient against the fake server (faults) over real sockets: typed one-line errors."""
from __future__ import annotations

import socket
import subprocess
import threading
import time

import pytest

from app.worker import engine_errors as errors
from app.worker.client import LENGTH_CUT, LOOP_CUT, ChatClient, kv_cache_usage, parse_metrics
from app.worker.ports import free_port
from app.worker.supervisor import Supervisor
from tests.support.fake_server import fake_spec

PING = [{"role": "user", "content": "ping"}]


@pytest.fixture
def fake():
    sup = Supervisor(fake_spec())
    sup.start()
    yield sup
    sup.stop()


@pytest.fixture
def hanging():
    """A server that accepts connections and never answers."""
    spec = fake_spec("--hang")
    proc = subprocess.Popen(spec.argv)
    port = spec.extra["port"]
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield spec
    proc.kill()
    proc.wait()


def client_for(spec, **kw) -> ChatClient:
    return ChatClient(spec.base_url, spec.api_key, spec.model_name, **kw)


def test_chat_round_trip_with_deltas_and_usage(fake):
    deltas = []
    result = client_for(fake.spec).chat(PING, on_delta=deltas.append)
    assert result.text.strip() == "echo: ping" and "".join(deltas) == result.text
    assert result.prompt_tokens == 1 and result.finish_reason == "stop" and result.ttft_s <= result.total_s
    assert client_for(fake.spec).health() and client_for(fake.spec).models() == ["fake"]


def test_nothing_listening_is_worker_unavailable():
    client = ChatClient(f"http://127.0.0.1:{free_port()}/v1", "k", "m")
    with pytest.raises(errors.WorkerUnavailable, match="no engine answers"):
        client.chat(PING)
    assert client.health() is False


def test_wrong_key_is_auth_failed(fake):
    with pytest.raises(errors.AuthFailed, match="401"):
        ChatClient(fake.spec.base_url, "wrong", "fake").chat(PING)


def test_silent_server_times_out(hanging):
    began = time.monotonic()
    with pytest.raises(errors.RequestTimeout, match="sent nothing for 1 s"):     # its own 1 s timeout fired
        client_for(hanging, timeout_s=1).chat(PING)
    assert 0.9 <= time.monotonic() - began < 30        # not before it; the bound is a hang guard


def test_cancel_unblocks_a_request_waiting_for_its_first_token(hanging):
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    with pytest.raises(errors.Cancelled):              # not RequestTimeout: the cancel came first
        client_for(hanging, timeout_s=60).chat(PING, cancel=cancel)
    assert cancel.is_set()


def test_server_dying_mid_request_is_worker_died():
    sup = Supervisor(fake_spec("--crash-after", "0"))
    sup.start()
    try:
        with pytest.raises(errors.WorkerDied) as info:
            client_for(sup.spec).chat(PING)
        assert "\n" not in str(info.value)
    finally:
        sup.stop()


def test_parse_metrics_sums_labelled_series_and_finds_kv_use():
    text = """# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="qwen"} 0.25
vllm:num_requests_running{engine="0",model_name="qwen"} 1.0
vllm:num_requests_running{engine="1",model_name="qwen"} 2.0
vllm:prompt_tokens_total{model_name="qwen"} 1.5e3
"""
    metrics = parse_metrics(text)
    assert metrics["vllm:num_requests_running"] == 3.0 and metrics["vllm:prompt_tokens_total"] == 1500
    assert kv_cache_usage(metrics) == 0.25
    assert kv_cache_usage({"pagewise_kv_cache_usage_ratio": 0.5}) == 0.5 and kv_cache_usage({}) is None


def _stream(*pieces: str, finish: str, usage: dict | None = None) -> list[dict]:
    events = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return events + ([{"choices": [], "usage": usage}] if usage else [])


def test_a_reply_ended_by_its_length_or_a_loop_says_so_in_one_line():
    """A cut answer carries its reason (the answer's warning line); our worker's loop guard says "loop"."""
    client = ChatClient("http://127.0.0.1:9/v1", "k", "m")
    usage = {"prompt_tokens": 9, "completion_tokens": 3}
    length = client._collect(iter(_stream('{"answer":"a', "b", "c", finish="length", usage=usage)), time.perf_counter(),
                             None, None)
    loop = client._collect(iter(_stream('{"answer":"a"', ',"citations":[]}', finish="loop", usage=usage)),
                           time.perf_counter(), None, None)
    done = client._collect(iter(_stream('{"answer":"a"}', finish="stop", usage=usage)), time.perf_counter(), None, None)
    assert (length.cut, loop.cut, done.cut) == (LENGTH_CUT, LOOP_CUT, "")
    assert "\n" not in LENGTH_CUT + LOOP_CUT


def test_usage_is_counted_from_the_stream_when_the_engine_sends_none():
    client = ChatClient("http://127.0.0.1:9/v1", "k", "m")
    result = client._collect(iter(_stream("one", " two", " three", finish="stop")), time.perf_counter(), None, None)
    assert result.completion_tokens == 3 and result.prompt_tokens == 0


def test_an_engine_without_tokenize_is_estimated_and_a_dead_one_is_a_failure(fake):
    from app.core.answer import qa
    client = client_for(fake.spec)
    with pytest.raises(NotImplementedError, match="no /tokenize"):
        client.count_tokens(PING)
    assert qa.count_tokens(client, PING) == qa.estimate_tokens("ping") + 16
    gone = ChatClient(f"http://127.0.0.1:{free_port()}/v1", "k", "m")
    with pytest.raises(errors.WorkerUnavailable):        # not sized by an estimate and asked anyway
        qa.count_tokens(gone, PING)
