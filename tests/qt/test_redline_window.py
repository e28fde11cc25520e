"""Compare versions in the window: the Bonterms PSA 1.1 (rendered from its source) beside the
publisher's 1.2 PDF; the change list material first; choosing a change lights its deleted words
on the old version's page and its inserted words on the new one's (the redline's rectangles);
`pagewise gui --diff --screenshot` saves both panes."""
from __future__ import annotations

import pymupdf
import pytest

from app.core.compare.versions import diff_files
from tests.support.corpus import corpus_path
from tests.support.versions_pdf import render_version, words_in


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    return str(render_version("bonterms-psa-v1.1", tmp_path_factory.mktemp("versions"))), \
        str(corpus_path("contracts-en/bonterms-psa-v1.2.pdf"))


def test_choosing_a_change_lights_both_versions(qtbot, pdfs):
    from app.qt.redline_window import RedlineWindow
    old, new = pdfs
    win = RedlineWindow(diff_files(old, new))
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitUntil(lambda: win._opened == 2 and win.list.currentRow() == 0, timeout=30000)
    items = [win.list.item(i).text() for i in range(win.list.count())]
    assert len(items) == 5 and items[0].startswith("● ") and items[-1] == "changed: 10.6 Taxes"
    row = next(i for i, text in enumerate(items) if "6.3 Assigned Deliverables" in text)
    win.list.setCurrentRow(row)
    pair = win.changes[row]
    (old_page, old_rects), = win.old.view.highlights().items()
    (new_page, new_rects), = win.new.view.highlights().items()
    assert old_page == pair.deleted[0].page and words_in(old, old_page, old_rects) == "Provider Provider"
    assert new_page == pair.inserted[0].page
    assert words_in(new, new_page, new_rects) == "by Provider Customer by Provider Customer"
    assert win.old.view.current_page() == old_page and win.new.view.current_page() == new_page
    win.close()


def test_gui_diff_screenshot(pdfs, tmp_path):
    from tests.support.cli import run_process
    out = tmp_path / "redline.png"
    res = run_process("gui", "--diff", *pdfs, "--screenshot", str(out), "--change", "2",
                      env={"QT_QPA_PLATFORM": "offscreen"}, timeout=120)
    assert res.returncode == 0, res.stderr
    shot = pymupdf.Pixmap(str(out))
    assert (shot.width, shot.height) == (1600, 950)


def test_compare_versions_from_the_main_window(qtbot, window, pdfs, monkeypatch):
    """File → Compare versions: the left pane's document is the old version, the right one's
    the new; without two documents open it says what to do and opens nothing."""
    from PySide6.QtWidgets import QMessageBox

    from tests.qt.conftest import open_and_wait
    shown = []       # the modal box would wait for a click offscreen: its text is kept instead
    monkeypatch.setattr(QMessageBox, "information", staticmethod(lambda *a, **k: shown.append(a[2])))
    window.actions_by_name["compare_versions"].trigger()
    assert shown and "old version on the left" in shown[0]
    old, new = pdfs
    open_and_wait(qtbot, window, old)
    open_and_wait(qtbot, window, new, window.pane_b)
    window.actions_by_name["compare_versions"].trigger()
    versions = window._versions_window
    qtbot.addWidget(versions)
    qtbot.waitUntil(lambda: versions.list.currentRow() == 0, timeout=30000)
    assert versions.redline.old_path == old and versions.redline.new_path == new
    assert versions.list.count() == 5
    qtbot.waitUntil(lambda: bool(versions.new.view.highlights()), timeout=30000)   # lit once its page is shown
    versions.close()
