"""LaunchSpec: everything the engine-agnostic supervisor needs to start one worker process."""
from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from app.worker.engine_errors import WorkerError


@dataclass
class LaunchSpec:
    argv: list[str]
    env: dict                      # added to os.environ for the child
    base_url: str                  # OpenAI convention, ends in /v1: http://127.0.0.1:PORT/v1
    api_key: str
    model_name: str                # what clients send as "model"
    engine: str                    # "llamacpp" | "vllm" | "fake" ...
    health_path: str = "/health"   # relative to the server root (base_url without /v1)
    ready_timeout_s: float = 120   # hard cap on start-up
    stall_timeout_s: float = 60    # no progress line for this long → not responding
    # Regexes that mean "still loading": each match moves the stall deadline.
    progress_patterns: tuple[str, ...] = ()
    # Reads the output tail and returns a typed error (out of memory, KV too small...) or None.
    classify: Callable[[list[str]], WorkerError | None] | None = None
    watch_interval_s: float = 5.0  # health probe while running (0 = only watch for exit)
    cwd: Path | None = None
    description: str = ""          # one line for the status bar/log ("llama.cpp, CPU, 8K context")
    extra: dict = field(default_factory=dict)  # engine-specific facts (n_ctx, plan rung...) for callers
    # The socket the child serves on, bound by the app and inherited (its fd number is in argv):
    # no moment where the port is free for another account to take.
    listen_socket: socket.socket | None = None
    # An engine that binds its own port: no key is sent before its listener is found among the
    # child's own open sockets (ports.owned_listener).
    check_listener: bool = False

    @property
    def root_url(self) -> str:
        """Server root, where /health and /metrics live."""
        url = self.base_url.rstrip("/")
        return url[:-3] if url.endswith("/v1") else url
