"""The engine's own reason for a failed or cut request, read from its log's last lines.

vLLM streams "Internal server error" (or nothing) when its grammar gives up or its engine dies;
why is only in its log: `Stop: ParserTooComplex`, `grammar rejected tokens …`, `CUDA out of
memory`, `EngineCore encountered an issue`. llama.cpp prints `CUDA error: …` before it aborts.
The user's one line names that reason.
"""
from __future__ import annotations

import re
import time
from typing import Callable

# What names a reason, most telling first; the generic error line is the last resort.
SPECIFIC = (
    re.compile(r"ParserTooComplex|grammar rejected tokens?[^\n]*|[Tt]oo many tokens rejected"),
    re.compile(r"out of memory|OutOfMemoryError", re.I),
    re.compile(r"CUDA error: .*|cuda(Error\w*|Malloc failed).*"),
    re.compile(r"EngineCore encountered an issue|EngineDeadError|Engine core proc \S+ died"),
    re.compile(r"GGML_ASSERT.*|\.cu:\d+: .*"),          # ggml's abort line: where, not why
)
GENERIC = re.compile(r"\b(error|exception|failed|traceback)\b", re.I)
_PREFIX = re.compile(r"^\([^)]*\)\s*|^(ERROR|WARNING|INFO) \S+ \S+ \[[^\]]+\]\s*")


def clean(line: str) -> str:
    """One log line without vLLM's "(EngineCore_DP0 pid=1) ERROR 12-01 10:00:00 [file.py:12]"."""
    line = line.strip()
    for _ in range(2):
        line = _PREFIX.sub("", line).strip()
    return line[:300]


def specific(lines: list[str]) -> str:
    """The last line that names a known reason, cut to its telling part; "" when none does."""
    for pattern in SPECIFIC:
        for line in reversed(lines):
            m = pattern.search(line)
            if m:
                return clean(line)
    return ""


def generic(lines: list[str]) -> str:
    return next((clean(line) for line in reversed(lines) if GENERIC.search(line) and line.strip()), "")


def reason(tail: Callable[[], list[str]], wait_s: float = 0.5, any_error: bool = True) -> str:
    """The engine's reason from its log tail (`tail()` → its last lines): a known one, else
    (with `any_error`) its last error line. The engine's threads write the log a moment after
    the error reached us: look again for up to `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        lines = [line for line in tail() if line.strip()]
        said = specific(lines)
        if said or time.monotonic() >= deadline:
            return said or (generic(lines) if any_error else "")
        time.sleep(0.05)
