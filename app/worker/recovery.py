"""One question through an engine that may die or hang on the way: restart it, ask again, say so.

`ask(engine, ask_once, cancel)`: an engine failure (the process died mid-answer or between
answers, nothing answers, a stall past the client's deadline) makes the Engine restart the same
plan on a fresh port within its restart budget, and the question is asked once more. A failed
request (HTTP 4xx/5xx from an engine that still runs) is reported as one line and restarts
nothing. Only when the same plan no longer starts does the downgrade ladder step in (the
Engine's business); a port race never lowers it. An engine slow to start (vLLM) comes back in
the background while a llama.cpp stand-in answers (the Engine's, app/worker/standin.py), and
takes over again at the start of the next question once it is ready. This module only reads the
Engine's public API.
"""
from __future__ import annotations

import copy
import threading
from typing import Callable, TypeVar

from app.core.cancel import Cancel
from app.core.failures import FailureKind
from app.worker import engine_log, engine_errors as errors

K = FailureKind
T = TypeVar("T")
DEATH_GRACE_S = 0.5      # after a 5xx: vLLM answers 500 as its EngineCore dies, then exits this soon


def ask(engine, ask_once: Callable[[threading.Event], T], cancel: threading.Event | None = None) -> T:
    """`ask_once(cut)` asks once; `cut` is set on the user's cancel or when the engine exits,
    so a pending stream ends at once instead of waiting for a read timeout."""
    engine.settle()              # a slow engine back behind its stand-in takes over between questions
    if engine.ended():                                      # it died between answers
        engine.restart(errors.WorkerDied(f"the engine had stopped ({engine.exit_status()})"), "had stopped",
                       asked_again=False)
    retried = False
    while True:
        try:
            return _attempt(engine, ask_once, cancel)
        except errors.WorkerError as exc:
            failure = _engine_failure(engine, exc, cancel)
            if failure is None:                             # a failed request, or the user's Stop
                raise _request_error(engine, exc) from None
            hung = failure.kind is K.REQUEST_TIMEOUT
            if retried:
                if hung:
                    engine.kill()     # the next question restarts it at once, not after a stall
                said = engine_log.reason(engine.log_tail, any_error=False)    # e.g. llama.cpp's `CUDA error: …`
                raise errors.one_line(failure, "the engine failed again after a restart"
                                      + (f" (its log: {said})" if said else "")) from None
            engine.restart(failure, "stopped answering" if hung else "stopped", hung=hung)
            retried = True


def _attempt(engine, ask_once, cancel):
    """One try, its stream cut the moment the engine process ends or the user stops it: both
    are flags linked to `cut` (`cancel` an app.core.cancel.Cancel; a plain Event is seen only
    before the try begins), no thread watching them."""
    cut = threading.Event()
    unlinks = [engine.on_end(cut)]
    if isinstance(cancel, Cancel):
        unlinks.append(cancel.link(cut))
    elif cancel is not None and cancel.is_set():
        cut.set()
    try:
        return ask_once(cut)
    finally:
        for unlink in unlinks:
            unlink()


def _engine_failure(engine, exc: errors.WorkerError, cancel) -> errors.WorkerError | None:
    """`exc` as an engine failure to restart for, or None when it is the request's own."""
    if exc.kind is K.CANCELLED:
        if cancel is not None and cancel.is_set():
            return None
        if engine.ended():                                  # our watcher cut the stream: it died
            return errors.WorkerDied(f"the engine stopped mid-answer ({engine.exit_status()})")
        return None
    if exc.kind in (K.WORKER_DIED, K.UNAVAILABLE, K.REQUEST_TIMEOUT):
        return exc
    if exc.kind is K.SERVER_ERROR and engine.adapter is not None and engine.adapter.runs_locally:
        if engine.wait_exit(DEATH_GRACE_S) or not engine.healthy():
            return errors.WorkerDied(f"{exc} — and then the engine stopped")
    return None


def _request_error(engine, exc: errors.WorkerError) -> errors.WorkerError:
    """The request's own failure, as one line that says what the server said and, from the
    engine log, why (vLLM's message is often "Internal server error" or empty; its log names
    `ParserTooComplex`, an out-of-memory …); with no reason there, where that log is."""
    text = " ".join(str(exc).split())
    if exc.kind is K.CANCELLED:
        return exc
    complete = bool(text) and not text.endswith(":") and not text.endswith("):")
    said = engine_log.reason(engine.log_tail, any_error=not complete)
    if (complete and not said) or (said and said in text):
        return exc
    where = engine.log_path()
    reason = f"the engine's log says: {said}" if said else (
        "the engine gave no reason" + (f" (its log: {where})" if where else ""))
    out = copy.copy(exc)
    out.args = (f"{text.rstrip(':')}: {reason}" if text else reason,)
    return out
