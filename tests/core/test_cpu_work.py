"""One scheduler for the app's CPU work (app.core.cpu_work): a question pre-empts every background
job at once (search vectors here, real embeddings into a real library) and they resume after the
answer; the user is told what waits."""
from __future__ import annotations

import threading
import time

import pytest

from app.core import cpu_work
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
