"""HTTP side of our llama.cpp worker: OpenAI routes, SSE streaming, API key, /metrics.

stdlib ThreadingHTTPServer: health and metrics answer on their own threads while a
generation runs; generations themselves are serialised by one lock (one llama.cpp context).
Another local account can reach the port, so nothing it does without the key may hold the
worker (issue 32, points 6 and 7):
- Connection threads are bounded (MAX_CONNECTIONS). A connection counts as busy only once a whole
  request head (line and headers) arrived; one still waiting for or sending its head is the first
  closed when a new connection needs its place (a 503 only when every one is busy).
- Once a request's first byte arrives, the head and the body must be in within REQUEST_DEADLINE_S
  (a whole-request deadline, not a per-recv timeout a byte every few seconds resets).
- Host and key are checked on the head, before the body is read; a refused body is read and
  thrown away in pieces (never held), so refusals cost no memory.
- Bodies held at once are bounded per process (BODY_BUDGET); past it a 503 "retry".
An idle keep-alive connection is closed after IDLE_TIMEOUT_S. Every route but the bare /health
needs the key and every route checks the Host header (a web page reaching 127.0.0.1 through DNS
rebinding sends its own host name).
"""
from __future__ import annotations

import hmac
import json
import math
import os
import re
import select
import socket
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from app.worker import protocol

MAX_CONNECTIONS = 32          # connection threads at once: the app uses 2-4 (answer, health, metrics)
IDLE_TIMEOUT_S = float(os.environ.get("PAGEWISE_WORKER_IDLE_S") or 15)   # the env var: tests
REQUEST_DEADLINE_S = float(os.environ.get("PAGEWISE_WORKER_REQUEST_S") or 30)   # head + body
MAX_BODY = 64 * 1024**2       # a whole-document prompt is a few MB of JSON
BODY_BUDGET = 2 * MAX_BODY    # request bodies held at once, all connections together


def log(msg: str) -> None:
    try:
        print(f"{protocol.LOG_PREFIX} {msg}", flush=True)
    except OSError:          # the supervisor's end of the pipe is gone; answering matters more
        pass


