"""One question through an engine that may die or hang on the way: restart it, ask again, say so.

EngineRuntime.ask hands its one attempt to `Recovery.ask`. An engine failure (the process died
mid-answer or between answers, nothing answers, a stall past the client's deadline) kills what is
left of the engine, starts the same plan again on a fresh port within the RestartPolicy's budget
(bounded tries, a fresh budget after a stable run) and asks the question once more, telling the
user through the runtime's status callback. A failed request (HTTP 4xx/5xx from an engine that
still runs) is reported as one line and restarts nothing. Only when the same plan no longer
starts (VRAM taken meanwhile) does the downgrade ladder step in; a port race never lowers it.
"""
from __future__ import annotations

import copy
import logging
import re
import threading
import time
from typing import Callable

from app.core.failures import FailureKind
from app.worker import errors
from app.worker.restart import RestartPolicy, restarts_engine

log = logging.getLogger(__name__)
K = FailureKind

RESTART_LIMIT = 3        # restarts in a row without a stable run, then the error reaches the user
STABLE_AFTER_S = 60.0    # an engine ready this long earns a fresh budget: a crash a day never exhausts it
PORT_RACES = 3           # fresh ports tried when another program takes the one just picked
DEATH_GRACE_S = 0.5      # after a 5xx: vLLM answers 500 as its EngineCore dies, then exits this soon
_ERROR_LINE = re.compile(r"\b(error|exception|failed|traceback)\b", re.I)


