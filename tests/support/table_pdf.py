"""A one-page PDF with a ruled 3x3 table of fees, for the table tests (core and window)."""
from __future__ import annotations

import pymupdf

ROWS = [["Item", "Annual", "Monthly"], ["Fees", "$12,000", "$1,000"], ["Support", "$3,000", "$12,000"]]


def make_table_pdf(path) -> pymupdf.Rect:
    """A page of prose and a ruled 3x3 table; returns the rectangle of the Fees/Annual cell."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Schedule A. The fees below are payable in advance.", fontsize=11)
    x, y, h = [72, 200, 328, 456], 120, 24
    for r, row in enumerate(ROWS):
        for c, cell in enumerate(row):
            page.insert_text((x[c] + 6, y + r * h + 16), cell, fontsize=11)
    for r in range(len(ROWS) + 1):
        page.draw_line((x[0], y + r * h), (x[-1], y + r * h))
    for c in x:
        page.draw_line((c, y), (c, y + len(ROWS) * h))
    page.insert_text((72, 230), "Late payments bear interest at 1% a month.", fontsize=11)
    doc.save(path)
    doc.close()
    return pymupdf.Rect(x[1], y + h, x[2], y + 2 * h)
