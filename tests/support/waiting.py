"""Polling for a condition that another process or thread brings about."""
from __future__ import annotations

import time


def wait_for(predicate, timeout_s: float) -> bool:
    """True as soon as `predicate()` holds; after `timeout_s`, its last answer."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def pid_alive(pid: int) -> bool:
    """Whether a process with this id still exists (signal 0 checks without sending anything)."""
    import os
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
