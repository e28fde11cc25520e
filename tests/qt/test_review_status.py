"""A Contract review obeys the same rule as answers: its text leads only when its citations back
it; otherwise it is greyed and labelled, with no sources to follow, and it says so again after a
restart. The view goes to the review's start, and its time is shown."""
from __future__ import annotations

from app.core.answer.citations import Citation
from app.core.answer.review import Part, Review
from app.core.answer.values import Timing
from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

CSA = "contracts-en/common-paper-csa.pdf"
QUOTE = "This Agreement is governed by"


def _review(info, support: str) -> Review:
    from app.core.answer.qa import DocRef
    ref = DocRef(1, info.id, info.path)
    cite = Citation(info.id, info.path, 9, QUOTE, True, support=support)
    parts = [Part(1, ref, 1, 5, notes="notes"), Part(2, ref, 6, 10, notes="notes")]
    return Review("contract", "The document does not answer. The contract is a contract.\n\n"
                  "Assembled from 2 parts (pages 1-5, 6-10), read one after another.",
                  [cite], parts, True, Timing(total_s=208.7))


def _in_view(edit, text: str) -> bool:
    """`text`'s first line is within the visible part of the transcript (not scrolled past, not
    below): what "brought into view" means whatever the window's height."""
    cursor = edit.document().find(text)
    if cursor.isNull():
        return False
    top = edit.cursorRect(cursor).top()
    return 0 <= top < edit.viewport().height()


def _show(qtbot, win, review) -> str:
    win.chat.begin("[Contract review]")     # as MainWindow.review begins one (the engine not started)
    win._asked_ids, win._asked_conversation = [i.id for i in win.doc_infos()], win.conversations.for_question()
    for n in range(30):     # a long transcript above: the review must be brought into view
        win.chat.entries.insert(0, type(win.chat.entries[0])(f"earlier question {n}", "an earlier answer\n" * 4,
                                                             state="done"))
    win.chat.render()
    win.chat.transcript.verticalScrollBar().setValue(0)    # the reader is up at an earlier answer
    with qtbot.waitSignal(win.sig_answer_shown, timeout=10_000):
        win.engine.sig_answer.emit("[Contract review]", review.as_answer())
    return win.chat.transcript.toPlainText()


def test_an_unbacked_review_is_greyed_without_sources(qtbot, window, library):
    info = open_and_wait(qtbot, window, corpus_path(CSA))
    text = _show(qtbot, window, _review(info, "unclear"))
    entry = window.chat.entries[-1]
    assert entry.headline == "evidence" and entry.data["headline"] == "evidence"
    assert "not backed by the quotes it cites" in text
    assert "Sources: [1]" not in text.split("[Contract review]")[-1]
    assert "208.7 s" in entry.meta and "review in 2 parts" in entry.meta
    html = window.chat.transcript.toHtml()
    assert "The contract is a contract." in text and "color:#808080" in html.split("Contract review")[-1]
    assert window.citations.citations() == entry.citations        # its quotes stay in the Citations panel
    # the view went to the review's start (under 30 earlier entries), not left where it was
    qtbot.waitUntil(lambda: _in_view(window.chat.transcript, "[Contract review]"), timeout=5_000)
    # restored from the library: still greyed (the stored headline)
    qtbot.waitUntil(lambda: any(e.question == "[Contract review]" for e in library.exchanges([info.id])),
                    timeout=10_000)
    from app.qt import transcript_entries as history
    restored = history.entries(library.exchanges([info.id]), [info])[-1]
    assert restored.headline == "evidence"


def test_a_backed_review_leads_with_its_sources(qtbot, window):
    info = open_and_wait(qtbot, window, corpus_path(CSA))
    text = _show(qtbot, window, _review(info, "supports"))
    assert window.chat.entries[-1].headline == "answer"
    assert "Sources: [1]" in text and "not backed" not in text