class Metrics:
    """Counters for /metrics (Prometheus text format)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.c = dict(requests_total=0, requests_failed_total=0, prompt_tokens_total=0,
                      generation_tokens_total=0, cached_prompt_tokens_total=0, prefix_cache_hits_total=0,
                      disk_cache_restores_total=0, prompt_seconds_total=0.0, generation_seconds_total=0.0)
        self.running = 0

    def add(self, usage) -> None:
        with self.lock:
            self.c["requests_total"] += 1
            self.c["prompt_tokens_total"] += usage.prompt_tokens
            self.c["generation_tokens_total"] += usage.completion_tokens
            self.c["cached_prompt_tokens_total"] += usage.cached_tokens
            self.c["prefix_cache_hits_total"] += usage.cached_tokens > 0
            self.c["disk_cache_restores_total"] += usage.restored_tokens > 0
            self.c["prompt_seconds_total"] += usage.prompt_s
            self.c["generation_seconds_total"] += usage.generate_s

    def render(self, engine) -> str:
        llm = engine.llm
        with self.lock:
            values = {**self.c, "requests_running": self.running}
        done, todo = engine.progress
        values.update(prompt_progress_tokens=done, prompt_progress_total=todo)   # "reading: 45%"
        n_ctx = llm.n_ctx()
        values.update(n_ctx=n_ctx, kv_cache_used_cells=llm.n_tokens, kv_cache_usage_ratio=llm.n_tokens / n_ctx)
        values.update(prefill_calibrated_tokens_per_second=round(getattr(engine, "measured_prefill_tps", 0.0), 1))
        lines = []
        for name, value in values.items():
            kind = "counter" if name.endswith("_total") else "gauge"
            metric = protocol.METRIC_PREFIX + name
            lines += [f"# TYPE {metric} {kind}", f"{metric} {value}"]
        return "\n".join(lines) + "\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"          # keep-alive for clients; streams use chunked encoding
    # Every piece of an answer goes out at once: TCP_NODELAY (no Nagle wait behind a delayed ACK)
    # and a buffered wfile flushed once per piece, so the headers, the role chunk and the first
    # token leave in one segment. handle_one_request() flushes whatever a handler leaves behind.
    disable_nagle_algorithm = True
    wbufsize = 64 * 1024
    server: "WorkerServer"
    timeout = IDLE_TIMEOUT_S               # socket timeout: an idle keep-alive connection ends here
    _streaming = False
    _answered = False                      # one answer per request: set by _send / _start_stream
    _allow = ""                            # the Allow header of a 405

    def log_message(self, fmt, *args):    # no per-request noise (and never prompt text) in the log
        pass

    # --- routing --------------------------------------------------------------------------------
    # path → {method: handler name}. Every request gets exactly one answer. Host, key, route and
    # method are checked on the head; a refused body is then read and dropped (so the keep-alive
    # connection stays in step), an accepted one read whole for its handler.
    ROUTES = {
        "/health": {"GET": "_health"},
        "/metrics": {"GET": "_metrics"},
        "/v1/models": {"GET": "_models"},
        "/models": {"GET": "_models"},
        "/v1/models/": {"GET": "_model"},            # prefix: /v1/models/{id} (openai's models.retrieve)
        "/models/": {"GET": "_model"},
        "/v1/chat/completions": {"POST": "_chat"},
        "/chat/completions": {"POST": "_chat"},
        "/tokenize": {"POST": "_tokenize_route"},
    }
    OPEN_PATHS = ("/health",)                        # the bare liveness probe: no key, says only "ok"

    def __getattr__(self, name: str):
        # BaseHTTPRequestHandler answers a method without a do_X with a 501 and leaves its body
        # unread: route every method instead (a 405 with Allow, once the body is drained)
        if name.startswith("do_"):
            return lambda: self._route(name[3:])
        raise AttributeError(name)

    def _route(self, method: str) -> None:
        self._answered = False
        self.server.connections.busy(self.connection)        # a whole head is in: not evictable
        length = self._body_length()
        if length is None:
            return                                   # refused (too big, chunked, bad length): answered
        path = self.path.split("?")[0]
        refusal = self._refusal(method, path, length)
        if refusal is None and not self.server.bodies.take(length):
            refusal = 503, "the worker is receiving other large requests; retry"
        if refusal is not None:                      # Host, key, route: decided on the head alone
            # a refused body is read and dropped as an evictable connection: trickling it
            # in without the key holds no place another connection needs
            self.server.connections.waiting(self.connection)
            self._discard_body(length)
            return self._error(*refusal)
        try:
            body = self._read_body(length)
            self.server.deadlines.disarm(self.connection)    # the request is in: now it may take long
            if body is None:
                return
            try:
                getattr(self, self._handler_for(method, path))(path, body)
            finally:
                if not self._answered and not self.wfile.closed:   # a handler that forgot to answer
                    self._error(500, "the worker did not answer this request")
        finally:
            self.server.bodies.give_back(length)

    def _refusal(self, method: str, path: str, length: int) -> tuple[int, str] | None:
        if not self._host_allowed():
            return 403, "the Host header must be 127.0.0.1:PORT or localhost:PORT"
        if path not in self.OPEN_PATHS and not self._authorised():
            return 401, "invalid or missing API key"
        methods = self._methods(path)
        if methods is None:
            return 404, f"no route {path}"
        if method not in methods:
            self._allow = ", ".join(methods)
            return 405, f"{method} is not allowed on {path} (allowed: {self._allow})"
        if path in self.OPEN_PATHS and length:       # no key there: nothing of it is worth holding
            return 400, f"{path} takes no body"
        return None

    def _methods(self, path: str) -> dict | None:
        methods = self.ROUTES.get(path)
        for prefix in ("/v1/models/", "/models/"):
            if methods is None and path.startswith(prefix) and len(path) > len(prefix):
                methods = self.ROUTES[prefix]
        return methods

    def _handler_for(self, method: str, path: str) -> str:
        return self._methods(path)[method]

    def _health(self, path: str, body: bytes) -> None:
        self._json(200, {"status": "ok"})

    def _metrics(self, path: str, body: bytes) -> None:
        self._send(200, self.server.metrics.render(self.server.engine).encode(), "text/plain; version=0.0.4")

    def _model_card(self) -> dict:
        return {"id": self.server.model_name, "object": "model", "created": 0, "owned_by": "pagewise",
                "max_model_len": self.server.engine.llm.n_ctx()}

    def _models(self, path: str, body: bytes) -> None:
        self._json(200, {"object": "list", "data": [self._model_card()]})

    def _model(self, path: str, body: bytes) -> None:
        wanted = urllib.parse.unquote(path.split("models/", 1)[1])
        if wanted != self.server.model_name:
            return self._error(404, f"no model {wanted!r} (this worker serves {self.server.model_name!r})")
        self._json(200, self._model_card())

    def _tokenize_route(self, path: str, body: bytes) -> None:
        request = self._chat_request(body)
        if request is not None:
            self._tokenize(request["messages"])

    def _chat(self, path: str, body: bytes) -> None:
        request = self._chat_request(body)
        if request is None:
            return
        from app.worker.llama.chat import Params, RequestError
        try:
            _check_request_values(request)
            params = Params.from_request(request)
            with self.server.lock:              # one generation at a time
                self._complete(request["messages"], params, bool(request.get("stream")),
                               bool((request.get("stream_options") or {}).get("include_usage")))
        except RequestError as exc:
            self._error(400, str(exc))
        except (BrokenPipeError, ConnectionResetError):
            self._answered = True                # client left; generation already stopped
            self.close_connection = True
        except Exception as exc:                 # one line in the log, a 500 if nothing was sent yet
            log(f"error: chat failed: {type(exc).__name__}: {exc}")
            self.close_connection = True
            if not self._streaming:
                self._error(500, f"generation failed: {exc}")
            self._answered = True

    def _chat_request(self, body: bytes) -> dict | None:
        """The JSON body with its messages' content as plain text, or None once a 400 went out."""
        try:
            request = _valid_text(json.loads(body or b"{}"))
            messages = request["messages"]
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise TypeError
        except (ValueError, KeyError, TypeError, RecursionError):   # RecursionError: [[[[…]]]] nested deep
            self._error(400, "the body must be JSON with a 'messages' list")
            return None
        n = request.get("n")
        if n not in (None, 1):
            self._error(400, f"n={n!r} is not supported: this worker returns one choice per request (n=1)")
            return None
        try:
            request["messages"] = [_text_message(m) for m in messages]
            for m in request["messages"]:
                if not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
                    raise ValueError("each message needs a 'role' and a text 'content'")
        except ValueError as exc:
            self._error(400, str(exc))
            return None
        return request

    # --- chat -----------------------------------------------------------------------------------
    def _complete(self, messages, params, stream: bool, include_usage: bool) -> None:
        srv, rid, created = self.server, f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        base = {"id": rid, "created": created, "model": srv.model_name}
        parts, usage, started = [], None, False
        with srv.metrics.lock:
            srv.metrics.running += 1
        gone = False

        def progress(done: int, total: int) -> None:
            """The prompt was accepted, then every slice read: headers and the role chunk go
            out at once, then SSE comments (`: prompt 1234/5000`, ignored by OpenAI clients) —
            the window's "reading the passages: 45%", and a sign of life for stall deadlines."""
            nonlocal started, gone
            if not stream or gone:
                return
            try:
                if not started:
                    self._start_stream()
                    self._chunk(base, {"role": "assistant", "content": ""}, None)
                    started = True
                self._write_chunk(protocol.progress_comment(done, total))
                self.wfile.flush()
            except OSError:           # the client left: the next cancel check stops the read
                gone = True

        try:
            for delta, usage in srv.engine.chat(messages, params, lambda: gone or self._client_gone(),
                                                on_progress=progress):
                if stream and not started:      # headers only once the prompt was accepted
                    self._start_stream()
                    self._chunk(base, {"role": "assistant", "content": ""}, None)
                    started = True
                if delta:
                    odds = _logprobs(usage) if not parts else None
                    parts.append(delta)
                    if stream:
                        self._chunk(base, {"content": delta}, None, odds)
                if stream and started:
                    self.wfile.flush()
        finally:
            with srv.metrics.lock:
                srv.metrics.running -= 1
        srv.metrics.add(usage)
        log(f"chat: prompt={usage.prompt_tokens} cached={usage.cached_tokens} "
            f"(disk {usage.restored_tokens}) generated={usage.completion_tokens} "
            f"prompt_s={usage.prompt_s:.2f} gen_s={usage.generate_s:.2f} finish={usage.finish_reason}")
        if usage.finish_reason == "cancelled":
            return
        use = _usage_json(usage)
        if stream:
            self._chunk(base, {}, usage.finish_reason)
            if include_usage:
                self._write_chunk(b"data: " + json.dumps({**base, "object": "chat.completion.chunk",
                                                          "choices": [], "usage": use}).encode() + b"\n\n")
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")
            self.wfile.flush()
            return
        self._json(200, {**base, "object": "chat.completion", "usage": use, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "".join(parts)},
             "finish_reason": usage.finish_reason, "logprobs": _logprobs(usage)}]})

    def _tokenize(self, messages) -> None:
        """vLLM's /tokenize shape: exact prompt size for the caller's budget (no lock: read-only;
        a disk restore it may start takes the lock on its own thread)."""
        from app.worker.llama.chat import RequestError
        try:
            tokens = self.server.engine.prompt_tokens(messages)
        except RequestError as exc:
            return self._error(400, str(exc))
        self._json(200, {"count": len(tokens), "max_model_len": self.server.engine.llm.n_ctx(),
                         "tokens": tokens})

    def _client_gone(self) -> bool:
        """True when the peer closed the connection (readable with zero bytes pending)."""
        sock = self.connection
        try:
            readable, _, _ = select.select([sock], [], [], 0)
            return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    # --- HTTP plumbing --------------------------------------------------------------------------
    def _body_length(self) -> int | None:
        """The Content-Length, or None once a refusal was sent (and the connection marked to
        close, its unread bytes with it)."""
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            self._error(411, "send the body with a Content-Length (chunked bodies are not accepted)")
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length < 0:
                raise ValueError
        except ValueError:
            self.close_connection = True
            self._error(400, "bad Content-Length")
            return None
        if length > MAX_BODY:
            self.close_connection = True
            self._error(413, f"the body is {length} bytes; at most {MAX_BODY} are accepted")
            return None
        return length

    def _read_body(self, length: int) -> bytes | None:
        """The whole body, read before any reply so the next request on this connection starts
        where it should; None when the client left or missed the request deadline mid-body."""
        try:
            body = self.rfile.read(length) if length else b""
        except OSError:
            body = b""
        if len(body) < length:
            self.close_connection = True
            self._answered = True
            return None
        return body

    def _discard_body(self, length: int) -> bool:
        """Read a refused body in pieces and drop them (the connection stays in step, no memory
        held); False, and the connection marked to close, if it did not all arrive in time."""
        left = length
        try:
            while left > 0:
                piece = self.rfile.read(min(left, 256 * 1024))
                if not piece:
                    break
                left -= len(piece)
        except OSError:
            pass
        if left:
            self.close_connection = True
        return not left

    def _host_allowed(self) -> bool:
        port = self.server.server_address[1]
        host = (self.headers.get("Host") or "").strip().lower()
        return host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}")

    def _authorised(self) -> bool:
        given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        return hmac.compare_digest(given.encode(), self.server.api_key.encode())

    # --- one request at a time on a connection, under the deadlines -------------------------------
    def handle_one_request(self) -> None:
        """Wait (evictable, at most IDLE_TIMEOUT_S) for the next request's first byte, then give
        the whole request REQUEST_DEADLINE_S to arrive."""
        conn = self.server.connections
        conn.waiting(self.connection)
        try:
            if not self.rfile.peek(1):
                self.close_connection = True
                return
        except (OSError, ValueError):
            self.close_connection = True
            return
        self.server.deadlines.arm(self.connection, REQUEST_DEADLINE_S)
        try:
            super().handle_one_request()
        finally:
            self.server.deadlines.disarm(self.connection)
            conn.waiting(self.connection)

    def _start_stream(self) -> None:
        self._streaming = self._answered = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, base: dict, delta: dict, finish: str | None, logprobs: dict | None = None) -> None:
        event = {**base, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprobs}]}
        self._write_chunk(b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")   # sent at the next flush

    def _json(self, status: int, obj: dict) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 405: "invalid_request_error", 411: "invalid_request_error",
                413: "invalid_request_error", 503: "server_error"}.get(status, "server_error")
        self._json(status, {"error": {"message": message, "type": kind, "code": status}})

    def _send(self, status: int, data: bytes, ctype: str) -> None:
        if self._answered:                       # never a second reply to one request
            log(f"error: a second answer ({status}) to {self.command} {self.path.split('?')[0]} was dropped")
            return
        self._answered = True
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if status == 405:
            self.send_header("Allow", self._allow)
        if status == 503:
            self.send_header("Retry-After", "1")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":               # a HEAD reply has headers only
            self.wfile.write(data)
        self.wfile.flush()


