"""Issue 32 defect 12: a question that cannot be asked is refused at once, in one line, before the
engine starts (it started and read for 78 s, then failed on the search vectors' encoding; a
125 KB question failed after 255 s, when the prompt was counted)."""
from __future__ import annotations

import pytest

from app.worker.runtime import EngineRuntime
from tests.support.cli import run_cli


@pytest.fixture
def engine_starts(monkeypatch):
    """Records an engine start instead of making one (the test is that none is made)."""
    started = []

    def start(self, plan=None):
        started.append(True)
        raise RuntimeError("the engine was started for a question that cannot be asked")
    monkeypatch.setattr(EngineRuntime, "start", start)
    return started


@pytest.mark.parametrize("question", ["Who are the parties?\udcff\udcfe",          # bytes that are not UTF-8
                                      "Which law governs this agreement? " * 3700])   # ~125 KB pasted
def test_a_question_that_cannot_be_asked_is_refused_before_the_engine_starts(corpus, engine_starts, question):
    pdf = corpus / "contracts-en" / "common-paper-mnda.pdf"
    run = run_cli("ask", str(pdf), "-q", question)
    assert run.returncode == 1 and not engine_starts
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pagewise: error: the question")


def test_search_vectors_take_a_question_with_undecodable_bytes(corpus, lib):
    from app.core.search import dense
    if not dense.available():
        pytest.skip("no embedding model on this machine")
    doc = lib.add(corpus / "contracts-en" / "common-paper-mnda.pdf")
    lib.embed([doc.id])
    assert dense.search(lib._con, "governing law\udcff", [doc.id], 3)   # `retrieve` raised UnicodeEncodeError
