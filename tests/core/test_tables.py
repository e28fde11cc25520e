"""Tables kept as structure: cells with their row and column headers, as extra chunks;
a cell quote highlights its own cell."""
from __future__ import annotations

import pymupdf
import pytest

from app.core.documents import tables
from app.core.documents.ingest import ingest
from app.core.documents.pdf import read_file
from tests.support.table_pdf import make_table_pdf


def table_chunks(result):
    return [p.chunk for p in result.pieces if p.chunk.text.startswith(tables.MARKER)]


def test_a_known_table_becomes_cells_with_headers(tmp_path):
    make_table_pdf(tmp_path / "fees.pdf")
    result = ingest(read_file(tmp_path / "fees.pdf"))
    [chunk] = table_chunks(result)
    assert chunk.text.splitlines() == ["[table] p. 1", "Fees | Annual = $12,000", "Fees | Monthly = $1,000",
                                       "Support | Annual = $3,000", "Support | Monthly = $12,000"]
    # Additional: the running-text chunks still hold the whole page as before.
    prose = [p.chunk.text for p in result.pieces if not p.chunk.text.startswith(tables.MARKER)]
    assert "Late payments bear interest" in "\n".join(prose) and "$12,000" in "\n".join(prose)
    assert chunk.ordinal == len(result.pieces) - 1


def test_the_table_chunk_is_found_and_its_cell_highlighted(tmp_path, lib):
    cell = make_table_pdf(tmp_path / "fees.pdf")
    info = lib.add(tmp_path / "fees.pdf")
    hits = lib.search("annual fees", doc_ids=[info.id], k=3)
    assert any("Fees | Annual = $12,000" in h.text for h in hits)
    with pymupdf.open(tmp_path / "fees.pdf") as doc:
        [rect] = tables.cell_rects(doc[0], "Fees | Annual = $12,000")
        assert cell.contains(rect)                    # not the $12,000 of Support/Monthly
        [other] = tables.cell_rects(doc[0], "Support | Monthly = $12,000")
        assert not cell.intersects(other)
        assert tables.cell_rects(doc[0], "The fees below are payable") == []   # not a cell quote


def test_control_characters_are_cleaned():
    assert tables.clean("Fees\x07\x00 due\nnow\ufffd") == "Fees due now"
    assert tables.cell_lines([["", "Annual"], ["Fees\x0b", "$1\x02"]], ["", "Annual"], False) == \
        ["Fees | Annual = $1"]


def test_corpus_cover_page_tables(corpus):
    """The Common Paper MNDA cover page (signature block) and the Bonterms DPA schedule list."""
    mnda = table_chunks(ingest(read_file(corpus / "contracts-en" / "common-paper-mnda.pdf")))
    assert any(c.page_start == 1 and "Signature" in c.text for c in mnda)
    dpa = table_chunks(ingest(read_file(corpus / "contracts-en" / "bonterms-dpa-v1.0.pdf")))
    [schedules] = [c for c in dpa if c.page_start == 2]
    assert "Schedule 2 = Technical and Organizational Measures" in schedules.text.splitlines()


@pytest.mark.parametrize("rel", ["licenses/apache-2.0.pdf", "contracts-zh/pipl.pdf"])
def test_pages_without_rules_are_not_searched_for_tables(corpus, rel):
    with pymupdf.open(corpus / rel) as doc:
        assert not any(tables.ruled_area(page) is not None for page in doc)


def test_a_table_cell_quote_is_offered_verified_and_highlighted_in_its_cell(tmp_path, lib):
    """The prompt offers each cell line as a quote; a cited cell is verified against the
    page (row header, column header and the value standing alone) and highlighted in its cell."""
    from app.core.answer import citations
    cell = make_table_pdf(tmp_path / "fees.pdf")
    info = lib.add(tmp_path / "fees.pdf")
    [chunk] = [h for h in lib.search("annual fees", doc_ids=[info.id], k=5) if h.text.startswith(tables.MARKER)]
    pages = {1: lib.page_text(info.id, 1)}
    context = f"[doc 1, p. 1]\n{chunk.text}\n[doc 1, p. 1]\nSchedule A. The fees below are payable in advance."
    offered = citations.quotable(context)
    assert "Fees | Annual = $12,000" in offered and "Support | Monthly = $12,000" in offered
    assert not any("[table]" in q or "$12,000 Fees" in q for q in offered)    # no run-on of cells

    good = citations.verify(info.id, "fees.pdf", 1, "Fees | Annual = $12,000", pages)
    assert good.verified and "table cell" in good.note
    assert not citations.verify(info.id, "fees.pdf", 1, "Fees | Annual = $2,000", pages).verified
    assert not citations.verify(info.id, "fees.pdf", 1, "Fees | Quarterly = $12,000", pages).verified
    [rect] = citations.highlight_rects(str(tmp_path / "fees.pdf"), 1, good.quote)
    assert cell.contains(pymupdf.Rect(rect))
