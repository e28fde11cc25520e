"""A fault-injecting fake OpenAI-compatible server, started by tests as a worker child process
[jupyter_client problemkernel.py]. Real HTTP on a real port; only the engine is fake.

    python tests/support/fake_server.py --port N --api-key K [faults]

Faults (combinable):
  --print LINE ...        print these lines first (e.g. a real OOM or vLLM message)
  --exit-code C           then exit with C before binding (a failed start)
  --progress-for S        print a "Loading weights" progress line every 0.5 s for S seconds, then bind
  --silent-for S          print nothing for S seconds, then bind (a slow start with no progress)
  --hang                  bind and accept connections but never answer, print nothing
  --busy-for S            once bound, answer /health 503 (every place busy) for S seconds
  --crash-after N         answer N chat requests, then die abruptly (os._exit) on the next one
  --fail-requests STATUS  answer every chat request with HTTP STATUS and an OpenAI error body
                          (a failed request from an engine that keeps running)
  --fail-launches K --state FILE   fail (exit 1 after --print lines) the first K launches that
                          share FILE, then start normally (for restart / downgrade loops)
Replies echo the last user message ("echo: ...") so tests can check the round trip.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FAKE_SERVER = Path(__file__).resolve()


def fake_spec(*faults: str, classify=None, **overrides):
    """A LaunchSpec that runs this fake server with the given fault flags on a fresh port."""
    from app.worker.launch import LaunchSpec
    from app.worker.ports import free_port, random_key
    port, key = free_port(), random_key()
    argv = [sys.executable, str(FAKE_SERVER), "--port", str(port), "--api-key", key, *faults]
    values = dict(argv=argv, env={}, base_url=f"http://127.0.0.1:{port}/v1", api_key=key, model_name="fake",
                  engine="fake", progress_patterns=(r"Loading weights",), classify=classify,
                  ready_timeout_s=30, stall_timeout_s=5, extra={"port": port})
    values.update(overrides)
    return LaunchSpec(**values)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "FakeServer"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        if self.path == "/health":
            if time.monotonic() < self.server.busy_until:
                return self._send(503, b'{"error":{"message":"busy","code":503}}')
            return self._send(200, b'{"status":"ok"}')
        if self.path == "/metrics":
            return self._send(200, f"fake_requests_total {self.server.served}\n".encode(), "text/plain")
        if self.path == "/v1/models" and self._auth():
            return self._send(200, json.dumps({"data": [{"id": "fake"}]}).encode())
        self._send(404, b'{"error":{"message":"no route"}}')

    def do_POST(self):
        if not self._auth():
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        srv = self.server
        if srv.crash_after is not None and srv.served >= srv.crash_after:
            print(f"fake: crashing after {srv.served} requests", flush=True)
            os._exit(70)
        srv.served += 1
        if srv.fail_requests:
            print(f"ERROR fake: request failed with HTTP {srv.fail_requests}", flush=True)
            return self._send(srv.fail_requests, json.dumps(
                {"error": {"message": f"fake failure {srv.fail_requests}", "type": "FakeError"}}).encode())
        if not self.path.endswith("/chat/completions"):     # no /tokenize: an engine that cannot count
            return self._send(404, b'{"error":{"message":"not found","code":404}}')
        user = [m["content"] for m in body["messages"] if m.get("role") == "user"][-1]
        text = f"echo: {user}"
        usage = {"prompt_tokens": len(user.split()), "completion_tokens": len(text.split()),
                 "prompt_tokens_details": {"cached_tokens": 0}}
        if not body.get("stream"):
            return self._send(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": text},
                                                            "finish_reason": "stop"}], "usage": usage}).encode())
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for word in text.split(" "):
            self._event({"choices": [{"delta": {"content": word + " "}, "finish_reason": None}]})
        self._event({"choices": [{"delta": {}, "finish_reason": "stop"}]})
        self._event({"choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True

    def _event(self, obj: dict) -> None:
        self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        self.wfile.flush()

    def _auth(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {self.server.api_key}":
            return True
        self._send(401, b'{"error":{"message":"bad key"}}')
        return False

    def _send(self, status: int, data: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, api_key: str, crash_after: int | None, fail_requests: int | None = None):
        super().__init__(addr, Handler)
        self.api_key, self.crash_after, self.served = api_key, crash_after, 0
        self.fail_requests = fail_requests
        self.busy_until = 0.0


def hang(port: int) -> None:
    """Accept connections and never answer: health probes time out."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    held = []
    while True:
        held.append(sock.accept()[0])


def launches_left_to_fail(state: Path, fail: int) -> bool:
    count = int(state.read_text()) if state.exists() else 0
    state.write_text(str(count + 1))
    return count < fail


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--api-key", default="")
    ap.add_argument("--print", nargs="*", default=[], dest="lines")
    ap.add_argument("--exit-code", type=int, default=None)
    ap.add_argument("--progress-for", type=float, default=0)
    ap.add_argument("--silent-for", type=float, default=0)
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--busy-for", type=float, default=0)
    ap.add_argument("--crash-after", type=int, default=None)
    ap.add_argument("--fail-requests", type=int, default=None)
    ap.add_argument("--fail-launches", type=int, default=0)
    ap.add_argument("--state", type=Path, default=None)
    args = ap.parse_args()
    failing = args.state is not None and launches_left_to_fail(args.state, args.fail_launches)
    for line in args.lines:
        print(line, flush=True)
    if failing:
        sys.exit(1)
    if args.exit_code is not None:
        sys.exit(args.exit_code)
    if args.hang:
        hang(args.port)
    end = time.monotonic() + args.progress_for
    while time.monotonic() < end:
        print(f"Loading weights: {100 * (1 - (end - time.monotonic()) / args.progress_for):.0f}%", flush=True)
        time.sleep(0.5)
    time.sleep(args.silent_for)
    server = FakeServer(("127.0.0.1", args.port), args.api_key, args.crash_after, args.fail_requests)
    server.busy_until = time.monotonic() + args.busy_for
    print("fake: ready", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
