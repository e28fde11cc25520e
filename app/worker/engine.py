"""The Engine: the one owner of the running engine — its plan, its child process (Supervisor) and
the client that talks to it.

It starts a plan through the downgrade ladder, launches through its engine's adapter (or an
injected launcher: tests hand it one as httpx takes a transport), restarts a dead or hung engine
on a fresh port within the restart budget, and stops it. Nothing outside this module assigns a
plan, a supervisor or a client; the runtime asks questions through `run` and `chat`.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, TypeVar

from app.core import paths
from app.core.plan.types import Plan
from app.worker import engine_log, engine_errors as errors
from app.worker.client import ChatClient
from app.worker.engines import adapter_for
from app.worker.engines.base import EngineAdapter, LaunchOptions
from app.worker.ports import PORT_RACES
from app.worker.restart import RestartPolicy, restarts_engine
from app.worker.supervisor import Supervisor, WorkerStatus

log = logging.getLogger(__name__)
T = TypeVar("T")
StatusCallback = Callable[[str, str], None]
# launcher(plan, options, on_status) → a started Supervisor (raises a typed StartError)
Launcher = Callable[[Plan, LaunchOptions, Callable[[WorkerStatus, str], None]], Supervisor]

RESTART_LIMIT = 3        # restarts in a row without a stable run, then the error reaches the user
STABLE_AFTER_S = 60.0    # an engine ready this long earns a fresh budget: a crash a day never exhausts it


def launch_process(plan: Plan, options: LaunchOptions, on_status) -> Supervisor:
    """The real launch: the adapter's command line for the catalogue's model file, as a child
    process that answers its health check (or a typed StartError)."""
    from app.core.models import catalogue as models
    spec = adapter_for(plan.engine).launch_spec(plan, models.local_path(models.load_catalogue().get(plan.model_id)),
                                                options)
    sup = Supervisor(spec, log_path=options.log_path or paths.log_dir() / f"worker-{plan.engine.value}.log",
                     on_status=on_status)
    sup.start()
    return sup


@dataclass
class _Started:
    supervisor: Supervisor | None       # None: a remote endpoint (nothing of ours runs)
    client: ChatClient


@dataclass
class _Comeback:
    """A slow engine starting again in the background while a stand-in answers."""
    plan: Plan
    began: float
    done: threading.Event = field(default_factory=threading.Event)
    result: tuple[Plan, _Started] | None = None
    error: Exception | None = None
    ready_s: float = 0.0


class Engine:
    def __init__(self, on_status: StatusCallback | None = None, launcher: Launcher | None = None,
                 policy: RestartPolicy | None = None, standin: Callable[[Plan], object] | None = None,
                 standin_launcher: Launcher | None = None):
        self.on_status = on_status
        self.launcher = launcher or launch_process
        # Who answers while a slow engine (vLLM) starts again: standin(plan) → app.worker.standin.Choice
        # or None. The real launch has one; an injected launcher (a test's fake engine) only if given.
        self.standin = standin if standin is not None or launcher is not None else _choose_stand_in
        self.standin_launcher = standin_launcher or launch_process
        self.on_installed: Callable[[], None] | None = None   # after a stand-in or the engine behind it took over
        self._comeback: _Comeback | None = None
        self.policy = policy or RestartPolicy(RESTART_LIMIT, STABLE_AFTER_S)
        self.recoveries: list[dict] = []    # {"kind", "restart_s"} per restart, for the log and figures
        self._plan: Plan | None = None
        self._adapter: EngineAdapter | None = None
        self._supervisor: Supervisor | None = None
        self._client: ChatClient | None = None
        self._switch = None
        self._options_for: Callable[[Plan], LaunchOptions] = lambda plan: LaunchOptions()
        self._stopped = threading.Event()

    # --- what the engine is ---------------------------------------------------------------------
    @property
    def plan(self) -> Plan | None:
        return self._plan

    @property
    def adapter(self) -> EngineAdapter | None:
        return self._adapter

    @property
    def running(self) -> bool:
        return self._client is not None

    @property
    def pid(self) -> int | None:
        return self._supervisor.pid if self._supervisor is not None else None

    @property
    def base_url(self) -> str | None:
        return self._client.base_url if self._client is not None else None

    def status(self, state: str, detail: str) -> None:
        log.info("engine %s: %s", state, detail)
        if self.on_status:
            self.on_status(state, detail)

    # --- start ----------------------------------------------------------------------------------
    def start(self, plan: Plan, switch=None, options_for: Callable[[Plan], LaunchOptions] | None = None,
              connected: ChatClient | None = None) -> Plan:
        """Start `plan`; with a downgrade `switch` (built with `self.launch` as its start
        function), the first rung below it that starts. `connected`: a remote endpoint's client
        whose health check already ran (not asked twice). Returns the plan that runs."""
        self._stopped.clear()
        self._switch = switch
        if options_for is not None:
            self._options_for = options_for
        if connected is not None:
            started = _Started(None, connected)
        elif switch is None:
            started = self._launch_on_free_port(plan)
        else:
            plan, started = switch.start(plan)
        self._install(plan, started)
        return plan

    def launch(self, plan: Plan, launcher: Launcher | None = None, on_status: StatusCallback | None = None
               ) -> _Started:
        """One launch of `plan` (the downgrade switch's start function): a child process and its
        client, or a connection to a remote endpoint."""
        adapter = adapter_for(plan.engine)
        if not adapter.runs_locally:
            return _Started(None, adapter.connect(plan))
        say = on_status or self.status
        say("launching", f"{plan.engine.value} with {plan.model_id}")
        sup = (launcher or self.launcher)(plan, self._options_for(plan), lambda st, detail: say(st.name.lower(), detail))
        if self._stopped.is_set():       # stop() came while it started: do not leave it running
            sup.stop()
            raise errors.Cancelled("the engine was stopped")
        client = adapter.client(sup.spec, adapter.repeat_penalty(_catalogue_penalty(plan)))
        adapter.warm(client)        # vLLM: its structured-output path, before the first question
        return _Started(sup, client)

    def _launch_on_free_port(self, plan: Plan, **how) -> _Started:
        """Launch `plan`; a port taken by another program between picking and binding only costs a
        fresh port (PORT_RACES of them), never a downgrade."""
        for race in range(PORT_RACES):
            try:
                return self.launch(plan, **how)
            except errors.PortInUse:
                if race == PORT_RACES - 1:
                    raise
        raise AssertionError("unreachable")

    def _install(self, plan: Plan, started: _Started) -> None:
        old = self._client
        self._plan, self._adapter = plan, adapter_for(plan.engine)
        self._supervisor, self._client = started.supervisor, started.client
        if old is not None and started.client is not old:
            # the caller's deadlines (stall, connect) hold for the new incarnation too
            started.client.timeout_s = old.timeout_s
            started.client.connect_timeout_s = old.connect_timeout_s

    # --- talking to it --------------------------------------------------------------------------
    def chat(self, *args, **kwargs):
        """A chat request to the running engine (ChatClient.chat's arguments; without `stall_s`,
        the client's own deadline). A reply the engine cut keeps its text; its `cut` names the
        engine's reason from its log, and a cut by a dying engine is an engine failure."""
        result = self._require().chat(*args, **kwargs)
        if result.cut:
            if self.ended() or not self.healthy():
                raise errors.WorkerDied(f"the engine stopped mid-answer: {result.cut}")
            # the token bound the caller set writes no error line: look once, don't wait for one
            said = engine_log.reason(self.log_tail, wait_s=0.0 if result.finish_reason == "length" else 0.5,
                                     any_error=False)
            result.cut = said if said and said not in result.cut else result.cut
        return result

    def use_repeat_penalty(self, penalty: float) -> None:
        """An experiment's repetition penalty instead of the catalogue's (benchmarks/quality.py)."""
        self._require().repeat_penalty = penalty

    def count_tokens(self, messages: list[dict]) -> int:
        return self._require().count_tokens(messages)

    def metrics(self) -> dict:
        """The engine's /metrics as {name: value}; {} when nothing answers (a gauge must not fail)."""
        try:
            return self._client.metrics() if self._client is not None and not self.ended() else {}
        except Exception:  # noqa: BLE001 - the gauge must never take the app down
            return {}

    def healthy(self) -> bool:
        try:
            return bool(self._client is not None and not self.ended() and self._client.health())
        except Exception:  # noqa: BLE001 - a probe: any failure is "not healthy"
            return False

    def _require(self) -> ChatClient:
        if self._client is None:
            raise errors.WorkerUnavailable("the engine is not running")
        # an engine that bound its own port (vLLM) left it free once it ended: whoever binds it
        # next would get the key (vLLM's is kept per install) and what we send
        if self.ended():
            raise errors.WorkerDied(f"the engine had stopped ({self.exit_status()})")
        return self._client

    # --- its process ----------------------------------------------------------------------------
    def ended(self) -> bool:
        """The engine process is gone: the supervisor saw it exit, or it is reaped already (asked
        directly, so a death is never missed while the supervisor's watcher waits its turn)."""
        sup = self._supervisor
        return sup is not None and (sup.exited.is_set() or not sup.is_alive())

    def on_end(self, flag: threading.Event) -> Callable[[], None]:
        """`flag` is set the moment the engine process ends (at once if it has); returns the
        unlink. A team's server (no process of ours) never ends this way."""
        sup = self._supervisor
        link = getattr(getattr(sup, "exited", None), "link", None)
        if link is None:
            return lambda: None
        unlink = link(flag)
        if not sup.is_alive():          # reaped before the supervisor's watcher said so
            flag.set()
        return unlink

    def wait_exit(self, seconds: float) -> bool:
        sup = self._supervisor
        return sup is not None and sup.exited.wait(seconds)

    def exit_status(self) -> str:
        code = self._supervisor.exit_code() if self._supervisor is not None else None
        return f"exit code {code}" if code is not None else "killed"

    def log_tail(self) -> list[str]:
        return self._supervisor.tail() if self._supervisor is not None else []

    def log_path(self):
        return getattr(self._supervisor, "log_path", None)

    def kill(self) -> None:
        """SIGKILL now: a hung engine ignores SIGTERM; the next question restarts it at once."""
        if self._supervisor is not None:
            self._supervisor.kill(keep_port=True)       # its client stays installed until the restart

    # --- bringing it back -----------------------------------------------------------------------
    def restart(self, failure: errors.WorkerError, what: str, hung: bool = False,
                asked_again: bool = True) -> None:
        """The same plan on a fresh port, within the restart budget; when it no longer starts (VRAM
        taken meanwhile), the ladder one rung down. Says so through the status callback."""
        old = self._supervisor
        up_for = old.up_for_s() if old is not None else 0.0
        if not self.policy.should_restart(up_for, str(failure), failure.kind):
            raise errors.one_line(failure, f"the engine {what}; not restarted after {self.policy.restarts} "
                                     f"restarts within {STABLE_AFTER_S:.0f} s") from None
        began = time.monotonic()
        # the old port stays ours (refusing) until the new client is installed: until then a
        # reader thread's request still names it, and must not find another program there
        if old is not None:
            if hung or (self._adapter is not None and self._adapter.slow_restart):
                # a SIGSTOPped or wedged engine ignores SIGTERM; vLLM's API server outlives its dead
                # EngineCore and shuts down slowly, with nothing to save
                old.kill(keep_port=True)
            else:
                old.stop(grace_s=2.0, keep_port=True)
        try:
            if self._behind_stand_in(failure, what, began, asked_again):
                return
            # a stand-in that died is started again by its own launcher while the engine behind it comes back
            how = {"launcher": self.standin_launcher} if self._comeback is not None else {}
            plan, started = self._relaunch(self._plan, **how)
            self._install(plan, started)
        finally:
            if old is not None:
                old.release_port()
        took = time.monotonic() - began
        self.recoveries.append({"kind": failure.kind.value, "restart_s": round(took, 2)})
        verb = "killed and restarted" if hung else "restarted"
        self.status("restarted", f"the engine {what}; {verb} it ({self.policy.count()})"
                                 + (" and asked again" if asked_again else ""))
        log.info("engine restarted in %.1f s after %s: %s", took, failure.kind.value, failure)

    def _relaunch(self, plan: Plan, **how) -> tuple[Plan, _Started]:
        while True:
            try:
                return plan, self._launch_on_free_port(plan, **how)
            except errors.PortInUse:
                raise
            except errors.StartError as exc:
                if restarts_engine(exc.kind) and self.policy.should_restart(0.0, str(exc), exc.kind):
                    continue
                if self._switch is None:
                    raise
                return self._switch.on_runtime_failure(plan, exc)   # e.g. VRAM taken meanwhile

    # --- a stand-in while a slow engine comes back ----------------------------------------------
    def _behind_stand_in(self, failure: errors.WorkerError, what: str, began: float, asked_again: bool) -> bool:
        """For an engine slow to start (vLLM, about a minute): start it again in the background and
        answer meanwhile with the llama.cpp stand-in (seconds to load). False when there is none
        (no stand-in set, a fast engine, no GGUF model here): the caller restarts as before."""
        if self.standin is None or self._comeback is not None or not self._adapter or not self._adapter.slow_restart:
            return False
        slow = self._plan
        try:
            choice = self.standin(slow)
        except Exception as exc:  # noqa: BLE001 - choosing a stand-in must never cost the restart itself
            log.warning("no stand-in: %s", exc)
            choice = None
        if choice is None:
            return False
        comeback = self._comeback = _Comeback(slow, began)
        threading.Thread(target=self._come_back, args=(comeback,), name="engine-comeback", daemon=True).start()
        name = slow.engine.label
        try:
            started = self._launch_on_free_port(choice.plan, launcher=self.standin_launcher)
        except errors.WorkerError as exc:       # the old way: wait for the engine itself
            log.warning("the stand-in did not start (%s); waiting for %s", exc, name)
            comeback.done.wait()
            self._comeback = None
            if comeback.error is not None:
                raise comeback.error
            self._install(*comeback.result)
            self.recoveries.append({"kind": failure.kind.value, "restart_s": round(comeback.ready_s, 2)})
            self.status("restarted", f"the engine {what}; restarted it ({self.policy.count()})"
                                     + (" and asked again" if asked_again else ""))
            return True
        self._install(choice.plan, started)
        took = time.monotonic() - began
        self.recoveries.append({"kind": failure.kind.value, "restart_s": round(took, 2),
                                "stand_in": choice.plan.model_id})
        self.status("restarted", f"{name} {what}; {choice.line} answers while {name} restarts in the background "
                                 f"({self.policy.count()})" + (" and asked again" if asked_again else ""))
        log.info("stand-in %s ready %.1f s after %s: %s", choice.plan.model_id, took, failure.kind.value, failure)
        if self.on_installed:
            self.on_installed()
        return True

    def _come_back(self, comeback: _Comeback) -> None:
        """The slow engine's restart, in the background; its progress said as "restarting"."""
        name = comeback.plan.engine.label

        def say(state: str, detail: str) -> None:
            self.status("restarting", f"{name} in the background: {state} ({detail})")
        try:
            comeback.result = self._relaunch(comeback.plan, on_status=say)
        except Exception as exc:  # noqa: BLE001 - kept for settle(): the stand-in goes on answering
            comeback.error = exc
        comeback.ready_s = time.monotonic() - comeback.began
        comeback.done.set()          # before the check below: stop() either sees it done or is seen here
        if comeback is not self._comeback and comeback.result is not None:    # stopped meanwhile
            _quietly_stop(comeback.result[1])
        elif comeback.result is not None:
            self.status("restarting", f"{name} is ready again {comeback.ready_s:.0f} s after it stopped; "
                                      "the next question goes to it")

    def settle(self) -> None:
        """Between questions: once the engine behind a stand-in is ready, it answers again and the
        stand-in stops (never mid-answer: a question's prompt was sized for the engine it began on)."""
        comeback = self._comeback
        if comeback is None or not comeback.done.is_set():
            return
        self._comeback = None
        name = comeback.plan.engine.label
        if comeback.error is not None:
            self.status("failed", f"{name} did not start again ({comeback.error}); the stand-in goes on answering")
            return
        standin = self._supervisor
        self._install(*comeback.result)
        back = comeback.result[1].supervisor
        if back is not None:        # from now on its states are the engine's own, no longer "in the background"
            back.on_status = lambda st, detail: self.status(st.name.lower(), detail)
        if standin is not None:
            standin.stop(grace_s=2.0)
        self.recoveries.append({"kind": "back", "restart_s": round(comeback.ready_s, 2)})
        self.status("ready", f"{name} answers again (ready {comeback.ready_s:.0f} s after it stopped); "
                             "the stand-in stopped")
        if self.on_installed:
            self.on_installed()

    def behind_stand_in(self) -> Plan | None:
        """The slow engine's plan while a stand-in answers for it (None otherwise)."""
        return self._comeback.plan if self._comeback is not None else None

    def wait_comeback(self, seconds: float) -> bool:
        """Wait until the engine behind a stand-in is ready (or failed); True if it is done."""
        comeback = self._comeback
        return comeback is None or comeback.done.wait(seconds)

    # --- stop -----------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the engine (idempotent); a restart under way does not leave one running after it."""
        self._stopped.set()
        comeback, self._comeback = self._comeback, None
        sup, self._supervisor, self._client = self._supervisor, None, None
        if sup is not None:
            sup.stop()
        if comeback is not None and comeback.done.is_set() and comeback.result is not None:
            _quietly_stop(comeback.result[1])      # still starting: it stops itself once started


def _quietly_stop(started: _Started) -> None:
    if started.supervisor is not None:
        started.supervisor.stop()


def _choose_stand_in(plan: Plan):
    from app.worker import standin
    return standin.choose(plan)


def _catalogue_penalty(plan: Plan) -> float:
    from app.core.models import catalogue as models
    try:
        return models.load_catalogue().get(plan.model_id).repeat_penalty
    except models.CatalogueError:          # a model the catalogue does not know: no penalty
        return 1.0
