"""A fake vLLM OpenAI server for downgrade tests: it takes vLLM's real flags and, on a simulated
GPU, makes vLLM's real start-up checks and prints vLLM's real failure messages (wording from
vllm/v1/core/kv_cache_utils.py, vllm/config/vllm.py, the worker's memory check, the attention
selector), then exits 1 — or starts and serves /health, /v1/models, /metrics and chat.

    python tests/support/fake_vllm.py --model DIR --port N --gpu-memory-utilization U
        --max-model-len L [--kv-cache-dtype fp8] [--enforce-eager] [--tensor-parallel-size T]
        --fake-gpu TOTAL_GIB:FREE_GIB:CC          simulated card, e.g. 23.99:23.69:8.9
        --fake-model WEIGHTS:ACT:GRAPHS:KV_BYTES  loaded GiB, activation GiB, CUDA graph GiB, KV B/token
        --fake-fail KIND[:N]   print this failure whatever the arithmetic says: kv:N, kv, free, nocache,
                               oom, quant, backend, missing, arch, exit
        --fake-fail-runs K --fake-state FILE   scripted failure only for the first K launches
        --fake-oom-after N     answer N chat requests, then die of a CUDA OOM (a runtime failure)
        --fake-stream-error    fail every chat request inside its stream the way vLLM's
                               create_streaming_error_response does, with an empty message, and
                               log an error line (the log wording is illustrative); the server lives on
        --fake-request-status S   answer every chat request with HTTP S and vLLM's error body
                               (a failed request; the server lives on)
        --fake-cut             stream the start of a JSON answer, then end it the way vLLM does when
                               llguidance gives up (log: `Stop: ParserTooComplex`, `grammar rejected
                               tokens`; stream: an error event "Internal server error"); lives on
        --fake-loop            stream a JSON answer that repeats one sentence for 400 chunks (a small
                               model looping under greedy decoding); logs how many chunks went out;
                               every chunk carries usage when stream_options asks for it (as vLLM's
                               continuous_usage_stats); a request that continues the assistant's
                               message (continue_final_message) gets one citation, logged with its head
        --fake-die-mid-answer STATE   the first launch (STATE absent) streams two chunks of its first
                               answer, then its EngineCore "dies": error event "EngineCore encountered
                               an issue", /health 503 while /v1/models still answers 200, exit 5 s later
Every request with a response_format logs `fake: structured request` (the warm-up is seen).
Streamed requests get SSE chunks, as from vLLM's server.
Without --fake-gpu every memory check passes. The API key comes from VLLM_API_KEY, as in vLLM.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

GiB = 1 << 30
DOCS = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
MESSAGES = {
    "kv": ("ValueError: To serve at least one request with the model's max seq len ({max_len}), "
           "({need:.2f} GiB KV cache is needed, which is larger than the available KV cache memory "
           "({avail:.2f} GiB). {estimate}Try increasing `gpu_memory_utilization` or decreasing "
           "`max_model_len` when initializing the engine. " + DOCS),
    "free": ("ValueError: Free memory on device cuda:0 ({free:.2f}/{total:.2f} GiB) on startup is less "
             "than desired GPU memory utilization ({util}, {want:.2f} GiB). Decrease GPU memory "
             "utilization or reduce GPU memory used by other processes."),
    "nocache": ("ValueError: No available memory for the cache blocks. Try increasing "
                "`gpu_memory_utilization` when initializing the engine. " + DOCS),
    "oom": ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a "
            "total capacity of {total:.2f} GiB of which {left:.2f} MiB is free. Including non-PyTorch "
            "memory, this process has {used:.2f} GiB memory in use."),
    "quant": ("ValueError: The quantization method awq is not supported for the current GPU. Minimum "
              "capability: 75. Current capability: {cc}."),
    "backend": ("ValueError: No valid attention backend found for cuda with AttentionSelectorConfig("
                "head_size=128, dtype=torch.float16, kv_cache_dtype={kv_dtype}, block_size=None, "
                "use_mla=False, has_sink=False, use_sparse=False). Reasons: {{FLASH_ATTN: "
                "[kv_cache_dtype not supported], TRITON_ATTN: [kv_cache_dtype not supported]}}."),
    "missing": ("ValueError: Invalid repository ID or local directory specified: '{model}'.\n"
                "Please verify the following requirements:\n1. Provide a valid Hugging Face repository ID.\n"
                "2. Specify a local directory that contains a recognized configuration file."),
    "arch": "ValueError: Model architectures ['FakeForCausalLM'] are not supported for now.",
    "exit": "Killed",
}


def log(msg: str, level: str = "INFO", who: str = "EngineCore_DP0 pid=4242") -> None:
    print(f"({who}) {level} {time.strftime('%m-%d %H:%M:%S')} [fake_vllm.py:1] {msg}", flush=True)


def fail(kind: str, **values) -> None:
    for line in MESSAGES[kind].format(**values).splitlines():
        log(line, "ERROR")
    log("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
        "ERROR", "APIServer pid=4241")
    sys.exit(1)


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--served-model-name", default=None)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--max-model-len", type=int, default=32768)
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    p.add_argument("--kv-cache-dtype", default="auto")
    p.add_argument("--tensor-parallel-size", type=int, default=1)
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument("--fake-gpu")
    p.add_argument("--fake-model", default="5.4:1.3:0.92:57344")
    p.add_argument("--fake-fail")
    p.add_argument("--fake-fail-runs", type=int)
    p.add_argument("--fake-state")
    p.add_argument("--fake-oom-after", type=int)
    p.add_argument("--fake-stream-error", action="store_true")
    p.add_argument("--fake-request-status", type=int)
    p.add_argument("--fake-cut", action="store_true")
    p.add_argument("--fake-loop", action="store_true")
    p.add_argument("--fake-die-mid-answer")
    args, _ = p.parse_known_args(argv)     # vLLM flags we do not simulate are accepted and ignored
    return args


def scripted(args) -> str | None:
    if not args.fake_fail:
        return None
    if args.fake_fail_runs is not None:
        state = Path(args.fake_state)
        runs = int(state.read_text()) if state.exists() else 0
        state.write_text(str(runs + 1))
        if runs >= args.fake_fail_runs:
            return None
    return args.fake_fail


def check_start(args) -> None:
    """vLLM's start-up checks in vLLM's order, on the simulated card."""
    if not (Path(args.model) / "config.json").is_file():
        fail("missing", model=args.model)
    total = free = GiB * 1000.0
    cc = "9.0"
    if args.fake_gpu:
        t, f, cc = args.fake_gpu.split(":")
        total, free = float(t) * GiB, float(f) * GiB
    weights, act, graphs, per_token = (float(x) for x in args.fake_model.split(":"))
    tp, util, fp8 = args.tensor_parallel_size, args.gpu_memory_utilization, args.kv_cache_dtype != "auto"
    major, minor = (int(x) for x in cc.split("."))
    values = dict(total=total / GiB, free=free / GiB, util=util, want=util * total / GiB, cc=major * 10 + minor,
                  kv_dtype=args.kv_cache_dtype, model=args.model)
    forced = scripted(args)
    if forced:
        kind, _, n = forced.partition(":")
        if kind == "free":        # vLLM only says so when free < wanted: report a plausible reading
            values["free"] = min(values["free"], values["want"] - 1.0)
        estimate = f"Based on the available memory, the estimated maximum model length is {n}. " if n else ""
        fail(kind, max_len=args.max_model_len, need=1.0, avail=0.5, estimate=estimate, left=100.0, used=1.0, **values)
    log("Resolved architecture: Qwen2ForCausalLM", who="APIServer pid=4241")
    if major * 10 + minor < 75:
        fail("quant", **values)
    if fp8 and (major, minor) < (8, 9):
        fail("backend", **values)
    if free < util * total:
        fail("free", **values)
    log(f"Model loading took {weights / tp:.2f} GiB memory and 3.1 seconds")
    avail = util * total - weights * GiB / tp - act * GiB
    log(f"Available KV cache memory: {avail / GiB:.2f} GiB")
    if avail <= 0:
        fail("nocache", **values)
    bytes_per_token = per_token / (2 if fp8 else 1) / tp
    need = args.max_model_len * bytes_per_token
    if need > avail:
        n = int(avail // bytes_per_token) // 16 * 16
        fail("kv", max_len=args.max_model_len, need=need / GiB, avail=avail / GiB,
             estimate=f"Based on the available memory, the estimated maximum model length is {n}. ", **values)
    log(f"GPU KV cache size: {int(avail // bytes_per_token):,} tokens")
    if not args.enforce_eager and free - util * total < graphs * GiB:
        left = max(0.0, free - util * total) / (1 << 20)
        fail("oom", left=left, used=util * total / GiB, **values)
    log("Capturing CUDA graphs" if not args.enforce_eager else "Cudagraph is disabled (enforce_eager)")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "FakeVllm"

    def log_message(self, fmt, *args):
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _auth(self) -> bool:
        key = os.environ.get("VLLM_API_KEY")
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            self._send(401, b'{"error":"Unauthorized"}')
            return False
        return True

    def _stream(self, events: list[dict], done: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        if done:
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        if self.path == "/health":
            if self.server.dead:      # vLLM's /health once its engine is dead: 503 (EngineDeadError)
                return self._send(503, b"")
            return self._send(200, b"")
        if self.path == "/metrics":
            usage = min(1.0, self.server.tokens / max(1, self.server.args.max_model_len))
            text = (f'vllm:kv_cache_usage_perc{{engine="0",model_name="{self.server.name}"}} {usage}\n'
                    f'vllm:num_requests_running{{engine="0",model_name="{self.server.name}"}} 0.0\n')
            return self._send(200, text.encode(), "text/plain; version=0.0.4")
        if self.path == "/v1/models" and self._auth():
            return self._send(200, json.dumps({"object": "list", "data": [
                {"id": self.server.name, "object": "model", "max_model_len": self.server.args.max_model_len}]}).encode())
        self._send(404, b'{"detail":"Not Found"}')

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/v1/chat/completions" or not self._auth():
            return self._send(404, b'{"detail":"Not Found"}') if self.path != "/v1/chat/completions" else None
        srv = self.server
        if body.get("response_format"):
            log("fake: structured request", who="APIServer pid=4241")
        warm = _is_warm_up(body)
        srv.served += not warm             # --fake-oom-after and --fake-die-* count questions only
        if srv.args.fake_die_mid_answer and not Path(srv.args.fake_die_mid_answer).exists() and not warm:
            return self._die_mid_answer()
        if srv.args.fake_cut:
            return self._cut()
        if srv.args.fake_loop:
            return self._loop(body)
        if srv.args.fake_oom_after is not None and srv.served > srv.args.fake_oom_after:
            log("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", "ERROR")
            log("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.", "ERROR",
                "APIServer pid=4241")
            self._send(500, b'{"error":{"message":"EngineCore encountered an issue","type":"InternalServerError"}}')
            self.wfile.flush()
            os._exit(1)
        if srv.args.fake_request_status:
            status = srv.args.fake_request_status
            log(f"fake: request failed with HTTP {status}", "ERROR", "APIServer pid=4241")
            return self._send(status, json.dumps({"error": {"message": f"fake failure {status}",
                                                            "type": "InternalServerError", "code": status}}).encode())
        if srv.args.fake_stream_error:
            log("ValueError: Failed to compile the JSON schema of the request's response_format", "ERROR",
                "APIServer pid=4241")
            error = {"error": {"message": "", "type": "BadRequestError", "param": None, "code": 400}}
            return self._stream([{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}, error])
        text = "echo: " + str(body.get("messages", [{}])[-1].get("content", ""))
        srv.tokens += len(text.split())
        if body.get("stream"):
            usage = {"prompt_tokens": 10, "completion_tokens": len(text.split()), "total_tokens": 20}
            return self._stream([{"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
                                 {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                                 {"choices": [], "usage": usage}], done=True)
        reply = {"id": "chatcmpl-fake", "object": "chat.completion", "model": srv.name,
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split()), "total_tokens": 20}}
        self._send(200, json.dumps(reply).encode())


    def _chunk(self, text: str, usage: dict | None = None) -> None:
        event = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        if usage:
            event["usage"] = usage
        self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        self.wfile.flush()

    def _open_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _error_event(self, message: str) -> None:
        error = {"error": {"message": message, "type": "InternalServerError", "param": None, "code": 500}}
        self.wfile.write(b"data: " + json.dumps(error).encode() + b"\n\ndata: [DONE]\n\n")
        self.wfile.flush()

    def _cut(self) -> None:
        self._open_stream()
        for piece in ('{"answer":"The parties are ', 'Acme Ltd. and Beta LLC.', ' The agreement'):
            self._chunk(piece)
        log("Stop: ParserTooComplex", "WARNING", "EngineCore_DP0 pid=4242")
        log("grammar rejected tokens [85] (\"'\"); Terminating request", "ERROR", "EngineCore_DP0 pid=4242")
        self._error_event("Internal server error")

    def _loop(self, body: dict) -> None:
        self._open_stream()
        if body.get("continue_final_message"):
            head = body["messages"][-1]["content"]
            log(f"fake: continued after {head[-40:]!r}", who="APIServer pid=4241")
            self._chunk('[{"doc":"nda.pdf","page":1,"quote":"The document is 5 pages long."}]')
            self.wfile.write(b"data: [DONE]\n\n")
            return
        every = (body.get("stream_options") or {}).get("continuous_usage_stats")
        sent = 0
        try:
            self._chunk('{"answer":"')
            for sent in range(1, 401):
                usage = {"prompt_tokens": 10, "completion_tokens": sent + 1, "total_tokens": sent + 11}
                self._chunk("The document is 5 pages long. ", usage if every else None)
                time.sleep(0.002)
            self._chunk('","citations":[]}')
            self.wfile.write(b"data: [DONE]\n\n")
        except OSError:
            pass                                   # the client hung up: vLLM aborts the request
        log(f"fake: streamed {sent} loop chunks", who="APIServer pid=4241")

    def _die_mid_answer(self) -> None:
        import threading
        Path(self.server.args.fake_die_mid_answer).write_text("died")
        self._open_stream()
        self._chunk('{"answer":"The parties')
        self._chunk(' are')
        self.server.dead = True
        log("Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.", "ERROR",
            "APIServer pid=4241")
        self._error_event("EngineCore encountered an issue. See stack trace (above) for the root cause.")
        threading.Timer(5.0, lambda: os._exit(1)).start()     # the API server exits on its own later


def _is_warm_up(body: dict) -> bool:
    """The app's structured-output warm-up right after start (engines/vllm.WARM_SCHEMA)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    return schema.get("properties", {}).get("answer", {}).get("maxLength") == 8


class FakeVllm(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, args):
        super().__init__((args.host, args.port), Handler)
        self.args, self.name = args, args.served_model_name or args.model
        self.served = self.tokens = 0
        self.dead = False


def main(argv=None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    check_start(args)
    server = FakeVllm(args)
    log(f"Starting vLLM API server 0 on http://{args.host}:{args.port}", who="APIServer pid=4241")
    server.serve_forever()


if __name__ == "__main__":
    main()
