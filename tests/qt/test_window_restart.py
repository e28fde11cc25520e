"""What the reader had on screen comes back: an answer in progress when the window closed (its
question and the cards already shown), the Citations panel of the answer shown after a restart or
a document's removal, and each document's page."""
from __future__ import annotations

import os

import pytest

from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

CSA = "contracts-en/common-paper-csa.pdf"
MNDA = "contracts-en/common-paper-mnda.pdf"
QUESTION = "How long is customer data retained after termination?"


@pytest.fixture
def reopen(qtbot, library):
    """A second window on the same library and settings: the restart."""
    made = []

    def make():
        from app.qt.main_window import MainWindow
        win = MainWindow(library=library, start_engine=False)
        win.resize(1280, 860)
        qtbot.addWidget(win)
        win.show()
        made.append(win)
        with qtbot.waitSignal(win.sig_documents_ready, timeout=30_000):
            win.restore_session()
        return win
    yield make
    for win in made:
        win.close()


def _ask_without_answer(qtbot, win) -> object:
    """A question whose evidence cards are shown while the model has not answered (the engine
    is not started: it stays in progress), as MainWindow.ask begins one."""
    win.chat.begin(QUESTION)
    win._asked_ids, win._asked_conversation = [i.id for i in win.doc_infos()], win.conversations.for_question()
    evidence = win.engine.service.evidence(win._refs(), QUESTION)
    assert evidence.cards
    with qtbot.waitSignal(win.sig_evidence_shown, timeout=10_000):
        win.engine.sig_evidence.emit(evidence)
    assert win.chat.busy()
    return evidence


def test_an_answer_in_progress_is_kept_with_its_cards(qtbot, window, library, reopen):
    info = open_and_wait(qtbot, window, corpus_path(CSA))
    evidence = _ask_without_answer(qtbot, window)
    window.close()
    stored = library.exchanges([info.id])
    assert [e.question for e in stored] == [QUESTION]
    again = reopen()
    entry = again.chat.entries[-1]
    assert entry.question == QUESTION and entry.state == "done" and entry.headline == "evidence"
    assert [(c.page, c.quote) for c in entry.evidence.cards] == [(c.page, c.quote) for c in evidence.cards]
    assert "closed before the answer was finished" in entry.meta
    # the Citations panel lists the shown answer's cards, not nothing
    assert [(c.page, c.quote) for c in again.citations.evidence()] == [(c.page, c.quote) for c in evidence.cards]


def test_the_citations_panel_follows_the_answer_shown_after_a_removal(qtbot, window, library):
    import json
    csa = open_and_wait(qtbot, window, corpus_path(CSA))
    evidence = window.engine.service.evidence(window._refs(), QUESTION)
    data = {"evidence": evidence.to_dict(), "answer": "", "citations": [], "mode": "retrieval",
            "headline": "evidence", "status": "not_backed"}
    window.engine.service.store_exchange([csa.id], QUESTION, json.dumps(data),
                                         conversation=window.conversations.for_question())
    other = open_and_wait(qtbot, window, corpus_path(MNDA))
    assert other.id != csa.id
    window.set_library_scope([csa.id, other.id])
    window.set_library_scope([csa.id])         # back to the CSA's conversation: its answer shown
    assert window.chat.entries and window.chat.entries[-1].question == QUESTION
    window.citations.set_citations([])
    window._on_library_removed(other.id)       # a removal refreshes the transcript and the panel
    assert window.chat.entries[-1].question == QUESTION
    assert window.citations.evidence(), "the Citations panel is empty while the answer's cards are shown"


def test_each_document_opens_at_its_page(qtbot, window, reopen):
    pane = window.pane_a
    open_and_wait(qtbot, window, corpus_path(CSA))
    qtbot.waitUntil(lambda: pane.view.page_count() > 0, timeout=10_000)
    pane.view.go_to(7)
    assert pane.view.current_page() == 7
    window.close()
    again = reopen()
    qtbot.waitUntil(lambda: again.pane_a.view.current_page() == 7, timeout=10_000)


def test_citation_cards_fit_a_narrow_panel(qtbot, window):
    """A card's file name and check wrap: the panel never scrolls sideways, cutting the cards' left edge."""
    info = open_and_wait(qtbot, window, corpus_path(MNDA))
    evidence = window.engine.service.evidence(window._refs(), "Can I tell my lawyer about confidential information?")
    window.citations.set_citations([], {info.id: "a-rather-long-file-name-of-a-contract.pdf"}, evidence.cards)
    window.citations.resize(300, 400)
    window.citations.activate(1)
    qtbot.wait(50)
    bar = window.citations.horizontalScrollBar()
    assert bar.value() == 0 and not bar.isVisible()
    body = window.citations.widget()
    assert body.width() <= window.citations.viewport().width()


def test_the_selected_card_is_selected_again_after_a_restart(qtbot, window, reopen):
    """The card the reader chose comes back selected; the page the document was left at stays
    (the selection is not announced again, so the pane does not jump to the card's page)."""
    open_and_wait(qtbot, window, corpus_path(CSA))
    evidence = _ask_without_answer(qtbot, window)
    assert len(evidence.cards) >= 2
    window.citations.activate(1)                 # as a click on the second card
    qtbot.waitUntil(lambda: window.pane_a.view.page_count() > 0, timeout=10_000)
    window.pane_a.view.go_to(1)                  # then the reader went back to the first page
    window.close()
    again = reopen()
    assert again.citations.current == 1
    assert [c.property("selected") for c in again.citations.cards][:2] == [False, True]
    qtbot.waitUntil(lambda: again.pane_a.view.current_page() == 1, timeout=10_000)
    if os.environ.get("PAGEWISE_SHOTS"):         # a folder: the restarted window, looked at by hand
        qtbot.wait(2000)                         # the page rendered, the panel laid out
        again.grab().save(os.path.join(os.environ["PAGEWISE_SHOTS"], "restart-selected-card.png"))
