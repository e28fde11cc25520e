"""Issue 32 defect 11: a page MuPDF cannot load (a cycle in the page tree) or cannot render for OCR
(a 10,000-point image page, beyond MuPDF's pixel limit at 300 dpi) is refused on its own; the
document's other pages are indexed (the whole document was refused as an internal error)."""
from __future__ import annotations

import pymupdf

from app.core.documents import ocr


def cyclic_page_tree(path):
    doc = pymupdf.open()
    for n in (1, 2):
        doc.new_page().insert_text((72, 72), f"Page {n}: the parties agree to the terms of this agreement.")
    doc.save(path)
    doc = pymupdf.open(path)
    root = int(doc.xref_get_key(doc.pdf_catalog(), "Pages")[1].split()[0])
    second = int(doc.xref_get_key(root, "Kids")[1].strip("[]").split()[3])
    # the second kid becomes a page-tree node whose only kid is itself
    doc.update_object(second, f"<< /Type /Pages /Kids [{second} 0 R] /Count 1 /Parent {root} 0 R >>")
    doc.save(path.with_name("cycle.pdf"))
    return path.with_name("cycle.pdf")


def test_a_cycle_in_the_page_tree_loses_that_page_only(lib, tmp_path):
    pdf = cyclic_page_tree(tmp_path / "two.pdf")
    info = lib.add(pdf)
    assert "the parties agree" in lib.page_text(info.id, 1)
    assert info.warnings


def test_a_huge_image_page_is_rendered_within_the_pixel_limit(tmp_path):
    small = pymupdf.open()
    small.new_page(width=300, height=100).insert_text((10, 50), "Governing law: Delaware", fontsize=20)
    png = small[0].get_pixmap(dpi=100).tobytes("png")
    doc = pymupdf.open()
    page = doc.new_page(width=10000, height=10000)       # 139 inches: 1.7 G pixels at 300 dpi
    page.insert_image(pymupdf.Rect(0, 0, 3000, 1000), stream=png)
    assert ocr.render_dpi(page.rect) * page.rect.width / 72 < 7000
    if ocr.available():
        read = ocr.make_searchable(doc, [1], "huge-page-test")[1]
        assert len(read) == 1 and "Delaware" in " ".join(line.text for line in read[0].lines)
