"""Issue 33 defect 3: a citation's card shows the quote as printed (its case and its curly
quote marks, not the casefolded matching form) and the highlight covers the whole quote.
NDA p. 3: the highlight stopped at "…and the Cover" and the card read "this mutual
non-disclosure agreement … ("mnda")"."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel

from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

NDA = "contracts-en/common-paper-mnda.pdf"
# as a model writes it: straight quotes; the page has “MNDA” and a line break after "these"
QUOTES = ['This Mutual Non-Disclosure Agreement (which incorporates these Standard Terms and the '
          'Cover Page (defined below)) ("MNDA") allows each party',
          # near-verbatim (one word off): the page's wording is shown
          'This Mutual Non-Disclosure Agreement (which incorporates the Standard Terms and the '
          'Cover Page (defined below)) ("MNDA") allows each party']
PRINTED = ("This Mutual Non-Disclosure Agreement (which incorporates these Standard Terms and the "
           "Cover Page (defined below)) (\u201cMNDA\u201d) allows each party")


def test_the_card_shows_the_printed_quote_and_the_highlight_covers_it(qtbot, window, library):
    from app.core.answer.citations import verify
    info = open_and_wait(qtbot, window, corpus_path(NDA))
    pages = {n: library.page_text(info.id, n) for n in range(1, info.page_count + 1)}
    for quote in QUOTES:
        citation = verify(info.id, "doc 1", 3, quote, pages)
        assert citation.verified and citation.quote == PRINTED
        window.citations.set_citations([citation], {info.id: "common-paper-mnda.pdf"})
        def shown():
            return [label.text() for label in window.citations.findChildren(QLabel, "citationQuote")]
        qtbot.waitUntil(lambda: len(shown()) == 1)       # the previous card deleted
        assert shown() == [f"\u201c{PRINTED}\u201d"]
        with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=10000) as hit:
            window.citations.activate_citation(0)
        page, rects = hit.args
        assert page == 3
        # the quote's last line ends at "allows each party" (right margin), not at "…and the Cover"
        second_line = [r for r in rects if r[1] > 120]
        assert second_line and max(r[2] for r in second_line) > 500, rects
        assert min(r[1] for r in rects) < 115          # and it starts on the first line ("This Mutual")
