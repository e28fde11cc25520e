"""After the worker dies, and while it restarts, its port is never free for another account.

The first start hands the worker a socket the app bound, so another account never finds the port
free (test_port_takeover.py). Once that worker died, the app closed its copy: the port was free
again while the engine's client still named it, and a document read ahead (`/tokenize` with the
whole text) or the question asked during the restart went to whoever bound it next — with the
key. The attacker is a real second account (`runuser -u nobody`) that binds the old port the
moment it can.
"""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from app.core.models import catalogue as models
from app.core.plan import hardware
from app.core.plan import planner as P
from app.worker import engine_errors as errors
from app.worker.engine import Engine
from app.worker.supervisor import Supervisor
from tests.worker.test_port_takeover import _other_account_available, finish, squat
from tests.worker.test_supervisor import real_spec

pytestmark = pytest.mark.skipif(not _other_account_available(),
                                reason="needs root, runuser, the account 'nobody' and /proc")

SECRET = "The confidential clause number 4711 of this contract."
MESSAGES = [{"role": "user", "content": SECRET}]


def _engine(tmp_path) -> tuple[Engine, list[Supervisor]]:
    launches: list[Supervisor] = []

    def launch(plan, options, on_status):
        sup = Supervisor(real_spec(tmp_path / f"run{len(launches)}"), log_path=tmp_path / "worker.log")
        sup.start()
        launches.append(sup)
        return sup

    engine = Engine(launcher=launch)
    engine.start(P.make_plan(hardware.probe(), models.load_catalogue(), available=models.is_available))
    return engine, launches


def _wait(flag, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not flag() and time.monotonic() < end:
        time.sleep(0.05)
    assert flag(), "timed out"


@pytest.mark.slow
def test_a_dead_workers_port_stays_ours_while_its_client_may_still_send(tmp_path):
    engine, launches = _engine(tmp_path)
    try:
        old = launches[0]
        port, key = old.spec.extra["port"], old.spec.api_key
        assert engine.count_tokens(MESSAGES) > 0
        os.killpg(old.pid, signal.SIGKILL)              # the worker dies between answers
        _wait(old.exited.is_set)
        squatter, first = squat(port, seconds=8)
        with pytest.raises(errors.WorkerError):
            engine.count_tokens(MESSAGES)               # a document read ahead meanwhile
        heard = finish(squatter)
        assert first.startswith("REFUSED"), f"another account took the dead worker's port: {first} {heard}"
        assert key not in heard and SECRET not in heard
    finally:
        engine.stop()
        for sup in launches:
            sup.stop()


@pytest.mark.slow
def test_the_old_port_is_not_free_while_the_engine_restarts(tmp_path):
    engine, launches = _engine(tmp_path)
    try:
        old = launches[0]
        port, key = old.spec.extra["port"], old.spec.api_key
        failure: list[BaseException] = []

        def restart():
            try:
                engine.restart(errors.WorkerDied("killed by the test"), "stopped", asked_again=False)
            except BaseException as exc:  # noqa: BLE001 - reported below
                failure.append(exc)

        thread = threading.Thread(target=restart)
        thread.start()
        _wait(old.exited.is_set)                        # stopped; the next worker is loading
        squatter, first = squat(port, seconds=6)
        sent_during = None
        if len(launches) == 1:                           # still loading: what a reader thread sends
            try:
                engine.count_tokens(MESSAGES)
                sent_during = "sent"
            except errors.WorkerError as exc:
                sent_during = str(exc)
        thread.join(120)
        heard = finish(squatter)
        assert not failure, failure
        assert first.startswith("REFUSED"), f"another account took the port during the restart: {first} {heard}"
        assert key not in heard and SECRET not in heard, heard
        assert sent_during is not None, "the restart ended before the squatter started: nothing tried"
        assert sent_during != "sent"
        assert len(launches) == 2 and "--listen-fd" in launches[1].spec.argv and "--port" not in launches[1].spec.argv
        assert engine.count_tokens(MESSAGES) > 0         # the new worker answers on its handed-down socket
        assert old.spec.listen_socket.fileno() == -1     # the old port released once the new one serves
    finally:
        engine.stop()
        for sup in launches:
            sup.stop()


def test_an_engine_that_bound_its_own_port_is_sent_nothing_once_it_ended(tmp_path):
    # vLLM binds its own port, so nothing of ours holds it after a death; its key is kept per
    # install, so a gauge's /metrics or a health probe to the freed port would hand it over
    from tests.support.fake_server import fake_spec
    launches: list[Supervisor] = []

    def launch(plan, options, on_status):
        sup = Supervisor(fake_spec(check_listener=True))
        sup.start()
        launches.append(sup)
        return sup

    engine = Engine(launcher=launch)
    engine.start(P.make_plan(hardware.probe(), models.load_catalogue(), available=models.is_available))
    try:
        old = launches[0]
        port, key = old.spec.extra["port"], old.spec.api_key
        assert engine.healthy()
        os.killpg(old.pid, signal.SIGKILL)
        _wait(old.exited.is_set)
        squatter, first = squat(port, seconds=4)
        assert first == "LISTENING"                      # nothing of ours could keep this port
        assert engine.metrics() == {} and not engine.healthy()
        with pytest.raises(errors.WorkerError):
            engine.count_tokens(MESSAGES)
        heard = finish(squatter)
        assert key not in heard and SECRET not in heard, heard
    finally:
        engine.stop()
        for sup in launches:
            sup.stop()