def _text_message(message: dict) -> dict:
    """OpenAI's list-of-parts content ([{"type": "text", "text": ...}, ...]) as one string, the
    only content the chat template takes; any other part (images, audio) is a 400."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise ValueError(f"only text content parts are supported, not {kind!r}")
        texts.append(part["text"])
    return {**message, "content": "\n".join(texts)}


_NUMBERS = ("temperature", "top_p", "repeat_penalty", "frequency_penalty", "presence_penalty")
_COUNTS = ("max_tokens", "max_completion_tokens", "seed")


def _check_request_values(request: dict) -> None:
    """The sampling values' types and ranges, before they reach llama.cpp: a string seed, a
    max_tokens of 1e400 (inf) or a list temperature were TypeError/OverflowError there, a 500."""
    from app.worker.llama.chat import RequestError
    for key in _NUMBERS:
        value = request.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            raise RequestError(f"{key} must be a finite number, not {_short(value)}")
    for key in _COUNTS:
        value = request.get(key)
        low = 0 if key == "seed" else 1
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not low <= value < 1 << 31):
            raise RequestError(f"{key} must be a whole number from {low} to {(1 << 31) - 1}, "
                               f"not {_short(value)}")
    stop = request.get("stop")
    if stop is not None and not isinstance(stop, str) and not (
            isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
        raise RequestError(f"stop must be a string or a list of strings, not {_short(stop)}")
    fmt = request.get("response_format")
    if fmt is not None and not isinstance(fmt, dict):
        raise RequestError(f"response_format must be an object, not {_short(fmt)}")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _logprobs(usage) -> dict | None:
    """OpenAI's `logprobs` of a choice, for its first token only (what the request asked for)."""
    if not usage.top_logprobs:
        return None
    (token, logprob), *_ = usage.top_logprobs
    return {"content": [{"token": token, "logprob": logprob,
                         "top_logprobs": [{"token": t, "logprob": lp} for t, lp in usage.top_logprobs]}]}


