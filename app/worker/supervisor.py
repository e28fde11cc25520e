"""Start, watch and stop one engine child process (engine-agnostic; the LaunchSpec says how).

Readiness = health polling with a short timeout + watching the child's exit + a stall
deadline that moves whenever the child prints a load-progress line [Ollama WaitUntilRunning].
"""
from __future__ import annotations

import atexit
import collections
import enum
import http.client
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Callable

from app.core.cancel import Cancel
from app.worker import ports, protocol
from app.worker.engine_errors import StartError, StartTimeout, WorkerExited
from app.worker.launch import LaunchSpec

TAIL_LINES = 200


class WorkerStatus(enum.Enum):
    LAUNCHING = "launching"
    LOADING = "loading"
    READY = "ready"
    NOT_RESPONDING = "not responding"
    FAILED = "failed"
    DEAD = "dead"
    STOPPED = "stopped"


def probe(url: str, timeout_s: float = 1.0, api_key: str = "") -> int | None:
    """HTTP status of GET url, or None when nothing answers."""
    parts = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, parts.port, timeout=timeout_s)
    try:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        conn.request("GET", parts.path or "/", headers=headers)
        return conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


class Supervisor:
    def __init__(self, spec: LaunchSpec, log_path: Path | None = None,
                 on_status: Callable[[WorkerStatus, str], None] | None = None):
        self.spec = spec
        self.log_path = Path(log_path) if log_path else None
        self.on_status = on_status
        self.status = WorkerStatus.STOPPED
        self.started_at: float | None = None
        self._proc: subprocess.Popen | None = None
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._lock = threading.Lock()
        self._last_progress = 0.0
        self._stopping = False
        self._reader: threading.Thread | None = None
        # set once the running child has ended (death, stop or kill): in-flight requests wait on it,
        # and the flags linked to it (a request's cut) are set with it
        self.exited = Cancel()
        self._patterns = [re.compile(p) for p in spec.progress_patterns]

    # --- public -------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def is_alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_code(self) -> int | None:
        """The child's exit code once it ended (negative: the signal that killed it); None while it runs."""
        return self._proc.poll() if self._proc is not None else None

    def tail(self) -> list[str]:
        with self._lock:
            return list(self._tail)

    def start(self) -> None:
        """Launch the child and block until it is READY; raise a typed StartError otherwise."""
        if self.is_alive():
            return
        self._stopping = False
        self.exited.clear()
        self._set(WorkerStatus.LAUNCHING, self.spec.description or self.spec.engine)
        self._spawn()
        atexit.register(self.stop)
        try:
            self._wait_ready()
        except StartError as exc:
            self._kill()
            self._release_socket()
            if not self._stopping:                    # stop() during start-up already said STOPPED
                self._set(WorkerStatus.FAILED, str(exc))
            raise
        self.started_at = time.monotonic()
        self._set(WorkerStatus.READY, self.spec.description or self.spec.engine)
        threading.Thread(target=self._watch_exit, name="worker-exit", daemon=True).start()

    def stop(self, grace_s: float = 5.0, keep_port: bool = False) -> None:
        """SIGTERM the process group, wait, SIGKILL, reap. Safe to call twice or from atexit.
        `keep_port`: its port stays ours, refusing, until release_port() (a restart: the engine's
        client names it until the next worker serves)."""
        self._stopping = True
        atexit.unregister(self.stop)
        was_running = self._proc is not None
        self._kill(grace_s)
        self._refuse() if keep_port else self._release_socket()
        if was_running and self.status not in (WorkerStatus.FAILED, WorkerStatus.DEAD, WorkerStatus.STOPPED):
            self._set(WorkerStatus.STOPPED, "stopped")

    def kill(self, keep_port: bool = False) -> None:
        """SIGKILL the process group now: a hung (e.g. SIGSTOPped) engine never honours SIGTERM,
        and its grace period would only make the question wait longer. `keep_port`: as stop()."""
        self._stopping = True
        atexit.unregister(self.stop)
        proc = self._proc
        if proc is not None:
            self._signal(proc, signal.SIGKILL if os.name == "posix" else signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._refuse() if keep_port else self._release_socket()
        self.exited.set()
        if self.status not in (WorkerStatus.FAILED, WorkerStatus.DEAD, WorkerStatus.STOPPED):
            self._set(WorkerStatus.STOPPED, "killed")

    def up_for_s(self) -> float:
        """How long this incarnation has been ready (0 before READY)."""
        return time.monotonic() - self.started_at if self.started_at is not None else 0.0

    # --- start-up -----------------------------------------------------------------------------
    def _spawn(self) -> None:
        # PAGEWISE_PARENT_PID: our own worker exits when we die, even by SIGKILL (it has its own session).
        env = {**os.environ, "PYTHONUNBUFFERED": "1", protocol.PARENT_PID_ENV: str(os.getpid()),
               **{k: str(v) for k, v in self.spec.env.items()}}
        kwargs: dict = {}
        if self.spec.listen_socket is not None:
            kwargs["pass_fds"] = (self.spec.listen_socket.fileno(),)
        if os.name == "posix":
            kwargs["start_new_session"] = True          # own process group: stop() kills helpers too
        else:
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        self._tail.clear()
        self._last_progress = time.monotonic()
        self._proc = subprocess.Popen(self.spec.argv, env=env, cwd=self.spec.cwd, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)
        self._reader = threading.Thread(target=self._drain, args=(self._proc, self._open_log()),
                                        name="worker-output", daemon=True)
        self._reader.start()

    def _open_log(self):
        if not self.log_path:
            return None
        try:   # 0600 (it names documents); an unwritable folder only costs the log, not the engine
            self.log_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            log = open(fd, "a", encoding="utf-8", errors="replace")
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} start {' '.join(self.spec.argv)}\n")
        except OSError as exc:
            logging.getLogger(__name__).warning("cannot write the worker log %s: %s", self.log_path, exc)
            return None
        return log

    def _drain(self, proc: subprocess.Popen, log) -> None:
        """Copy the child's output into the bounded tail and the log file, line by line."""
        try:
            for raw in iter(proc.stdout.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                with self._lock:
                    self._tail.append(line)
                if log:
                    log.write(line + "\n")
                    log.flush()
                if any(p.search(line) for p in self._patterns):
                    self._last_progress = time.monotonic()
                    if self.status == WorkerStatus.LAUNCHING:
                        self._set(WorkerStatus.LOADING, line.strip()[:200])
        finally:
            proc.stdout.close()
            if log:
                log.close()

    def _wait_ready(self) -> None:
        spec, began = self.spec, time.monotonic()
        url = spec.root_url + spec.health_path
        while True:
            code = self._proc.poll()
            if self._stopping:                        # stop() from another thread (app quits)
                raise StartError(f"{spec.engine} start-up was cancelled")
            if code is not None:
                self._reader.join(timeout=2)              # let the last lines arrive first
                raise self._classified() or WorkerExited(code, self.tail())
            status = self._probe(url, timeout_s=1.0)
            if status == 200:
                return
            if status == 503:         # it answers, its places busy (other clients): alive, no stall
                self._last_progress = time.monotonic()
            now = time.monotonic()
            if now - self._last_progress > spec.stall_timeout_s or now - began > spec.ready_timeout_s:
                self._set(WorkerStatus.NOT_RESPONDING, "no answer from the engine")
                waited = now - began
                raise self._classified() or StartTimeout(
                    f"{spec.engine} did not become ready within {waited:.0f} s", self.tail())
            time.sleep(0.1)

    def _probe(self, url: str, timeout_s: float) -> int | None:
        """The health probe carries the key: it goes only to a listener that is our own child's."""
        if self.spec.check_listener and ports.can_check_listeners():
            port = urllib.parse.urlsplit(url).port
            if port is None or self._proc is None or not ports.owned_listener(port, self._proc.pid):
                return None
        return probe(url, timeout_s=timeout_s, api_key=self.spec.api_key)

    def _refuse(self) -> None:
        """The child has ended: its socket stops listening, so a request to the dead worker is
        refused at once instead of queueing unanswered, but the port stays ours: the engine's
        client still names it, and another account binding it would receive the key and the
        next document sent there."""
        if self.spec.listen_socket is not None:
            ports.refuse(self.spec.listen_socket)

    def release_port(self) -> None:
        """Give the port up (no client names it any more)."""
        self._release_socket()

    def _release_socket(self) -> None:
        if self.spec.listen_socket is not None:
            self.spec.listen_socket.close()

    def _classified(self) -> StartError | None:
        if not self.spec.classify:
            return None
        err = self.spec.classify(self.tail())
        if err is not None and isinstance(err, StartError) and not err.tail:
            err.tail = self.tail()
        return err

    # --- running / stopping -------------------------------------------------------------------
    def _watch_exit(self) -> None:
        """After READY: notice the child's death at once, and a hung child by its health probe."""
        proc, misses = self._proc, 0
        interval = self.spec.watch_interval_s or None
        url = self.spec.root_url + self.spec.health_path
        while proc is not None and proc is self._proc:
            try:
                code = proc.wait(timeout=interval)
            except subprocess.TimeoutExpired:
                ok = self._probe(url, timeout_s=min(2.0, max(interval, 0.5))) == 200
                misses = 0 if ok else misses + 1
                if misses == 3 and not self._stopping:
                    self._set(WorkerStatus.NOT_RESPONDING, "the engine stopped answering its health check")
                elif misses == 0 and self.status == WorkerStatus.NOT_RESPONDING:
                    self._set(WorkerStatus.READY, "the engine answers again")
                continue
            self._refuse()
            self.exited.set()
            if not self._stopping:
                self._set(WorkerStatus.DEAD, f"engine exited with code {code}")
            return

    def _kill(self, grace_s: float = 5.0) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL if os.name == "posix" else signal.SIGTERM)
                proc.wait(timeout=10)
        else:
            self._signal(proc, signal.SIGKILL if os.name == "posix" else signal.SIGTERM)  # stray children
        if self._reader:
            self._reader.join(timeout=2)
        self.exited.set()

    @staticmethod
    def _signal(proc: subprocess.Popen, sig: int) -> None:
        try:
            if os.name == "posix":
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def _set(self, status: WorkerStatus, detail: str) -> None:
        self.status = status
        if self.on_status:
            try:
                self.on_status(status, detail)
            except Exception as exc:  # a broken callback must not kill the supervisor
                print(f"on_status callback failed: {exc}", file=sys.stderr)
