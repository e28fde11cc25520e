"""One clause table across the nine English contracts of the corpus in the window: chosen in
the library (the question's scope), "Compare clauses" gives one column per document, every
found quote verified, and the transcript scrolls sideways instead of squeezing nine columns."""
from __future__ import annotations

from pathlib import Path

from app.qt.compare_view import COLUMN_PX


def test_nine_contracts_in_one_table_scroll_sideways(qtbot, window, library, corpus):
    from PySide6.QtWidgets import QPushButton
    files = sorted((corpus / "contracts-en").glob("*.pdf"))
    assert len(files) == 9
    ids = [library.add(f).id for f in files]
    window.set_library_scope(ids)
    buttons = [b for b in window.chat.findChildren(QPushButton, "templateButton") if b.text() == "Compare clauses"]
    assert buttons, "no Compare clauses button with nine documents chosen"
    # what the button sends (it waits for an engine, which this window does not start)
    with qtbot.waitSignal(window.sig_evidence_shown, timeout=60_000):
        window.chat.sig_compare.emit("")
    table = window.chat.entries[-1].evidence.table
    assert [Path(r.label).name for r in table.refs] == [f.name for f in files]
    found = [c for row in table.rows for c in row if c.card is not None]
    assert len(found) >= 40 and all(c.verified for c in found)
    shown = window.chat.transcript.toPlainText()
    assert all(f.name in shown for f in files) and "not found" in shown
    bar = window.chat.transcript.horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)
    assert window.chat.transcript.document().size().width() >= 9 * COLUMN_PX