def _usage_json(usage) -> dict:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
            **({"pagewise_passages": {"read": usage.passages_read, "of": usage.passages_total,
                                      "measured_tps": usage.measured_tps}} if usage.passages_total else {})}


_BUSY = json.dumps({"error": {"message": f"the worker already serves {MAX_CONNECTIONS} requests; retry",
                               "type": "server_error", "code": 503}}).encode()


class Connections:
    """The open connections, oldest first, each waiting (for or inside its request head: may be
    closed to make room) or busy (its whole head arrived: never closed for room)."""

    def __init__(self, limit: int):
        self.limit, self._lock, self._open = limit, threading.Lock(), {}   # socket → busy

    def admit(self, sock) -> bool:
        """Room for `sock`, closing the longest-waiting connection if need be; False when every
        open connection is busy."""
        with self._lock:
            if len(self._open) >= self.limit:
                oldest = next((s for s, busy in self._open.items() if not busy), None)
                if oldest is None:
                    return False
                del self._open[oldest]
                _cut(oldest)
            self._open[sock] = False
            return True

    def busy(self, sock) -> None:
        with self._lock:
            if sock in self._open:
                self._open[sock] = True

    def waiting(self, sock) -> None:
        with self._lock:
            if sock in self._open:
                self._open[sock] = False

    def close(self, sock) -> None:
        with self._lock:
            self._open.pop(sock, None)


