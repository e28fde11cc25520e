"""The citation card says what was checked ("quote found on p. 2") and, separately,
whether the quote supports the answer (issue 19.3)."""
from __future__ import annotations

import pymupdf

from app.core.answer.citations import verify, with_support
from app.qt.citation_panel import NOT_SUPPORTS, SUPPORTS, CitationPanel
from tests.support.corpus import corpus_path

QUESTION = "Under which licence is the Common Paper Mutual Non-Disclosure Agreement free to use?"


def mnda_pages() -> dict[int, str]:
    with pymupdf.open(corpus_path("contracts-en/common-paper-mnda.pdf")) as doc:
        return {i + 1: p.get_text() for i, p in enumerate(doc)}


def test_card_shows_what_was_checked_and_whether_it_supports(qtbot):
    pages = mnda_pages()
    line = max((text.strip() for text in pages[2].splitlines()), key=len)
    cited = verify(1, "mnda.pdf", 2, line, pages)
    assert cited.verified
    backed, = with_support([cited], line, QUESTION)          # the answer restates the quote the question asks about
    off_topic, = with_support([cited], line, "How long do the confidentiality obligations last under the MNDA?")
    assert off_topic.support != "supports"                   # a quote that is not about the question backs nothing
    unrelated, = with_support([cited], "Yes, the tenant must repaint the flat.", "Must the tenant repaint?")
    panel = CitationPanel()
    qtbot.addWidget(panel)
    panel.set_citations([backed, unrelated, verify(1, "mnda.pdf", 2, "rent", pages)])
    first, second, short = panel.cards
    assert first.badge.text() == "✓ quote found on p. 2"
    assert first.support.text() == SUPPORTS
    assert second.support.text() == NOT_SUPPORTS
    assert short.badge.text() == "⚠ quote too short to check" and short.support.text() == NOT_SUPPORTS
