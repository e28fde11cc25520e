"""HTTP side of our llama.cpp worker: OpenAI routes, SSE streaming, API key, /metrics.

stdlib ThreadingHTTPServer: health and metrics answer on their own threads while a
generation runs; generations themselves are serialised by one lock (one llama.cpp context).
"""
from __future__ import annotations

import hmac
import json
import select
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "pagewise-worker:"


def log(msg: str) -> None:
    try:
        print(f"{PREFIX} {msg}", flush=True)
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
        lines = []
        for name, value in values.items():
            kind = "counter" if name.endswith("_total") else "gauge"
            lines += [f"# TYPE pagewise_{name} {kind}", f"pagewise_{name} {value}"]
        return "\n".join(lines) + "\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"          # keep-alive for clients; streams use chunked encoding
    # Every piece of an answer goes out at once: TCP_NODELAY (no Nagle wait behind a delayed ACK)
    # and a buffered wfile flushed once per piece, so the headers, the role chunk and the first
    # token leave in one segment. handle_one_request() flushes whatever a handler leaves behind.
    disable_nagle_algorithm = True
    wbufsize = 64 * 1024
    server: "WorkerServer"
    _streaming = False

    def log_message(self, fmt, *args):    # no per-request noise (and never prompt text) in the log
        pass

    # --- routing --------------------------------------------------------------------------------
    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/health":
            return self._json(200, {"status": "ok"})
        if path == "/metrics":
            return self._send(200, self.server.metrics.render(self.server.engine).encode(),
                              "text/plain; version=0.0.4")
        if path in ("/v1/models", "/models") and self._authorised():
            return self._json(200, {"object": "list", "data": [
                {"id": self.server.model_name, "object": "model", "owned_by": "pagewise",
                 "max_model_len": self.server.engine.llm.n_ctx()}]})
        if not path.startswith("/v1/"):
            self._error(404, f"no route {path}")

    def do_POST(self):
        path = self.path.split("?")[0]
        if path not in ("/v1/chat/completions", "/chat/completions", "/tokenize"):
            return self._error(404, f"no route {path}")
        if not self._authorised():
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            return self._error(400, "the body must be JSON with a 'messages' list")
        from app.worker.llama_chat import Params, RequestError
        if path == "/tokenize":
            return self._tokenize(messages)
        try:
            params = Params.from_request(body)
            with self.server.lock:              # one generation at a time
                self._complete(messages, params, bool(body.get("stream")),
                               bool((body.get("stream_options") or {}).get("include_usage")))
        except RequestError as exc:
            self._error(400, str(exc))
        except (BrokenPipeError, ConnectionResetError):
            pass                                 # client left; generation already stopped
        except Exception as exc:                 # one line in the log, a 500 if nothing was sent yet
            log(f"error: chat failed: {type(exc).__name__}: {exc}")
            self.close_connection = True
            if not self._streaming:
                self._error(500, f"generation failed: {exc}")

    # --- chat -----------------------------------------------------------------------------------
    def _complete(self, messages, params, stream: bool, include_usage: bool) -> None:
        srv, rid, created = self.server, f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        base = {"id": rid, "created": created, "model": srv.model_name}
        parts, usage, started = [], None, False
        with srv.metrics.lock:
            srv.metrics.running += 1
        try:
            for delta, usage in srv.engine.chat(messages, params, self._client_gone):
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
        from app.worker.llama_chat import RequestError
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
    def _authorised(self) -> bool:
        given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if hmac.compare_digest(given.encode(), self.server.api_key.encode()):
            return True
        self._error(401, "invalid or missing API key")
        return False

    def _start_stream(self) -> None:
        self._streaming = True
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
        kind = {400: "invalid_request_error", 401: "authentication_error"}.get(status, "server_error")
        self._json(status, {"error": {"message": message, "type": kind, "code": status}})

    def _send(self, status: int, data: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _usage_json(usage) -> dict:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens}}


class WorkerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, engine, api_key: str, model_name: str):
        super().__init__(addr, Handler)
        self.engine, self.api_key, self.model_name = engine, api_key, model_name
        self.lock, self.metrics = engine.lock, Metrics()     # generations and disk restores, one at a time
