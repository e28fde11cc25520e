"""Exports lead with the evidence too (issue 29): an answer its citations do not back is never
the memo's answer."""
from __future__ import annotations

import pymupdf

from app.core.answer import export_formats as export

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


def test_the_memo_is_searchable_numbered_and_says_when_the_test_model_wrote_it(tmp_path):
    import pymupdf

    from app.core.answer import export_formats as export
    answer = {"answer": "The obligations are verified and first defined in the file.",
              "citations": [{"doc": "a.pdf", "page": 1, "quote": "defined first", "verified": True}],
              "engine": {"name": "llama.cpp", "model": "smollm2-135m-q4_1"}}
    dest = export.to_pdf("What is defined first?", answer, tmp_path / "memo.pdf")
    with pymupdf.open(dest) as doc:
        text = doc[0].get_text()
        assert doc[0].search_for("verified") and doc[0].search_for("defined")   # no "ﬁ" ligatures
        assert "\ufb01" not in text and "Page 1 of 1" in text
        assert export.TEST_MODEL_CAVEAT.split(":")[0] in " ".join(text.split())
    assert dest.stat().st_size < 500_000          # the font subset, not the whole font file
    answer["engine"]["model"] = "qwen2.5-3b-instruct-q4_k_m"
    assert export.TEST_MODEL_CAVEAT not in export.to_markdown("Q", answer)
