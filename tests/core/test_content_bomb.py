"""Issue 32 defect 9: a page whose content stream inflates enormously (a decompression bomb) is
looked at for tables in bounded memory: table detection decoded the whole stream, twice (a 1 MB
file → 1 GiB of spaces → 944 MB of memory)."""
from __future__ import annotations

import tracemalloc

import pymupdf

from app.core.documents import tables


def bomb_page(tmp_path, megabytes: int):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "A page with a huge content stream.")
    xref = page.get_contents()[0]
    doc.update_stream(xref, doc.xref_stream(xref) + b" " * (megabytes << 20))   # stored deflated
    path = tmp_path / "bomb.pdf"
    doc.save(path)
    assert path.stat().st_size < megabytes * 4096                               # ~1,000× smaller
    return pymupdf.open(path)


def test_table_detection_on_a_decompression_bomb_stays_small(tmp_path):
    doc = bomb_page(tmp_path, 64)
    tracemalloc.start()
    try:
        assert tables.find(doc[0]) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"table detection held {peak >> 20} MB for a page of 64 MB of spaces"


def test_ruled_tables_are_still_found(corpus):
    with pymupdf.open(corpus / "contracts-en" / "bonterms-psa-v1.2.pdf") as doc:
        counted = [tables.path_ops(page) for page in doc]
    assert any(n >= 4 for n in counted)
