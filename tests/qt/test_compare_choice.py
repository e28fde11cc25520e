"""Compare clauses in the window picks, for termination, the clause granting the right to
terminate, not "Effect of Termination"; and no "Sources" line stands under a summary not shown."""
from __future__ import annotations

from app.core.answer.citations import Citation
from app.qt.compare_view import NO_SUMMARY
from tests.support.corpus import corpus_path

CSA = "contracts-en/common-paper-csa.pdf"
LICENSE = "contracts-en/common-paper-software-license.pdf"


def _table(qtbot, win):
    with qtbot.waitSignal(win.sig_documents_ready, timeout=60_000):
        win.open_files([str(corpus_path(CSA)), str(corpus_path(LICENSE))], compare=True)
    qtbot.waitUntil(lambda: len(win.docs) == 2, timeout=60_000)
    with qtbot.waitSignal(win.compare.sig_table_shown, timeout=30_000) as shown:
        assert win.compare.start("termination")
    return shown.args[0]


def test_termination_is_the_clause_granting_the_right(qtbot, window):
    table = _table(qtbot, window)
    for cell in table.rows[0]:
        assert "Effect of Termination" not in cell.card.clause, (cell.ref.label, cell.card.clause)
        assert "may terminate" in cell.card.quote, cell.card.quote
    assert table.rows[0][0].card.clause == "Section 5.3 Termination" and table.rows[0][0].card.page == 3
    qtbot.waitUntil(lambda: window.chat.entries[-1].state == "done", timeout=10_000)    # no engine: table only
    assert "Section 5.3 Termination" in window.chat.transcript.toPlainText()


def test_no_sources_under_a_summary_not_shown(qtbot, window):
    table = _table(qtbot, window)
    qtbot.waitUntil(lambda: window.chat.entries[-1].state == "done", timeout=10_000)
    card = table.rows[0][0].card
    cite = Citation(card.doc_id, card.doc, card.page, card.quote, True, support="supports")
    entry = window.chat.entries[-1]
    entry.state = "streaming"            # as the engine's reply finishes it: backed, but no text to show
    window.chat.finish("", [cite], "retrieval · 9.0 s", "answer", "answer")
    text = window.chat.transcript.toPlainText()
    assert NO_SUMMARY in text and "Sources:" not in text.split(NO_SUMMARY)[-1]
