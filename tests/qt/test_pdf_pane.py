"""The PDF pane on real corpus files: display, search, zoom, lazy rendering of a 500-page file."""
from __future__ import annotations

import subprocess
import sys

import pymupdf
import pytest

from tests.qt.conftest import wait_settled
from tests.support.corpus import corpus_path


@pytest.fixture
def pane(qtbot):
    from app.qt.pdf_pane import PdfPane
    p = PdfPane()
    p.resize(900, 1000)
    qtbot.addWidget(p)
    p.show()
    yield p
    p.close_document()


def open_pane(qtbot, pane, path, password=None, timeout=10000):
    with qtbot.waitSignal(pane.sig_opened, timeout=timeout) as blocker:
        pane.open(str(path), password)
    return blocker.args


def test_opens_real_pdf_and_renders_first_pages(qtbot, pane):
    path = corpus_path("papers/tracemonkey-pldi-09.pdf")
    _, count = open_pane(qtbot, pane, path)
    assert count == 14
    assert pane.page_box.maximum() == 14 and pane.page_total.text() == "/ 14"
    wait_settled(qtbot, pane)
    assert 1 in pane.view.cached_pages()
    assert len(pane.view.cached_pages()) <= 4          # only what is on screen, plus prefetch


def test_search_highlights_the_same_hits_as_pymupdf(qtbot, pane):
    path = corpus_path("contracts-en/bonterms-cloud-terms-v1.0.pdf")
    open_pane(qtbot, pane, path)
    with qtbot.waitSignal(pane._search.sig_results, timeout=10000):
        pane.search("Confidential Information")
    with pymupdf.open(path) as doc:
        expected = [(p.number + 1, tuple(r)) for p in doc for r in p.search_for("Confidential Information")]
    assert pane.search_hits() == expected and expected
    assert pane.view.current_page() == expected[0][0]
    pane.step_hit(1)
    assert pane.hit_label.text() == f"2 / {len(expected)}"
    assert pane.view.current_page() == expected[1][0]


def test_zoom_modes_and_ctrl_wheel(qtbot, pane):
    open_pane(qtbot, pane, corpus_path("contracts-en/common-paper-mnda.pdf"))
    view = pane.view
    view.set_fit("width")
    width_zoom = view.zoom()
    view.set_fit("page")
    assert view.zoom() < width_zoom            # a tall page fits by height in a 900×1000 pane
    view.set_zoom(1.0)
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    event = QWheelEvent(QPointF(100, 100), QPointF(100, 100), QPoint(0, 0), QPoint(0, 120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.ControlModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    view.wheelEvent(event)
    assert view.zoom() == pytest.approx(1.15)
    assert pane.zoom_box.currentText() == "115 %"


def test_a_zoom_or_a_resize_keeps_the_page_shown(qtbot, pane):
    """The gaps between pages do not scale with the zoom: the page at the top stays the page at
    the top (a restart's page 7 became page 6 when the window's first resize re-fitted it)."""
    open_pane(qtbot, pane, corpus_path("contracts-zh/civil-code-book3-contracts.pdf"))
    view = pane.view
    for page in (7, 30):
        view.go_to(page)
        for zoom in (1.6, 0.55, 1.0):
            view.set_zoom(zoom)
            assert view.current_page() == page, (page, zoom)
        view.set_fit("width")
        pane.resize(700, 900)
        pane.resize(1100, 900)
        assert view.current_page() == page


def test_page_box_navigates(qtbot, pane):
    open_pane(qtbot, pane, corpus_path("contracts-zh/civil-code-book3-contracts.pdf"))
    pane.page_box.setValue(30)
    assert pane.view.current_page() == 30
    wait_settled(qtbot, pane)
    assert 30 in pane.view.cached_pages()


def test_rotated_pages_open(qtbot, pane):
    path = corpus_path("bad/rotated-pages.pdf")
    _, count = open_pane(qtbot, pane, path)
    with pymupdf.open(path) as doc:
        assert count == doc.page_count
        assert [round(g.width) for g in pane.view._geoms] == [round(p.rect.width) for p in doc]


def test_500_page_document_opens_at_once_and_renders_lazily(qtbot, pane, tmp_path):
    big = tmp_path / "large-500.pdf"
    subprocess.run([sys.executable, str(corpus_path("make_large_pdf.py")), "--pages", "500", "--out", str(big)],
                   check=True, capture_output=True)
    _, count = open_pane(qtbot, pane, big, timeout=60_000)     # a hang guard, not a speed claim
    assert count == 500
    wait_settled(qtbot, pane)
    # "at once": opening rendered what is on screen (plus prefetch), not the 500 pages
    assert len(pane.view.cached_pages()) <= 4, pane.view.cached_pages()
    for page in (120, 250, 499):
        pane.view.go_to(page)
        assert pane.view.current_page() == page
        wait_settled(qtbot, pane)
    cached = pane.view.cached_pages()
    assert 250 in cached and 499 in cached
    assert len(cached) < 30, f"rendered {len(cached)} pages, expected only those seen"
