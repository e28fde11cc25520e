"""The engine's prefill speed is measured with the cores to itself: search vectors computed
while the engine starts (pagewise ask, the window) wait until the first start of a model has
measured it. Seen before: on 2 cores the embedding thread beside the worker's calibration made
it read 14 tokens/s instead of ~200, and the first answer got one cut passage."""
from __future__ import annotations

import contextlib
import threading
import time

import pytest

from app.core import cpu_work
from app.core.search import dense
from app.worker.runtime import EngineRuntime
from app.service.planning import start_planned

pytestmark = pytest.mark.slow


def test_no_search_vectors_are_computed_while_the_engine_measures_its_speed(corpus, lib, monkeypatch):
    doc = lib.add(corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    assert dense.available() and lib.unembedded([doc.id]) > 20
    batches: list[float] = []                              # when each batch of vectors was stored
    stop = threading.Event()
    embedding = threading.Thread(target=lib.embed, args=([doc.id],),
                                 kwargs={"progress": lambda done, total: batches.append(time.monotonic()),
                                         "cancelled": stop.is_set})
    paused_at: list[float] = []                            # when the runtime's pause took hold
    real_paused = dense.paused

    @contextlib.contextmanager
    def noted_pause():
        with real_paused():
            paused_at.append(time.monotonic())
            yield

    monkeypatch.setattr(dense, "paused", noted_pause)
    embedding.start()
    while not batches:                                     # the embedding is under way
        time.sleep(0.01)
    rt = EngineRuntime()
    try:
        start_planned(rt)                                         # launches the worker, waits for its measurement
        measured = time.monotonic()
        assert rt.memory.prefill_tps(rt.speed_key())
        assert paused_at, "the embedding was not paused for the first measurement"
        # planning before the pause may store a batch or two on a slow machine; from the pause
        # to the end of the measurement at most the batch already under way may land
        during = [t for t in batches if paused_at[0] < t < measured]
        assert len(during) <= 1, f"{len(during)} batches of vectors were stored while the speed was measured"
        embedding.join(timeout=600)
        assert batches[-1] > measured and lib.unembedded([doc.id]) == 0   # and the embedding finished after
    finally:
        stop.set()                                         # a failure above leaves no embedding running
        embedding.join(timeout=120)
        rt.stop()


def test_a_known_speed_does_not_pause_the_embedding(tmp_path):
    rt = EngineRuntime()
    plan = type("Plan", (), {"engine": "llamacpp", "model_id": "m", "n_gpu_layers": 0})()
    rt.memory.set_prefill(rt._speed_key_for(plan), 250.0)
    with rt._measuring(plan):
        assert not cpu_work.scheduler.busy()               # nothing held: vectors go on
    rt2 = EngineRuntime()
    plan2 = type("Plan", (), {"engine": "llamacpp", "model_id": "other", "n_gpu_layers": 0})()
    with rt2._measuring(plan2):
        assert cpu_work.scheduler.busy()                   # unknown speed: vectors (and all else) wait
