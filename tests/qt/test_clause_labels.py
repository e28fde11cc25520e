"""The evidence cards in the window name the clause that holds their sentence: never a clause a
wrapped cross-reference line seemed to open ("Section 12 (General Terms), Section 13 …"), never a
bare sub-item ("(a)"); and a scan's running header, read by OCR, is stripped like a printed one."""
from __future__ import annotations

import re

from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

HEADER = "Common Paper Mutual Non-Disclosure Agreement"


def _cards(qtbot, win, question: str) -> tuple[list, str]:
    win.chat.begin(question)
    evidence = win.engine.service.evidence(win._refs(), question)
    with qtbot.waitSignal(win.sig_evidence_shown, timeout=10_000):
        win.engine.sig_evidence.emit(evidence)
    return evidence.cards, win.chat.transcript.toPlainText()


def test_a_sentence_is_labelled_with_the_clause_that_holds_it(qtbot, window):
    open_and_wait(qtbot, window, corpus_path("contracts-en/common-paper-csa.pdf"))
    cards, shown = _cards(qtbot, window, "May the recipient retain confidential information in its backups?")
    retain = [c for c in cards if c.page == 4 and "may retain" in c.quote]
    assert retain, [(c.page, c.quote[:60]) for c in cards]
    assert retain[0].clause == "Section 5.6 Survival"
    assert "p. 4 · Section 5.6 Survival" in shown and "Section 12" not in retain[0].clause


def test_a_sub_item_is_named_within_its_clause(qtbot, window):
    open_and_wait(qtbot, window, corpus_path("contracts-en/bonterms-psa-v1.2.pdf"))
    cards, shown = _cards(qtbot, window, "What do the liability definitions say about Damages?")
    assert cards and not [c.clause for c in cards if re.match(r"[(（]", c.clause)]
    assert not re.search(r"· \([a-z]+\)\n", shown)


def test_a_scans_running_header_is_stripped(qtbot, window, library):
    info = open_and_wait(qtbot, window, corpus_path("bad/scanned-image-only-en.pdf"), timeout=180_000)
    assert any("OCR" in w for w in info.warnings)
    cards, _ = _cards(qtbot, window, "What must the receiving party do with confidential information "
                                     "on termination?")
    assert cards
    for card in cards:
        assert not card.quote.strip(" ,").startswith(HEADER), card.quote        # glued onto the next words
    glued = [c.text for c in library.chunks(info.id) if c.text.lstrip(" ,").startswith(HEADER)]
    assert not glued, glued
