"""KV state after a restart, with the real llama.cpp worker: the worker puts the document
used last back into memory on its own at start-up, and EngineRuntime.prepare (the window
calls it when a document opens) restores any other document the engine read before, both
before the first question comes."""
from __future__ import annotations

import time

import pymupdf
import pytest

from app.core.answer import qa
from app.worker.runtime import EngineRuntime
from app.service.planning import start_planned

pytestmark = pytest.mark.slow


@pytest.fixture
def short_contract(corpus, tmp_path):
    """The MNDA's first two pages: ~770 prompt tokens, enough for the worker to keep its state."""
    out = tmp_path / "mnda-2-pages.pdf"
    with pymupdf.open(corpus / "contracts-en" / "common-paper-mnda.pdf") as src, pymupdf.open() as dst:
        dst.insert_pdf(src, from_page=0, to_page=1)
        dst.save(out)
    return out


def kv_cells(rt: EngineRuntime) -> int:
    return int(rt.engine.metrics().get("pagewise_kv_cache_used_cells", 0))


def wait_for_cells(rt: EngineRuntime, ok, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while not ok(cells := kv_cells(rt)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return cells


@pytest.fixture
def whole_contract(corpus):
    return corpus / "contracts-en" / "common-paper-mnda.pdf"     # ~2,400 prompt tokens


def read_whole(lib, rt, path, question="Who are the parties?"):
    refs = [qa.DocRef(1, lib.add(path).id, str(path))]
    answer = rt.ask(lib, refs, question, mode="whole-document")
    return refs, answer


def assert_answered_from_memory(rt, lib, refs) -> None:
    answer = rt.ask(lib, refs, "How long does it last?", mode="whole-document")
    assert answer.usage.cached_tokens >= 700          # the question only read its own tokens
    assert rt.metrics()["pagewise_disk_cache_restores_total"] == 1


def test_a_restarted_worker_restores_the_last_document_by_itself(short_contract, lib, monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 16)
    rt = EngineRuntime()
    start_planned(rt)
    try:
        assert rt.plan.engine == "llamacpp"
        refs, first = read_whole(lib, rt, short_contract)
        assert first.usage.cached_tokens == 0
    finally:
        rt.stop()

    rt = EngineRuntime()                                 # `pagewise ask` again: a new worker process
    start_planned(rt)
    try:
        assert wait_for_cells(rt, lambda c: c >= 700) >= 700, "the last document was not restored at start"
        assert_answered_from_memory(rt, lib, refs)
    finally:
        rt.stop()


def test_prepare_restores_a_read_document_before_the_question(short_contract, whole_contract, lib,
                                                              monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 16)
    rt = EngineRuntime()
    start_planned(rt)
    try:
        refs, _ = read_whole(lib, rt, short_contract)    # ~770 tokens
        other = [qa.DocRef(1, lib.add(whole_contract).id, str(whole_contract))]
        assert not rt.prepare(lib, other)                # never read: nothing on disk to restore
        read_whole(lib, rt, whole_contract)              # read last: the one a restart restores
    finally:
        rt.stop()

    rt = EngineRuntime()                                 # the app restarted: a new worker process
    start_planned(rt)
    try:
        restored_at_start = wait_for_cells(rt, lambda c: c >= 2000)
        assert restored_at_start >= 2000                 # the whole MNDA, used last
        assert rt.prepare(lib, refs)                     # the window opens the short one
        cells = wait_for_cells(rt, lambda c: 700 <= c < 1500)
        assert 700 <= cells < 1500, "the opened document's KV state was not restored before the question"
        assert_answered_from_memory(rt, lib, refs)
    finally:
        rt.stop()
