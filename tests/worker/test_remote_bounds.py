"""A hostile or broken OpenAI-compatible endpoint, over real HTTP on loopback: its reply is bounded
in size and in time, and a malformed one is a one-line typed error.

Before: an endpoint streaming without end grew the app to 15 GB (every delta kept); a keep-alive
comment every 20 s held the ask for as long as the endpoint liked (the deadline was per read);
`choices: 5` or a list event reached the user as AttributeError/TypeError; a 10 MB answer was
printed whole.
"""
from __future__ import annotations

import json
import resource
import socket
import threading
import time

import pytest

from app.worker import engine_errors as errors
from app.worker.client import ChatClient, MIN_ANSWER_CHARS

HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")


def chunk(content: str) -> bytes:
    return b"data: " + json.dumps({"choices": [{"delta": {"content": content}}]}).encode() + b"\n\n"


def serve(behaviour) -> tuple[str, threading.Event]:
    """A one-connection-at-a-time endpoint on loopback; `behaviour(conn, stop)` writes the reply."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    stop = threading.Event()

    def run():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length")), b"0"))
                body = head.split(b"\r\n\r\n", 1)[1]
                while len(body) < length:
                    body += conn.recv(65536)
                try:
                    behaviour(conn, stop)
                except OSError:
                    pass
        sock.close()

    threading.Thread(target=run, daemon=True).start()
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1", stop


def ask(url: str, **kw):
    client = ChatClient(url, "k", "m", timeout_s=kw.pop("stall", 5), total_s=kw.pop("total", None))
    return client.chat([{"role": "user", "content": "hi"}], max_tokens=kw.pop("max_tokens", 64), **kw)


def in_time(fn, seconds: float):
    """Run fn on a thread; fail (not hang) if it takes longer than `seconds`."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still waiting after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_an_endless_stream_ends_at_the_answer_limit_with_bounded_memory():
    def endless(conn, stop):
        conn.sendall(HEAD)
        while not stop.is_set():
            conn.sendall(chunk("x" * 4096) * 16)
    url, stop = serve(endless)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        result = in_time(lambda: ask(url, max_tokens=512), 30)
    finally:
        stop.set()
    assert result.finish_reason == "length" and len(result.text) <= max(MIN_ANSWER_CHARS, 512 * 16)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024   # KiB: < 100 MB


def test_one_ten_megabyte_answer_is_capped():
    def huge(conn, stop):
        conn.sendall(HEAD + chunk("y" * 900_000) * 12 + b"data: [DONE]\n\n")
    url, stop = serve(huge)
    try:
        result = in_time(lambda: ask(url, max_tokens=100), 30)
    finally:
        stop.set()
    assert len(result.text) == MIN_ANSWER_CHARS and result.finish_reason == "length"


def test_one_line_over_a_megabyte_is_refused():
    def one_line(conn, stop):
        conn.sendall(HEAD + b"data: " + b"z" * (3 << 20) + b"\n\n")
    url, stop = serve(one_line)
    try:
        with pytest.raises(errors.ServerError, match="over 1 MB"):
            in_time(lambda: ask(url), 30)
    finally:
        stop.set()


def test_keep_alives_do_not_hold_the_answer_past_the_stall_deadline():
    def keep_alive(conn, stop):
        conn.sendall(HEAD)
        while not stop.is_set():
            conn.sendall(b": keep-alive\n\n")
            time.sleep(0.5)                 # the was every 20 s against a 120 s deadline
    url, stop = serve(keep_alive)
    began = time.monotonic()
    try:
        with pytest.raises(errors.RequestTimeout, match="no progress for 2 s"):
            in_time(lambda: ask(url, stall=2), 20)
    finally:
        stop.set()
    assert time.monotonic() - began < 6


def test_a_remote_answer_has_a_total_deadline():
    def trickle(conn, stop):                 # progress of a sort, forever: a character a second
        conn.sendall(HEAD)
        while not stop.is_set():
            conn.sendall(chunk("a"))
            time.sleep(0.3)
    url, stop = serve(trickle)
    try:
        with pytest.raises(errors.RequestTimeout, match="within 2 s"):
            in_time(lambda: ask(url, stall=5, total=2), 20)
    finally:
        stop.set()


@pytest.mark.parametrize("event", [{"choices": 5}, [1, 2], {"choices": [{"delta": "text"}]},
                                   {"choices": [{"delta": {"content": 7}}]}, {"choices": ["a"]},
                                   {"choices": [], "usage": [1]}, {"choices": [], "usage": {"prompt_tokens": "many"}},
                                   "just a string"])
def test_malformed_events_are_one_typed_line(event):
    def malformed(conn, stop):
        conn.sendall(HEAD + chunk("fine ") + b"data: " + json.dumps(event).encode() + b"\n\n")
    url, stop = serve(malformed)
    try:
        with pytest.raises(errors.ServerError) as caught:
            in_time(lambda: ask(url), 20)
    finally:
        stop.set()
    assert "malformed event" in str(caught.value) and "\n" not in str(caught.value)