class Deadlines:
    """Sockets cut (shutdown) when their request is not in by its deadline: a whole-request
    deadline, where a socket timeout would restart at every byte. One thread for all."""

    def __init__(self):
        self._lock, self._due = threading.Lock(), {}
        threading.Thread(target=self._run, name="request-deadlines", daemon=True).start()

    def arm(self, sock, seconds: float) -> None:
        with self._lock:
            self._due[sock] = time.monotonic() + seconds

    def disarm(self, sock) -> None:
        with self._lock:
            self._due.pop(sock, None)

    def _run(self) -> None:
        while True:
            time.sleep(0.2)
            now = time.monotonic()
            with self._lock:
                late = [sock for sock, due in self._due.items() if due <= now]
                for sock in late:
                    del self._due[sock]
            for sock in late:
                _cut(sock)


class BodyBudget:
    """Bytes of request bodies held at once, all connections together."""

    def __init__(self, total: int):
        self._lock, self._left = threading.Lock(), total

    def take(self, n: int) -> bool:
        with self._lock:
            if n > self._left:
                return False
            self._left -= n
            return True

    def give_back(self, n: int) -> None:
        with self._lock:
            self._left += n


def _cut(sock) -> None:
    """End a connection from another thread: its blocked read returns at once."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(value):
    """JSON's "\ud800" escapes decode to lone surrogates, which no tokenizer can encode (a 500 on
    /v1/chat/completions and /tokenize): each becomes U+FFFD, as invalid UTF-8 bytes do."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_valid_text(v) for v in value]
    if isinstance(value, dict):
        return {_valid_text(k): _valid_text(v) for k, v in value.items()}
    return value


class WorkerServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, addr, engine, api_key: str, model_name: str, max_connections: int = MAX_CONNECTIONS,
                 bind_and_activate: bool = True):
        super().__init__(addr, Handler, bind_and_activate)
        self.engine, self.api_key, self.model_name = engine, api_key, model_name
        self.lock, self.metrics = engine.lock, Metrics()     # generations and disk restores, one at a time
        self.connections, self.deadlines = Connections(max_connections), Deadlines()
        self.bodies = BodyBudget(BODY_BUDGET)

    @classmethod
    def on_socket(cls, sock: socket.socket, engine, api_key: str, model_name: str) -> "WorkerServer":
        """Serve on a socket the app bound and handed down (inherited fd): listen on it as it is."""
        server = cls(sock.getsockname()[:2], engine, api_key, model_name, bind_and_activate=False)
        server.socket.close()
        server.socket, server.server_address = sock, sock.getsockname()[:2]
        server.server_activate()
        return server

    def process_request(self, request, client_address):
        """A thread per connection, up to the bound (the longest-waiting one closed to make room);
        when every one is busy, a 503 at once (from the accept loop: a short write into an empty
        socket buffer) and the connection closed."""
        if not self.connections.admit(request):
            try:
                request.settimeout(0.5)
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                b"Retry-After: 1\r\nConnection: close\r\n"
                                + f"Content-Length: {len(_BUSY)}\r\n\r\n".encode() + _BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.close(request)
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.close(request)
            self.deadlines.disarm(request)

    def handle_error(self, request, client_address):
        """One line, not socketserver's traceback on stderr (a client that reset mid-request)."""
        exc = sys.exc_info()[1]
        log(f"connection error: {type(exc).__name__}: {exc}")
