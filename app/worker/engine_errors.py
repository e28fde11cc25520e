"""Typed worker errors. str(exc) is one line fit for the user; no tracebacks reach the GUI/CLI."""
from __future__ import annotations

from app.core.failures import FailureKind


class WorkerError(Exception):
    """Base for everything the engine side can raise."""
    kind = FailureKind.INTERNAL


# --- start-up failures: the supervisor classifies the child's output into these -----------------

class StartError(WorkerError):
    """The worker did not become ready. `tail` holds the child's last output lines (for the log view)."""
    kind = FailureKind.START_FAILED

    def __init__(self, message: str, tail: list[str] | None = None):
        super().__init__(message)
        self.tail = list(tail or [])


class OutOfMemory(StartError):
    """Weights, KV cache or activations did not fit in (V)RAM."""
    kind = FailureKind.OUT_OF_MEMORY


class KvCacheTooSmall(StartError):
    """The requested context does not fit the KV cache; `max_len` is what the engine says would fit."""
    kind = FailureKind.KV_TOO_SMALL

    def __init__(self, message: str, max_len: int | None = None, tail: list[str] | None = None):
        super().__init__(message, tail)
        self.max_len = max_len


class ModelFileMissing(StartError):
    kind = FailureKind.MODEL_MISSING


class ModelLoadFailed(StartError):
    """The file exists but the engine cannot read it (corrupt, wrong format, unsupported architecture)."""
    kind = FailureKind.MODEL_BROKEN


class UnsupportedGpu(StartError):
    """The GPU, its compute capability or the quantisation is not supported by this engine."""
    kind = FailureKind.UNSUPPORTED


class PortInUse(StartError):
    kind = FailureKind.PORT_IN_USE


class StartTimeout(StartError):
    """No health answer before the deadline (and no load progress for the stall window)."""
    kind = FailureKind.START_TIMEOUT


class WorkerExited(StartError):
    """The child exited during start-up for a reason we could not classify."""
    kind = FailureKind.START_FAILED

    def __init__(self, code: int | None, tail: list[str] | None = None):
        last = next((line for line in reversed(tail or []) if line.strip()), "no output")
        super().__init__(f"engine exited with code {code}: {last.strip()[:300]}", tail)
        self.code = code


# --- failures while running or talking to a worker ------------------------------------------------

class WorkerDied(WorkerError):
    """The worker process ended (or dropped the connection) while a request was pending."""
    kind = FailureKind.WORKER_DIED


class WorkerUnavailable(WorkerError):
    """Nothing answers at the worker's address (not started, stopped, or wrong URL)."""
    kind = FailureKind.UNAVAILABLE


class AuthFailed(WorkerError):
    """The endpoint refused the API key (HTTP 401/403)."""
    kind = FailureKind.AUTH


class RequestTimeout(WorkerError):
    kind = FailureKind.REQUEST_TIMEOUT


class Cancelled(WorkerError):
    """The caller cancelled the request (Stop button)."""
    kind = FailureKind.CANCELLED


class BadRequest(WorkerError):
    """The endpoint rejected the request (HTTP 4xx), e.g. the prompt exceeds the context."""
    kind = FailureKind.BAD_REQUEST

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class ServerError(WorkerError):
    """The endpoint failed (HTTP 5xx) or answered something that is not the OpenAI protocol."""
    kind = FailureKind.SERVER_ERROR


def one_line(failure: WorkerError, prefix: str) -> WorkerError:
    """The same error (same kind) with `prefix` before its message, on one line."""
    import copy
    out = copy.copy(failure)
    out.args = (f"{prefix}: {' '.join(str(failure).split())}",)
    return out
