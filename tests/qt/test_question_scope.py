"""Issue 33 defect 1: the documents asked follow the page on screen. "Ask these" in the
library scopes the next questions to the rows chosen, shown as removable chips with a
warning when the page on screen is not among them; opening any other PDF resets the scope."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
NDA, PSA, MPL = ("contracts-en/common-paper-mnda.pdf", "contracts-en/bonterms-psa-v1.2.pdf",
                 "licenses/mpl-2.0.pdf")


def test_the_scope_follows_the_page_on_screen(qtbot, window, library):
    shown = open_and_wait(qtbot, window, corpus_path(MPL))
    pair = [library.add(corpus_path(NDA)), library.add(corpus_path(PSA))]
    panel = window.library_panel
    panel.refresh()
    panel.select_ids([i.id for i in pair])
    qtbot.mouseClick(panel.ask_button, Qt.MouseButton.LeftButton)
    chips = window.chat.scope
    assert [i.id for i in window.doc_infos()] == [i.id for i in pair]
    assert chips.names() == ["common-paper-mnda.pdf", "bonterms-psa-v1.2.pdf"]
    assert chips.warning.isVisible() and "mpl-2.0.pdf" in chips.warning.text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    qtbot.wait(200)
    window.grab().save(str(SHOTS / "scope-chips.png"))

    # A chip's ×: that document is no longer asked.
    qtbot.mouseClick(chips.chips[pair[1].id], Qt.MouseButton.LeftButton)
    assert [i.id for i in window.doc_infos()] == [pair[0].id]
    # "Ask it instead": back to the page on screen, no warning.
    chips.warning.linkActivated.emit("on-screen")
    assert [i.id for i in window.doc_infos()] == [shown.id]
    assert not chips.warning.isVisible()

    # Scope the pair again, then open another PDF (Ctrl+O, recent and the library's Open all
    # go through open_path): the document on screen is the one asked.
    panel.select_ids([i.id for i in pair])
    qtbot.mouseClick(panel.ask_button, Qt.MouseButton.LeftButton)
    panel.select_ids([pair[0].id])
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30000):
        qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    assert [i.id for i in window.doc_infos()] == [pair[0].id]
    assert [r.doc_id for r in window._refs()] == [pair[0].id]
    assert chips.names() == ["common-paper-mnda.pdf"] and not chips.warning.isVisible()
    assert "bonterms" not in window.chat.hint.text()
