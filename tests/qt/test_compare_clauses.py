"""Compare clauses in the real window (issue 33, defects 7 and 8): the chat shows the short
question, never the internal prompt; the table of each topic's clause in both corpus contracts
is on screen from the search alone while the engine has not answered; a page link jumps that
document's pane to the quote; the model's row is shown only when its citations back it.

The engine is the real EngineRuntime over the fake OpenAI server (it echoes the question, so
its answer cites nothing), held back until the test lets it go (the `held` fixture)."""
from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QLabel

from app.qt.compare_view import NO_SUMMARY
from tests.qt.test_evidence_first import held  # noqa: F401 - the fixture

CSA = "contracts-en/common-paper-csa.pdf"
CLOUD = "contracts-en/bonterms-cloud-terms-v1.0.pdf"


def _open_pair(qtbot, win, corpus):
    with qtbot.waitSignal(win.sig_documents_ready, timeout=60_000):
        win.open_files([str(corpus / CSA), str(corpus / CLOUD)], compare=True)
    qtbot.waitUntil(lambda: len(win.docs) == 2, timeout=60_000)


def _compare_button(win):
    from PySide6.QtWidgets import QPushButton
    buttons = [b for b in win.chat.findChildren(QPushButton, "templateButton") if b.text() == "Compare clauses"]
    assert buttons, "no Compare clauses button with two documents open"
    return buttons[0]


def test_compare_shows_the_short_question_and_the_table_before_the_model(qtbot, held, corpus):  # noqa: F811
    win = held
    _open_pair(qtbot, win, corpus)
    with qtbot.waitSignal(win.sig_evidence_shown, timeout=30_000):
        _compare_button(win).click()
    entry = win.chat.entries[-1]
    assert entry.question == "Compare clauses: termination, liability, payment, confidentiality, governing law"
    assert entry.state == "streaming" and entry.text == ""          # the engine has not answered
    shown = " ".join(win.chat.transcript.toPlainText().split())
    assert "Answer as a table" not in shown and "document 1" not in shown
    table = entry.evidence.table
    assert [t.key for t in table.topics][:2] == ["termination", "liability"]
    for row in table.rows:
        assert len(row) == 2
    found = [cell for row in table.rows for cell in row if cell.card is not None]
    assert len(found) >= 8 and all(cell.verified for cell in found)
    law = table.rows[-1]
    assert "Governing Law" in law[0].card.clause and law[0].card.page == 8      # CSA 12.3
    assert "Governing Law" in law[1].card.quote and law[1].card.page == 5       # Cloud Terms 22.2
    for cell in found[:3]:
        assert cell.card.quote[:40] in shown
    assert "CLAUSES SIDE BY SIDE" in shown and "p. 8" in shown

    # a page link in the table: that document's pane, on its page, the quote highlighted
    n = entry.evidence.cards.index(law[1].card)
    with qtbot.waitSignal(win.pane_b.sig_highlighted, timeout=15_000) as hit:
        win.chat.transcript.anchorClicked.emit(QUrl(f"evidence:{len(win.chat.entries) - 1}:{n}"))
    assert hit.args[0] == 5 and hit.args[1]
    assert win.pane_b.view.current_page() == 5

    with qtbot.waitSignal(win.sig_answer_shown, timeout=60_000):
        win.release.set()
    assert entry.state == "done" and entry.headline == "evidence"       # the echo cites nothing
    shown = " ".join(win.chat.transcript.toPlainText().split())
    assert NO_SUMMARY in shown and "Answer as a table" not in shown
    ids = [i.id for i in win.doc_infos()]
    qtbot.waitUntil(lambda: bool(win.library.exchanges(ids)), timeout=10_000)    # saved in the background
    assert win.library.exchanges(ids)[-1].question == entry.question           # history: the short one too


def test_side_by_side_at_the_default_size(qtbot, window, corpus):
    win = window
    win.resize(1400, 900)
    _open_pair(qtbot, win, corpus)
    qtbot.waitUntil(lambda: win.library_split.sizes()[0] == 0, timeout=5000)
    a, b = win.pane_a.width(), win.pane_b.width()
    assert a >= 380 and b >= 380 and abs(a - b) <= 0.1 * max(a, b), (a, b)
    for pane, name in ((win.pane_a, "common-paper-csa.pdf"), (win.pane_b, "bonterms-cloud-terms-v1.0.pdf")):
        shown = QLabel.text(pane.title)       # what is painted
        assert shown == name or (shown[:3] == name[:3] and shown[-4:] == ".pdf" and "…" in shown), shown
        assert pane.title.toolTip().endswith(name)
    win.resize(900, 700)                                           # narrower: cut in the middle, never the end
    qtbot.waitUntil(lambda: "…" in QLabel.text(win.pane_b.title), timeout=5000)
    shown = QLabel.text(win.pane_b.title)
    assert shown.startswith("bon") and shown.endswith(".pdf") and win.pane_b.title.text() == "bonterms-cloud-terms-v1.0.pdf"
    win.resize(1400, 900)
    toggle = win.side_by_side.library_button
    toggle.click()
    assert win.library_split.sizes()[0] > 200
    toggle.click()
    assert win.library_split.sizes()[0] == 0


def test_opening_in_compare_mode_goes_to_the_focused_pane(qtbot, window, corpus, monkeypatch):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QFocusEvent
    from PySide6.QtWidgets import QApplication, QFileDialog
    win = window
    _open_pair(qtbot, win, corpus)
    QApplication.sendEvent(win.pane_b.view, QFocusEvent(QEvent.Type.FocusIn))     # the user clicked the right pane
    chosen = str(corpus / "contracts-en/common-paper-mnda.pdf")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (chosen, ""))   # the user's pick
    with qtbot.waitSignal(win.sig_documents_ready, timeout=60_000):
        win.actions_by_name["open"].trigger()                                           # Ctrl+O
    assert win.pane_b.path == chosen and win.pane_a.path.endswith("common-paper-csa.pdf")
    assert "bold" in win.pane_b.title.styleSheet() and "bold" not in win.pane_a.title.styleSheet()
    # each pane's own Open button puts the file there, whichever pane has the focus
    other = str(corpus / "contracts-en/bonterms-dpa-v1.0.pdf")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (other, ""))
    with qtbot.waitSignal(win.sig_documents_ready, timeout=60_000):
        win.pane_a.open_button.click()
    assert win.pane_a.path == other and win.pane_b.path == chosen


def test_the_close_button_ends_side_by_side(qtbot, window, corpus):
    win = window
    _open_pair(qtbot, win, corpus)
    assert win.side_by_side.close_button.isVisible()
    win.side_by_side.close_button.click()
    assert not win.pane_b.isVisible() and not win.compare_mode()
    assert not win.side_by_side.bar.isVisible()
    assert win.library_split.sizes()[0] > 0            # the library is back
    assert [i.id for i in win.doc_infos()] == [win.docs[win.pane_a].id]
