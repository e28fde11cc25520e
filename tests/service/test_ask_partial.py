"""`pagewise ask --json` with several questions: when a later one fails (here its document is
removed from the library after the first answer, as another process would), the answers
already finished are printed beside the error instead of being lost (real engine, real library)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import dispatch
from app.core.documents import listing
from app.service import Assistant

pytestmark = pytest.mark.slow
SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "common-paper-mnda.pdf"


def test_the_answers_before_a_failure_are_printed_with_it(monkeypatch, capsys):
    stored = Assistant.store_exchange

    def then_removed(self, doc_ids, question, answer_json, conversation=None):
        out = stored(self, doc_ids, question, answer_json, conversation)
        for doc_id in doc_ids:                   # the fault: the document leaves the library
            listing.remove_document(self.library, doc_id)
        return out
    monkeypatch.setattr(Assistant, "store_exchange", then_removed)
    rc = dispatch.main(["ask", str(SAMPLE), "-q", "Who are the parties?",
                        "-q", "How long does confidentiality last?", "--json"])
    captured = capsys.readouterr()
    assert rc == 1
    printed = json.loads(captured.out)
    assert len(printed["answers"]) == 1 and printed["answers"][0]["answer"].strip()
    assert printed["answers"][0]["evidence"]["cards"]
    assert "removed from the library" in printed["error"] and printed["type"] == "UserError"
    assert "was removed from the library" in captured.err
