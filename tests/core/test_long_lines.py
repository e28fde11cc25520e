"""Issue 32 defect 10: a page of one enormous line (no sentence breaks) is cut into chunks of at
most MAX_SIZE, as any long clause is (it was stored as one 52 MB chunk)."""
from __future__ import annotations

import pymupdf

from app.core.documents.chunking import MAX_SIZE, make_chunks, size


def test_one_long_line_is_split_at_max_size():
    line = "lorem ipsum dolor " * 20000 + "x" * 10000            # 370 KB: words, then no space at all
    pieces = make_chunks([["Heading", line], ["合同" * 3000]])
    assert all(size(p.chunk.text) <= MAX_SIZE for p in pieces)
    text = "".join(p.chunk.text.replace("\n", "").replace(" ", "") for p in pieces)
    assert "x" * 10000 in text and text.count("lorem") >= 20000       # nothing lost (overlap may repeat)


def test_a_pdf_page_of_one_long_line_is_indexed_in_chunks(lib, tmp_path):
    pdf = tmp_path / "one-line.pdf"
    doc = pymupdf.open()
    page = doc.new_page(width=14400, height=200)               # the widest page PDF allows
    page.insert_text((10, 100), "governing law of the state " * 8000, fontsize=0.12)   # 216 KB on one line
    doc.save(pdf)
    info = lib.add(pdf)
    chunks = lib.chunks(info.id)
    assert len(chunks) > 100 and max(size(c.text) for c in chunks) <= MAX_SIZE