class Recovery:
    """The restart loop around one question; one per runtime (its budget spans questions)."""

    def __init__(self, runtime, policy: RestartPolicy | None = None):
        self.runtime = runtime
        self.policy = policy or RestartPolicy(RESTART_LIMIT, STABLE_AFTER_S)
        self.stopped = False
        self.recoveries: list[dict] = []    # {"kind", "restart_s"} per restart, for the log and figures

    @classmethod
    def of(cls, runtime) -> "Recovery":
        rec = getattr(runtime, "_recovery", None)
        if rec is None or rec.stopped:
            rec = runtime._recovery = cls(runtime)
        return rec

    # --- the question -------------------------------------------------------------------------
    def ask(self, ask_once: Callable[[threading.Event], object], cancel: threading.Event | None = None):
        """`ask_once(cut)` asks once; `cut` is set on the user's cancel or when the engine exits,
        so a pending stream ends at once instead of waiting for a read timeout."""
        rt = self.runtime
        sup = rt.supervisor
        if sup is not None and _ended(sup):                 # it died between answers
            self._restart(errors.WorkerDied(f"the engine had stopped ({_status(sup)})"), "had stopped",
                          asked_again=False)
        retried = False
        while True:
            try:
                return self._attempt(ask_once, cancel)
            except errors.WorkerError as exc:
                failure = self._engine_failure(exc, cancel)
                if failure is None:                         # a failed request, or the user's Stop
                    raise self._request_error(exc) from None
                hung = failure.kind is K.REQUEST_TIMEOUT
                if retried:
                    if hung and rt.supervisor is not None:
                        rt.supervisor.kill()     # the next question restarts it at once, not after a stall
                    raise _one_line(failure, "the engine failed again after a restart") from None
                self._restart(failure, "stopped answering" if hung else "stopped", hung=hung)
                retried = True

    def _attempt(self, ask_once, cancel):
        sup = self.runtime.supervisor
        cut, done = threading.Event(), threading.Event()

        def watch() -> None:
            while not done.is_set():
                if (cancel is not None and cancel.is_set()) or (sup is not None and _ended(sup)):
                    cut.set()
                    return
                done.wait(0.05)
        threading.Thread(target=watch, name="question-watch", daemon=True).start()
        try:
            return ask_once(cut)
        finally:
            done.set()

    def _engine_failure(self, exc: errors.WorkerError, cancel) -> errors.WorkerError | None:
        """`exc` as an engine failure to restart for, or None when it is the request's own."""
        sup = self.runtime.supervisor
        if exc.kind is K.CANCELLED:
            if cancel is not None and cancel.is_set():
                return None
            if sup is not None and _ended(sup):             # our watcher cut the stream: it died
                return errors.WorkerDied(f"the engine stopped mid-answer ({_status(sup)})")
            return None
        if exc.kind in (K.WORKER_DIED, K.UNAVAILABLE, K.REQUEST_TIMEOUT):
            return exc
        if exc.kind is K.SERVER_ERROR and sup is not None:
            if sup.exited.wait(DEATH_GRACE_S) or not self._healthy():
                return errors.WorkerDied(f"{exc} — and then the engine stopped")
        return None

    def _healthy(self) -> bool:
        client = self.runtime.client
        try:
            return bool(client and client.health())
        except Exception:
            return False

    def _request_error(self, exc: errors.WorkerError) -> errors.WorkerError:
        """The request's own failure, as one line that says what the server said: when its
        message is empty (vLLM streams errors whose message can be ''), the engine log's last
        error line, else where that log is."""
        text = " ".join(str(exc).split())
        if exc.kind is K.CANCELLED or (text and not text.endswith(":") and not text.endswith("):")):
            return exc
        sup = self.runtime.supervisor
        lines = [line.strip() for line in (sup.tail() if sup is not None else []) if line.strip()]
        said = next((line for line in reversed(lines) if _ERROR_LINE.search(line)), "")
        said = re.sub(r"^\([^)]*\)\s*", "", said)[:300]      # vLLM's "(APIServer pid=…)" prefix
        where = getattr(sup, "log_path", None)
        reason = f"the engine's log says: {said}" if said else (
            "the engine gave no reason" + (f" (its log: {where})" if where else ""))
        out = copy.copy(exc)
        out.args = (f"{text.rstrip(':')}: {reason}" if text else reason,)
        return out

    # --- bringing the engine back ---------------------------------------------------------------
    def _restart(self, failure: errors.WorkerError, what: str, hung: bool = False,
                 asked_again: bool = True) -> None:
        rt = self.runtime
        old_sup, old_client = rt.supervisor, rt.client
        up_for = old_sup.up_for_s() if old_sup is not None else 0.0
        if not self.policy.should_restart(up_for, str(failure), failure.kind):
            raise _one_line(failure, f"the engine {what}; not restarted after {self.policy.restarts} "
                                     f"restarts within {STABLE_AFTER_S:.0f} s") from None
        began = time.monotonic()
        if old_sup is not None:
            if hung:
                old_sup.kill()          # a SIGSTOPped or wedged engine ignores SIGTERM
            else:
                old_sup.stop(grace_s=2.0)
        rt.plan, rt.supervisor = self._relaunch(rt.plan)
        if old_client is not None and rt.client is not None and rt.client is not old_client:
            # the caller's deadlines (stall, connect) hold for the new incarnation too
            rt.client.timeout_s = old_client.timeout_s
            if hasattr(old_client, "connect_timeout_s"):
                rt.client.connect_timeout_s = old_client.connect_timeout_s
        took = time.monotonic() - began
        self.recoveries.append({"kind": failure.kind.value, "restart_s": round(took, 2)})
        verb = "killed and restarted" if hung else "restarted"
        rt._status("restarted", f"the engine {what}; {verb} it ({self.policy.count()})"
                                + (" and asked again" if asked_again else ""))
        log.info("engine restarted in %.1f s after %s: %s", took, failure.kind.value, failure)

    def _relaunch(self, plan):
        """The same plan on a fresh port; when it no longer starts, the ladder one rung down."""
        rt, races = self.runtime, 0
        while True:
            try:
                sup = rt._launch(plan)
            except errors.PortInUse:
                races += 1               # another program took the port: a new one, never a downgrade
                if races >= PORT_RACES:
                    raise
                continue
            except errors.StartError as exc:
                if restarts_engine(exc.kind) and self.policy.should_restart(0.0, str(exc), exc.kind):
                    continue
                if rt.switch is None:
                    raise
                plan, sup = rt.switch.on_runtime_failure(exc)   # e.g. VRAM taken meanwhile
            if self.stopped:             # stop() came while we started it: do not leave it running
                sup.stop()
                raise errors.Cancelled("the engine was stopped")
            if rt.switch is not None:
                rt.switch.plan, rt.switch.supervisor = plan, sup
            return plan, sup


def stop(runtime) -> None:
    """The runtime stops: a restart under way must not leave an engine running after it."""
    rec = getattr(runtime, "_recovery", None)
    if rec is not None:
        rec.stopped = True


def _ended(sup) -> bool:
    """The engine process is gone: the supervisor saw it exit, or it is reaped already (asked
    directly, so a death is never missed while the supervisor's watcher waits its turn)."""
    return sup.exited.is_set() or not sup.is_alive()


def _status(sup) -> str:
    proc = getattr(sup, "_proc", None)
    code = proc.poll() if proc is not None else None
    return f"exit code {code}" if code is not None else "killed"


def _one_line(failure: errors.WorkerError, prefix: str) -> errors.WorkerError:
    out = copy.copy(failure)
    out.args = (f"{prefix}: {' '.join(str(failure).split())}",)
    return out
