"""Exports lead with the evidence too (issue 29): an answer its citations do not back is never
the memo's answer."""
from __future__ import annotations

import pymupdf

from app.core.answer import export

ANSWER = {"evidence": {"addressed": True, "ms": 40.0, "cards": [
    {"doc": "/x/mnda.pdf", "page": 4, "quote": "This MNDA and all matters relating hereto are governed by, "
     "and construed in accordance with, the laws of the State of Governing Law", "clause": "Section 9 Governing Law",
     "score": 1.2, "ms": 40.0}]},
    "answer": "The document is a document.", "citations": [], "headline": "evidence", "supported": False}


def test_markdown_puts_the_cards_first_and_the_unbacked_summary_under_them():
    md = export.to_markdown("Which law governs?", ANSWER, when=0)
    assert md.index("## Evidence") < md.index("E1. **mnda.pdf, p. 4 · Section 9 Governing Law**") \
        < md.index(f"## {export.NOT_BACKED}") < md.index("The document is a document.")


def test_pdf_memo_too(tmp_path):
    dest = export.to_pdf("Which law governs?", ANSWER, tmp_path / "memo.pdf", when=0)
    text = " ".join(" ".join(page.get_text().split()) for page in pymupdf.open(dest))
    assert text.index("Evidence") < text.index("Section 9 Governing Law") < text.index(export.NOT_BACKED) \
        < text.index("The document is a document.")


def test_an_answer_without_cards_exports_as_before():
    md = export.to_markdown("Q", {"answer": "Delaware.", "citations": []}, when=0)
    assert "## Evidence" not in md and "## Answer" not in md and "Delaware." in md
