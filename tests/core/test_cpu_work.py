"""One scheduler for the app's CPU work (app.core.cpu_work): a question pre-empts every background
job at once (search vectors here, real embeddings into a real library) and they resume after the
answer; the user is told what waits."""
from __future__ import annotations

import threading
import time

import pytest

from app.core import cpu_work
from app.core.cancel import Cancel
from app.core.search import dense

needs_vectors = pytest.mark.skipif(not dense.available(), reason="no embedding model on this machine")


@needs_vectors
def test_a_question_pauses_the_search_vectors_and_they_resume_after_it(corpus, lib):
    doc = lib.add(corpus / "contracts-en" / "common-paper-mnda.pdf")
    total = lib.unembedded([doc.id])
    stored: list[float] = []
    lines: list[str] = []
    unsubscribe = cpu_work.scheduler.subscribe(lines.append)
    worker = threading.Thread(target=lib.embed, args=([doc.id],),
                              kwargs={"progress": lambda done, n: stored.append(time.monotonic())})
    try:
        with cpu_work.scheduler.foreground("answering"):   # what a question holds while it is answered
            began = time.monotonic()
            worker.start()
            time.sleep(1.5)                        # ~10 batches' time on 2 cores
            assert not stored, "search vectors were computed beside the answer"
            assert lib.unembedded([doc.id]) == total
            assert cpu_work.scheduler.describe() == "search vectors paused while answering"
            assert "search vectors paused while answering" in lines
        worker.join(timeout=300)
        assert stored and stored[0] > began + 1.5 and lib.unembedded([doc.id]) == 0
        assert cpu_work.scheduler.describe() == "" and lines[-1] == ""
    finally:
        unsubscribe()


def test_a_reading_is_cut_when_more_urgent_work_waits_and_the_lower_rank_waits_its_turn():
    s = cpu_work.CpuWork()
    order: list[str] = []
    with s.turn("background reading"):
        assert not s.should_yield("background reading")
        waiter = threading.Thread(target=lambda: s.checkpoint("search vectors") or order.append("vectors"))
        waiter.start()
        deadline = time.monotonic() + 5
        while not s.should_yield("background reading") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert s.should_yield("background reading")     # the reading's watcher cuts it
        order.append("reading ends")
    waiter.join(timeout=5)
    assert order == ["reading ends", "vectors"]


def test_a_turn_nests_in_its_own_thread():
    s = cpu_work.CpuWork()
    entered: list[str] = []

    def nest() -> None:
        with s.turn("OCR"), s.turn("table detection"):   # OCR inside an ingestion: no self-deadlock
            entered.append("both")
    holder = threading.Thread(target=nest, daemon=True)
    holder.start()
    holder.join(timeout=5)
    assert entered == ["both"] and not holder.is_alive()
    with s.turn("search vectors"):                     # both turns given back: the next job goes at once
        entered.append("next")
    assert entered == ["both", "next"]


def test_a_more_urgent_job_cuts_the_unit_under_way_at_once():
    s = cpu_work.Scheduler()
    with s.turn("background reading") as unit:
        waiter = threading.Thread(target=s.checkpoint, args=("search vectors",))
        waiter.start()
        assert unit.cut.wait(5)                        # told, not found by polling
    waiter.join(timeout=5)
    assert not waiter.is_alive()


def test_a_question_cuts_the_reading_and_takes_the_engine_after_it():
    s, engine = cpu_work.Scheduler(), object()
    order: list[str] = []
    reading_in = threading.Event()

    def reading() -> None:
        with s.turn("background reading", engine=engine) as unit:
            reading_in.set()
            assert unit.cut.wait(5)
            order.append("reading cut")
            time.sleep(0.2)                            # the slice under way ends
            order.append("reading ends")
    reader = threading.Thread(target=reading)
    reader.start()
    assert reading_in.wait(5)
    with s.question(engine):
        order.append("question")
        assert s.busy()
        with s.engine_if_free(engine) as free:         # a warm-up is skipped while a question holds it
            assert not free
    reader.join(timeout=5)
    assert order == ["reading cut", "reading ends", "question"]
    with s.engine_if_free(engine) as free:
        assert free


def test_one_question_at_a_time_per_engine_and_no_reading_while_one_waits():
    s, engine = cpu_work.Scheduler(), object()
    order: list[str] = []
    first_in, let_go = threading.Event(), threading.Event()

    def first() -> None:
        with s.question(engine):
            first_in.set()
            let_go.wait(5)
            order.append("first")

    def second() -> None:
        with s.question(engine):
            order.append("second")

    def reading() -> None:
        with s.turn("background reading", engine=engine):
            order.append("reading")
    a = threading.Thread(target=first)
    a.start()
    assert first_in.wait(5)
    b, r = threading.Thread(target=second), threading.Thread(target=reading)
    b.start()
    r.start()
    time.sleep(0.3)
    assert order == []                                 # both wait for the first question
    let_go.set()
    for t in (a, b, r):
        t.join(timeout=5)
    assert order == ["first", "second", "reading"]


def test_a_stop_cuts_the_unit_through_its_linked_cancel():
    s = cpu_work.Scheduler()
    stop = Cancel()
    with s.turn("background reading", stop) as unit:
        assert not unit.cut.is_set()
        stop.set()
        assert unit.cut.is_set()
    with s.turn("background reading", stop) as unit:   # already stopped: the wait ends at once
        assert unit.cut.is_set()


def test_evidence_pauses_background_work_and_a_question_names_the_pause():
    s = cpu_work.Scheduler()
    with s.foreground("finding the evidence", cpu_work.Kind.EVIDENCE):
        job = threading.Thread(target=s.checkpoint, args=("search vectors",))
        job.start()
        deadline = time.monotonic() + 5
        while not s.paused() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert s.describe() == "search vectors paused while finding the evidence"
        with s.foreground("answering"):
            assert s.describe() == "search vectors paused while answering"
    job.join(timeout=5)
    assert not job.is_alive() and s.describe() == ""
