"""The library panel: every document listed (title, pages, language, added), a filter,
open on a double click, several chosen for one question, remove with its history."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.support.corpus import corpus_path
from tests.support.strict import unavailable

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DOCS = ["licenses/mpl-2.0.pdf", "contracts-zh/pipl.pdf", "contracts-en/common-paper-mnda.pdf",
        "licenses/apache-2.0.pdf"]


def test_library_panel_lists_filters_scopes_and_removes(qtbot, window, library, monkeypatch):
    infos = [library.add(corpus_path(rel)) for rel in DOCS]
    library.add_exchange([infos[0].id], "What is a Contributor?", "{}")
    panel = window.library_panel
    panel.refresh()
    rows = {i.text(0): (i.text(1), i.text(2)) for i in panel.items()}
    assert rows["Mozilla Public License, Version 2.0"] == ("6", "en")
    assert rows[infos[1].title] == ("9", "zh")
    assert all(i.text(3)[:4].isdigit() for i in panel.items())          # the date added
    assert panel.summary.text() == f"4 documents, {sum(i.page_count for i in infos)} pages"

    qtbot.keyClicks(panel.filter, "license")
    assert sorted(panel.visible_titles()) == sorted([infos[0].title, infos[3].title])
    panel.filter.clear()

    # Three documents for one question (more than the two panes hold).
    panel.select_ids([infos[0].id, infos[1].id, infos[3].id])
    qtbot.mouseClick(panel.ask_button, Qt.MouseButton.LeftButton)
    assert sorted(i.id for i in window.doc_infos()) == sorted([infos[0].id, infos[1].id, infos[3].id])
    assert [r.doc_id for r in window._refs()] == [i.id for i in window.doc_infos()]

    SHOTS.mkdir(parents=True, exist_ok=True)
    window.resize(1400, 860)
    qtbot.wait(200)
    window.grab().save(str(SHOTS / "library-panel.png"))

    # Double click opens in the viewer (recorded, not opened: that would start search vectors).
    opened = []
    monkeypatch.setattr(window, "open_path", lambda path, pane=None: opened.append((path, pane)))
    item = next(i for i in panel.items() if i.data(0, Qt.ItemDataRole.UserRole) == infos[2].id)
    panel.tree.itemDoubleClicked.emit(item, 0)
    assert opened == [(str(corpus_path(DOCS[2])), window.pane_a)]

    # Remove: gone from the library, its history with it, and from the question's scope.
    panel.confirm = False
    panel.select_ids([infos[0].id])
    qtbot.mouseClick(panel.remove_button, Qt.MouseButton.LeftButton)
    assert infos[0].id not in [d.id for d in library.documents()]
    assert library.exchanges([infos[0].id]) == []
    assert infos[0].id not in [i.id for i in window.doc_infos()]
    assert len(panel.items()) == 3


def test_an_answer_is_copied_and_exported_with_its_citations(qtbot, window, tmp_path):
    from PySide6.QtGui import QGuiApplication

    from app.core.answer.citations import Citation
    from app.core.answer.qa import Answer
    answer = Answer(text="The MNDA Term is one year.", mode="whole-document", not_stated=False,
                    citations=[Citation(1, "/docs/mnda.pdf", 3, "expires at the end of the MNDA Term", True)])
    window.chat.begin("How long does it last?")      # as MainWindow.ask does before the engine answers
    window._asked_ids = []
    window.engine.sig_answer.emit("How long does it last?", answer)
    export = window.answer_export
    assert all(a.isEnabled() for a in export.actions)
    export.copy()
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("# How long does it last?") and \
        ("1. **mnda.pdf, p. 3** [verified; does not obviously support the answer]: "
                                              "“expires at the end of the MNDA Term”") in copied
    md = export.save_markdown(str(tmp_path / "a.md"))
    assert md.read_text(encoding="utf-8") == copied
    memo = export.save_pdf(str(tmp_path / "a.pdf"))
    import pymupdf
    with pymupdf.open(memo) as doc:
        text = " ".join(doc[0].get_text().split())
    assert "The MNDA Term is one year." in text and "mnda.pdf, p. 3" in text
    menu = [a.text() for a in window.menuBar().actions()[0].menu().actions()]
    assert "Export answer as PDF &memo…" in menu and menu[-1] == "&Quit"


@pytest.mark.slow
def test_a_scanned_document_is_shown_from_its_ocr_copy_and_highlights(qtbot, window):
    """OCR at ingestion (Tesseract), then the viewer shows the copy with the text layer."""
    from app.core.documents import ocr
    if not ocr.available():
        unavailable("Tesseract is not installed (scripts/setup.sh)")
    scan = corpus_path("bad/scanned-image-only-en.pdf")
    with qtbot.waitSignal(window.sig_documents_ready, timeout=240000):
        window.open_path(str(scan), window.pane_a)
    info = window.doc_infos()[0]
    assert window.pane_a.path == str(ocr.searchable_copy(info.sha256))
    assert window.pane_a.title.text() == "scanned-image-only-en.pdf (OCR)"
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=30000) as found:
        window.pane_a.highlight_quote(1, "use Confidential Information solely for the Purpose")
    page, rects = found.args
    assert page == 1 and rects
    qtbot.wait(300)
    window.grab().save(str(SHOTS / "ocr-highlight.png"))
    from app.qt import workers
    window.loader.shutdown()                 # the search vectors job started after indexing
    assert workers.wait_all(60000)


def test_a_table_cell_citation_highlights_its_cell(qtbot, window, tmp_path):
    """A cell quote as the index holds it ("Support | Annual = $3,000") lights up that cell,
    not the same amount elsewhere on the page."""
    import pymupdf
    from tests.support.table_pdf import make_table_pdf
    fees = tmp_path / "fees.pdf"
    make_table_pdf(fees)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=60000):
        window.open_path(str(fees), window.pane_a)
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=30000) as found:
        window.pane_a.highlight_quote(1, "Support | Monthly = $12,000")
    page, rects = found.args
    [rect] = rects
    support_monthly = pymupdf.Rect(328, 120 + 2 * 24, 456, 120 + 3 * 24)   # row 3, column 3
    assert page == 1 and support_monthly.contains(pymupdf.Rect(rect))
    qtbot.wait(300)
    window.grab().save(str(SHOTS / "table-cell-highlight.png"))
    from app.qt import workers
    window.loader.shutdown()
    assert workers.wait_all(60000)
