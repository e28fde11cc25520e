"""Main window with real documents: citation click → page + exact highlight, comparison,
password prompt, readable errors, history on reopen, layout restored."""
from __future__ import annotations

import json

import pymupdf
from PySide6.QtCore import Qt

from app.core.answer.citations import verify
from tests.qt.conftest import open_and_wait, wait_settled
from tests.support.corpus import corpus_path
from tests.support.strict import require_dense

PASSWORD = "corpus-user-2024"


def longest_line(library, doc_id: int, page: int) -> str:
    """A real sentence from the page's own text (what a verified quote looks like)."""
    lines = [line.strip() for line in library.page_text(doc_id, page).splitlines()]
    return max(lines, key=len)


def expected_rects(path, page: int, quote: str) -> list:
    with pymupdf.open(path) as doc:
        return [tuple(r) for r in doc[page - 1].search_for(quote)]


def citation_for(library, info, page: int):
    quote = longest_line(library, info.id, page)
    pages = {p.number: p.text for p in library.pages(info.id)}
    return verify(info.id, info.path, page, quote, pages)


def test_clicking_a_citation_jumps_and_highlights_the_quoted_words(qtbot, window, library):
    path = corpus_path("contracts-en/bonterms-psa-v1.2.pdf")
    info = open_and_wait(qtbot, window, path)
    assert info.page_count == 11
    cites = [citation_for(library, info, 7), citation_for(library, info, 3)]
    assert all(c.verified for c in cites)
    window.citations.set_citations(cites)
    card = window.citations.cards[0]
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=10000):
        qtbot.mouseClick(card, Qt.MouseButton.LeftButton)
    view = window.pane_a.view
    assert view.current_page() == 7
    want = expected_rects(path, 7, cites[0].quote)
    assert want and view.highlights() == {7: [tuple(r) for r in want]}
    assert card.badge.text().startswith("✓")
    # F8 moves to the next citation, on another page.
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=10000):
        window.actions_by_name["next_citation"].trigger()
    assert view.current_page() == 3
    assert view.highlights() == {3: expected_rects(path, 3, cites[1].quote)}


def test_unverified_citation_is_shown_as_such(qtbot, window, library):
    info = open_and_wait(qtbot, window, corpus_path("contracts-en/common-paper-mnda.pdf"))
    pages = {p.number: p.text for p in library.pages(info.id)}
    fake = verify(info.id, info.path, 2, "The parties agree to share all profits equally forever.", pages)
    assert not fake.verified
    window.citations.set_citations([fake])
    assert window.citations.cards[0].badge.text().startswith("⚠")
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=10000) as hl:
        window.citations.activate(0)
    assert hl.args == [2, []] and window.pane_a.view.current_page() == 2


def test_comparison_citations_drive_the_matching_pane(qtbot, window, library):
    a_path, b_path = corpus_path("contracts-en/common-paper-dpa.pdf"), corpus_path("contracts-en/bonterms-dpa-v1.0.pdf")
    window.set_compare(True)
    a = open_and_wait(qtbot, window, a_path, window.pane_a)
    b = open_and_wait(qtbot, window, b_path, window.pane_b)
    assert window.compare_mode() and [i.id for i in window.doc_infos()] == [a.id, b.id]
    titles = [btn.text() for btn in window.chat.findChildren(type(window.chat.ask_button), "templateButton")]
    assert "Compare clauses" in titles
    cb, ca = citation_for(library, b, 4), citation_for(library, a, 5)
    window.citations.set_citations([cb, ca])
    with qtbot.waitSignal(window.pane_b.sig_highlighted, timeout=10000):
        window.citations.activate(0)
    # page 4 in view (near the end of a short document the view cannot scroll page 4 to its top,
    # so the page at the top may be 3: since the library panel, compare panes are narrower)
    assert 4 - 1 in window.pane_b.view._visible()
    assert window.pane_b.view.highlights() == {4: expected_rects(b_path, 4, cb.quote)}
    assert window.pane_a.view.highlights() == {}
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=10000):
        window.citations.activate(1)
    assert window.pane_a.view.current_page() == 5
    assert window.pane_a.view.highlights() == {5: expected_rects(a_path, 5, ca.quote)}


def test_password_prompt_wrong_then_right(qtbot, window):
    path = corpus_path("bad/encrypted-user-password.pdf")
    with qtbot.waitSignal(window.loader.sig_password_asked, timeout=15000) as asked:
        window.open_path(str(path))
    dialog = asked.args[0]
    assert "protected" in dialog.message.text()
    dialog.field.setText("not-the-password")
    with qtbot.waitSignal(window.loader.sig_password_asked, timeout=15000) as asked_again:
        dialog.accept()
    dialog = asked_again.args[0]
    assert "wrong" in dialog.message.text()
    dialog.field.setText(PASSWORD)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30000):
        dialog.accept()
    info = window.docs[window.pane_a]
    assert info.page_count == window.pane_a.view.page_count() > 0
    wait_settled(qtbot, window.pane_a)
    assert window.loader.passwords[str(path)] == PASSWORD


def test_bad_pdf_gives_one_line_message(qtbot, window):
    from PySide6.QtWidgets import QMessageBox
    with qtbot.waitSignal(window.loader.sig_refused, timeout=15000):
        window.open_path(str(corpus_path("bad/not-a-pdf-docx.pdf")))
    boxes = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert boxes, "no error shown"
    text = boxes[-1].text()
    assert "not a PDF" in text and "\n" not in text and "Traceback" not in text
    assert window.pane_a.path is None and not window.chat.ask_button.isEnabled()


