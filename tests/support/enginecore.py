"""vLLM's EngineCore processes under its API server, found and killed as a crash would take them:
one copy for the tests and the GPU benchmark (benchmarks/gpu/app_ask.py)."""
from __future__ import annotations

import os
import signal
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every process under `pid`, parents before their children (/proc/<pid>/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        parent = todo.pop(0)
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def enginecores(api_pid: int) -> list[int]:
    """The EngineCore processes under the API server (vLLM sets the process title; a process it
    forks inherits that title, so every one of them is returned, parents first)."""
    found = []
    for pid in descendants(api_pid):
        try:
            if "EngineCore" in Path(f"/proc/{pid}/comm").read_text() + \
                    Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                found.append(pid)
        except OSError:
            continue
    return found


def kill_enginecores(api_pid: int) -> list[int]:
    """SIGKILL every EngineCore process under the API server; their pids."""
    pids = enginecores(api_pid)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:      # a forked child gone with its parent
            pass
    return pids
