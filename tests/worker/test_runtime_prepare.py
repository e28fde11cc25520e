"""EngineRuntime.prepare with the real llama.cpp worker: after a restart, opening a document
the engine read before restores its KV state from disk before the first question comes."""
from __future__ import annotations

import time

import pymupdf
import pytest

from app.core import qa
from app.core.library import Library
from app.worker.runtime import EngineRuntime

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
    return int(rt.client.metrics().get("pagewise_kv_cache_used_cells", 0))


def test_prepare_restores_a_read_document_before_the_question(short_contract, tmp_path, monkeypatch):
    monkeypatch.setattr(qa, "ANSWER_TOKENS", 16)
    lib = Library(tmp_path / "library.sqlite")
    refs = [qa.DocRef(1, lib.add(short_contract).id, str(short_contract))]
    rt = EngineRuntime()
    rt.start()
    try:
        assert rt.plan.engine == "llamacpp"
        assert not rt.prepare(lib, refs)                 # never read: nothing on disk to restore
        first = rt.ask(lib, refs, "Who are the parties?", mode="whole-document")
        assert first.usage["cached_tokens"] == 0
    finally:
        rt.stop()

    rt = EngineRuntime()                                 # the app restarted: a new worker process
    rt.start()
    try:
        assert kv_cells(rt) == 0
        assert rt.prepare(lib, refs)                     # the window calls this on opening
        deadline = time.monotonic() + 30
        while kv_cells(rt) < 700 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kv_cells(rt) >= 700, "the document's KV state was not restored before the question"
        answer = rt.ask(lib, refs, "How long does it last?", mode="whole-document")
        assert answer.usage["cached_tokens"] >= 700      # the question only read its own tokens
        assert rt.metrics()["pagewise_disk_cache_restores_total"] == 1
    finally:
        rt.stop()
        lib.close()