def test_a_failed_open_keeps_the_document_that_was_open(qtbot, window):
    from PySide6.QtWidgets import QMessageBox
    good = corpus_path("contracts-en/common-paper-baa.pdf")
    info = open_and_wait(qtbot, window, good)
    could_ask = window.chat.ask_button.isEnabled()
    for bad in ("bad/not-a-pdf-docx.pdf", "bad/zero-bytes.pdf"):
        with qtbot.waitSignal(window.loader.sig_refused, timeout=15000):
            window.open_path(str(corpus_path(bad)))
        for box in window.findChildren(QMessageBox):
            box.close()
        assert window.pane_a.path == str(good)
        assert window.docs.get(window.pane_a) == info and window.chat.ask_button.isEnabled() == could_ask
        assert "not opened" in window.statusBar().currentMessage().lower()


def test_scanned_pdf_is_shown_and_read_by_ocr(qtbot, window):
    from app.core.documents import ocr
    with qtbot.waitSignal(window.sig_documents_ready, timeout=300000):   # OCR: seconds a page
        window.open_path(str(corpus_path("bad/scanned-image-only-en.pdf")))
    assert window.pane_a.view.page_count() >= 1
    assert window.pane_a.notice.isVisibleTo(window)
    if ocr.available():          # set-up installs Tesseract: the scan is read and askable, and says so
        assert "OCR" in window.pane_a.notice.text() and window.doc_infos()
    else:
        assert "text layer" in window.pane_a.notice.text() and window.doc_infos() == []


def test_history_returns_when_the_document_is_reopened(qtbot, window, library):
    path = corpus_path("contracts-en/common-paper-baa.pdf")
    info = open_and_wait(qtbot, window, path)
    quote = longest_line(library, info.id, 2)
    stored = {"answer": "It is on page 2.", "mode": "retrieval", "not_stated": False,
              "citations": [{"doc": str(path), "page": 2, "quote": quote, "verified": True}]}
    library.add_exchange([info.id], "Where is it?", json.dumps(stored))
    open_and_wait(qtbot, window, path)
    entry = window.chat.entries[-1]
    assert entry.question == "Where is it?" and entry.citations[0].doc_id == info.id
    assert "Where is it?" in window.chat.transcript.toPlainText()
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=10000):
        window.chat.sig_marker_clicked.emit(len(window.chat.entries) - 1, 0)
    assert window.pane_a.view.highlights() == {2: expected_rects(path, 2, quote)}


def test_progress_is_shown_while_indexing_and_window_stays_responsive(qtbot, window):
    seen = []
    window.pane_a.progress.valueChanged.connect(seen.append)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30000):
        window.open_path(str(corpus_path("contracts-zh/civil-code-book3-contracts.pdf")))
    assert max(seen) >= 40 and not window.pane_a.progress.isVisible()


def test_layout_is_restored(qtbot, window, library):
    from app.qt.main_window import MainWindow
    window.main_split.setSizes([700, 580])
    want = window.main_split.sizes()[0]          # what the splitter made of it beside the library panel
    window.pane_a.view.set_zoom(1.5)
    window.close()
    again = MainWindow(library=library, start_engine=False)
    again.resize(1280, 860)    # the offscreen screen is smaller than the saved geometry
    qtbot.addWidget(again)
    again.show()
    try:
        assert abs(again.main_split.sizes()[0] - want) <= 10
        assert again.pane_a.view.zoom() == 1.5 and again.pane_a.view.fit_mode() == ""
    finally:
        again.close()


def test_search_vectors_are_computed_in_the_background_after_indexing(qtbot, window, library):
    """The document can be asked as soon as it is indexed; its search vectors follow in a
    background job with its own progress bar, and end up in the library."""
    require_dense()
    formats = []
    window.pane_a.progress.valueChanged.connect(lambda _: formats.append(window.pane_a.progress.format()))
    with qtbot.waitSignal(window.loader.sig_vectors_done, timeout=120000) as done:
        info = open_and_wait(qtbot, window, corpus_path("contracts-en/common-paper-mnda.pdf"))
        assert info is not None
    assert done.args[1] == len(library.chunks(info.id))
    assert library.unembedded([info.id]) == 0
    assert any(f.startswith("Search vectors: passage") for f in formats)
    assert not window.pane_a.progress.isVisible()


def test_closing_the_window_stops_the_vectors_job(qtbot, window, library):
    from app.qt import workers
    require_dense()
    info = open_and_wait(qtbot, window, corpus_path("contracts-en/bonterms-psa-v1.2.pdf"))
    assert window.loader._embedding                       # 72 passages: still running
    window.close()
    assert workers.wait_all(10000)                       # stopped between two batches
    assert library.unembedded([info.id]) > 0             # what was done is kept; the rest later


def test_a_remembered_password_opens_the_file_again_without_asking(qtbot, window, file_keyring):
    from app.core import settings
    settings.set_value("remember_pdf_passwords", "on")
    path = corpus_path("bad/encrypted-user-password.pdf")
    with qtbot.waitSignal(window.loader.sig_password_asked, timeout=15000) as asked:
        window.open_path(str(path))
    asked.args[0].field.setText(PASSWORD)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30000):
        asked.args[0].accept()
    assert PASSWORD in file_keyring.path.read_text()       # in the keyring, not the settings file
    assert PASSWORD not in settings.settings_path().read_text()
    window.loader.passwords.clear()                         # the next session knows only the keyring
    asked_again: list = []
    window.loader.sig_password_asked.connect(asked_again.append)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30000):
        window.open_path(str(path))
    assert asked_again == [] and window.docs[window.pane_a].page_count > 0
