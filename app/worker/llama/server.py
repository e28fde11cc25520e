"""Our thin OpenAI-compatible llama.cpp worker (the child process the supervisor starts).

    python -m app.worker.llama --model PATH --listen-fd FD --n-ctx C [...]   (key: environment)

It listens only after the model is loaded, so "health answers 200" means ready. The socket is
bound by the app and inherited (--listen-fd), so no other program can hold the port meanwhile;
--port (bind it here) is for systems that cannot pass sockets. One Llama
instance; requests are serialised by a lock (llama.cpp contexts are not thread-safe).
Why not llama-cpp-python's bundled server: it has no /health or /metrics, ignores
response_format json_schema and keeps no KV state across restarts.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from app.worker import protocol
from app.worker.llama.http_server import WorkerServer, log


def exit_with_parent() -> None:
    """The supervisor starts us in our own session (so it can kill our group); that also means
    nothing kills us if the app itself is killed. Watch the parent and leave with it."""
    parent = int(os.environ.get(protocol.PARENT_PID_ENV) or 0)
    if not parent or os.getppid() != parent:
        return

    def watch():
        while os.getppid() == parent:        # reparented (to init or a subreaper) = parent died
            time.sleep(1.0)
        log("the app that started this worker is gone: exiting")
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def physical_cores() -> int:
    try:
        import psutil
        return psutil.cpu_count(logical=False) or os.cpu_count() or 1
    except ImportError:
        return os.cpu_count() or 1


def gpu_flash_attention(llama_cpp) -> bool:
    """Flash attention whenever llama.cpp was built for a GPU (llama.cpp's own default there;
    llama-cpp-python turns it off). Without it, llama.cpp 0.3.36's CUDA backend died on the H200
    with "an illegal instruction was encountered" (ggml-cuda.cu:109) once a prompt read in
    128-token slices passed ~2,400 tokens with CUDA graphs on: on the main thread or not, and with
    no layer offloaded too (the attention still runs on the GPU), issue 30. A CPU-only build keeps
    its attention as it was (its KV states on disk stay readable)."""
    return bool(llama_cpp.llama_supports_gpu_offload())


def load(args):
    """Load the model; print one clear line and exit 2 if the file is missing or unreadable."""
    path = Path(args.model)
    if not path.is_file():
        log(f"error: model file not found: {path}")
        sys.exit(2)
    log(f"loading model {path.name} ({path.stat().st_size / 1e6:.0f} MB), n_ctx={args.n_ctx}, "
        f"threads={args.threads}, gpu_layers={args.n_gpu_layers}")
    import llama_cpp
    from llama_cpp._logger import set_verbose
    began = time.perf_counter()
    try:   # verbose while loading: llama.cpp's own lines show progress and name allocation failures
        llm = llama_cpp.Llama(str(path), n_ctx=args.n_ctx, n_gpu_layers=args.n_gpu_layers,
                              n_threads=args.threads, n_threads_batch=args.threads, verbose=True,
                              flash_attn=gpu_flash_attention(llama_cpp))
    except Exception as exc:
        log(f"error: failed to load model {path}: {exc}")
        sys.exit(3)
    llm.verbose = False
    set_verbose(False)
    keep_engine_warnings()
    log(f"model loaded in {time.perf_counter() - began:.1f} s")
    return llm


# ggml_log_level (ggml.h): 2 INFO, 3 WARN, 4 ERROR, 5 CONT (the line goes on the previous one's
# level). Not llama_cpp/_logger.py's comment (WARN 2, ERROR 3): with those, the worker kept the
# info lines and dropped ggml's "CUDA error: …" (seen on the H200, issue 30).
WARN, ERROR, CONT = 3, 4, 5
_last_kept = False
_callback = None          # the ctypes callback must outlive load(): llama.cpp holds its address


def engine_line(level: int, text: bytes) -> bytes | None:
    """What of llama.cpp's log the worker log keeps after load: warnings and errors and their
    continuation lines (`CUDA error: …`, `  current device: 0, in function …`); not the info
    lines every request prints. llama-cpp-python's own callback drops continuation lines once
    verbose is off, and writes through Python's buffered stderr just before ggml aborts."""
    global _last_kept
    keep = level in (WARN, ERROR) or (level == CONT and _last_kept)
    _last_kept = keep if level != CONT else _last_kept
    return text if keep else None


