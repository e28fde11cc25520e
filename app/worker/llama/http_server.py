"""HTTP side of our llama.cpp worker: OpenAI routes, SSE streaming, API key, /metrics.

stdlib ThreadingHTTPServer: health and metrics answer on their own threads while a
generation runs; generations themselves are serialised by one lock (one llama.cpp context).
Connection threads are bounded (MAX_CONNECTIONS; more are told 503 at once) and an idle
keep-alive connection is closed after IDLE_TIMEOUT_S, so idle sockets cannot pile up threads.
Every route but the bare /health needs the key and every route checks the Host header (a web
page reaching 127.0.0.1 through DNS rebinding sends its own host name).
"""
from __future__ import annotations

import hmac
import json
import os
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
MAX_BODY = 64 * 1024**2       # a whole-document prompt is a few MB of JSON


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
    # path → {method: handler name}. Every request gets exactly one answer: its body is read first
    # (so an error reply leaves the keep-alive connection in step), then Host, key, route, method.
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
        body = self._drain_body()
        if body is None:
            return                                   # refused (too big, chunked, bad length): answered
        path = self.path.split("?")[0]
        if not self._host_allowed():
            return self._error(403, "the Host header must be 127.0.0.1:PORT or localhost:PORT")
        if path not in self.OPEN_PATHS and not self._authorised():
            return
        methods = self.ROUTES.get(path)
        for prefix in ("/v1/models/", "/models/"):
            if methods is None and path.startswith(prefix) and len(path) > len(prefix):
                methods = self.ROUTES[prefix]
        if methods is None:
            return self._error(404, f"no route {path}")
        if method not in methods:
            self._allow = ", ".join(methods)
            return self._error(405, f"{method} is not allowed on {path} (allowed: {self._allow})")
        try:
            getattr(self, methods[method])(path, body)
        finally:
            if not self._answered and not self.wfile.closed:   # a handler that forgot to answer
                self._error(500, "the worker did not answer this request")

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
            request = json.loads(body or b"{}")
            messages = request["messages"]
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self._error(400, "the body must be JSON with a 'messages' list")
            return None
        n = request.get("n")
        if n not in (None, 1):
            self._error(400, f"n={n!r} is not supported: this worker returns one choice per request (n=1)")
            return None
        try:
            request["messages"] = [_text_message(m) for m in messages]
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
                    parts.append(delta)
                    if stream:
                        self._chunk(base, {"content": delta}, None)
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
             "finish_reason": usage.finish_reason, "logprobs": None}]})

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
    def _drain_body(self) -> bytes | None:
        """The whole request body (Content-Length), read before any reply so the next request on
        this connection starts where it should; None once a refusal was sent (and the
        connection marked to close, its unread bytes with it)."""
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
        body = self.rfile.read(length) if length else b""
        if len(body) < length:                   # the client left (or timed out) mid-body
            self.close_connection = True
            self._answered = True
            return None
        return body

    def _host_allowed(self) -> bool:
        port = self.server.server_address[1]
        host = (self.headers.get("Host") or "").strip().lower()
        return host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}")

    def _authorised(self) -> bool:
        given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if hmac.compare_digest(given.encode(), self.server.api_key.encode()):
            return True
        self._error(401, "invalid or missing API key")
        return False

    def _start_stream(self) -> None:
        self._streaming = self._answered = True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, base: dict, delta: dict, finish: str | None) -> None:
        event = {**base, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}
        self._write_chunk(b"data: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")   # sent at the next flush

    def _json(self, status: int, obj: dict) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 405: "invalid_request_error", 411: "invalid_request_error",
                413: "invalid_request_error"}.get(status, "server_error")
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


def _usage_json(usage) -> dict:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens}}


_BUSY = json.dumps({"error": {"message": f"the worker already serves {MAX_CONNECTIONS} connections; retry",
                               "type": "server_error", "code": 503}}).encode()


class WorkerServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, addr, engine, api_key: str, model_name: str, max_connections: int = MAX_CONNECTIONS):
        super().__init__(addr, Handler)
        self.engine, self.api_key, self.model_name = engine, api_key, model_name
        self.lock, self.metrics = engine.lock, Metrics()     # generations and disk restores, one at a time
        self._slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request, client_address):
        """A thread per connection, up to the bound; past it a 503 at once (from the accept loop:
        a short write into an empty socket buffer) and the connection closed."""
        if not self._slots.acquire(blocking=False):
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
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request, client_address):
        """One line, not socketserver's traceback on stderr (a client that reset mid-request)."""
        exc = sys.exc_info()[1]
        log(f"connection error: {type(exc).__name__}: {exc}")