def keep_engine_warnings() -> None:
    """After load: llama.cpp's warnings and errors go straight to fd 2 (unbuffered: the line
    before an abort is not lost), where the supervisor's reader keeps them in the worker log."""
    global _callback
    import ctypes

    import llama_cpp

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, _user) -> None:
        line = engine_line(level, text or b"")
        if line:
            try:
                os.write(2, line)
            except OSError:
                pass
    _callback = forward
    llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))


def _warm_up(engine, calibrate_tokens: int) -> None:
    """While the server starts answering: measure prefill speed if asked (first: the filler must
    not displace a restored document), then put the document used last back into memory."""
    if calibrate_tokens:
        try:
            tps = engine.calibrate(calibrate_tokens)
            log(f"prefill calibration: {tps:.1f} tokens/s over {calibrate_tokens} tokens")
        except Exception as exc:  # noqa: BLE001 - a measurement only
            log(f"prefill calibration failed: {exc}")
    _restore_latest(engine)


def _restore_latest(engine) -> None:
    began = time.perf_counter()
    n = engine.restore_latest()
    if n:
        log(f"restored the last document's KV state ({n} tokens) in {(time.perf_counter() - began) * 1e3:.0f} ms")


def stop_cleanly_on_sigterm(store) -> None:
    """SIGTERM (the app stopping us) is a clean end: a restored KV entry it interrupts is not
    counted as one that crashed the worker. Leave at once, as the default action would."""
    def stop(_signum, _frame):
        if store is not None:
            store.settled()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog=f"python -m {protocol.MODULE}")
    ap.add_argument("--model", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int, help="bind this port (where sockets cannot be inherited)")
    where.add_argument("--listen-fd", type=int, help="serve on this inherited, already bound socket")
    ap.add_argument("--api-key", default=os.environ.get(protocol.KEY_ENV, ""))
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--n-gpu-layers", type=int, default=0)
    ap.add_argument("--threads", type=int, default=physical_cores())
    ap.add_argument("--kv-dir", default=None, help="KV state cache (default: the app cache dir)")
    ap.add_argument("--kv-max-gb", type=float, default=2.0, help="disk budget of the KV state cache (LRU)")
    ap.add_argument("--no-kv-store", action="store_true")
    ap.add_argument("--model-name", default=None)
    ap.add_argument("--calibrate-tokens", type=int, default=0,
                    help="read this many filler tokens at start to measure prefill speed (/metrics)")
    args = ap.parse_args(argv)
    if not args.api_key:
        ap.error(f"--api-key (or {protocol.KEY_ENV}) is required")
    exit_with_parent()
    llm = load(args)
    from app.worker.llama.chat import ChatEngine
    from app.worker.llama.kv_store import KvStore, model_key
    store = None
    if not args.no_kv_store:
        from app.core import paths
        store = KvStore(Path(args.kv_dir) if args.kv_dir else paths.kv_cache_dir(), model_key(Path(args.model)),
                        max_bytes=int(args.kv_max_gb * 1024**3))
    engine = ChatEngine(llm, store)
    threading.Thread(target=_warm_up, args=(engine, args.calibrate_tokens), name="kv-warm", daemon=True).start()
    name = args.model_name or Path(args.model).stem
    try:
        if args.listen_fd is not None:
            server = WorkerServer.on_socket(socket.socket(fileno=args.listen_fd), engine, args.api_key, name)
        else:
            server = WorkerServer((args.host, args.port), engine, args.api_key, name)
    except OSError as exc:
        log(f"error: cannot listen on {args.host}:{args.port or args.listen_fd}: {exc.strerror or exc}")
        sys.exit(4)
    log(f"listening on http://{args.host}:{server.server_address[1]}")
    stop_cleanly_on_sigterm(store)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        if store is not None:
            store.settled()


if __name__ == "__main__":
    main()
