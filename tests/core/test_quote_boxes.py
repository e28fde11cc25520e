"""Highlights cover exactly the quote: character boxes merged per line, Chinese and English."""
import re

import pymupdf
from app.core.answer.citations import highlight_rects
from app.core.documents.quote_boxes import quote_boxes
from tests.support.corpus import CORPUS

LABOR = CORPUS / "contracts-zh" / "labor-contract-law.pdf"
CLOUD = CORPUS / "contracts-en" / "bonterms-cloud-terms-v1.0.pdf"


def _lit_text(page, boxes) -> str:
    """The page's characters whose centres fall inside the boxes, blanks removed."""
    out = []
    for block in page.get_text("rawdict")["blocks"]:
        for line in block.get("lines", ()):
            for span in line["spans"]:
                for ch in span["chars"]:
                    x0, y0, x1, y1 = ch["bbox"]
                    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                    if ch["c"].strip() and any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in boxes):
                        out.append(ch["c"])
    return "".join(out)


def _article(text: str, name: str, following: str) -> str:
    start = text.index(name)
    return text[start:text.index(following, start)]


def test_a_chinese_article_is_lit_whole_and_nothing_of_its_neighbour():
    with pymupdf.open(LABOR) as doc:
        page = next(p for p in doc if "第三十七条" in p.get_text() and "第三十八条" in p.get_text())
        article = re.sub(r"\s+", "", _article(page.get_text(), "第三十七条", "第三十八条"))
        boxes = quote_boxes(page, article)
        assert boxes, "the article was not found on its page"
        assert _lit_text(page, boxes) == article
        assert len(boxes) >= 2            # one box per printed line, merged


def test_an_english_sentence_gets_one_box_per_line_without_gaps():
    quote = "Late payments are subject to a charge of 1.5% per month"
    with pymupdf.open(CLOUD) as doc:
        page = doc[1]
        words = page.search_for(quote)
        boxes = quote_boxes(page, quote)
        assert boxes and len(boxes) <= len(words)
        assert re.sub(r"\s+", "", quote) in _lit_text(page, boxes)
    assert highlight_rects(str(CLOUD), 2, quote) == boxes


def test_a_quote_not_on_the_page_lights_nothing():
    with pymupdf.open(CLOUD) as doc:
        assert quote_boxes(doc[1], "a sentence that this page does not print anywhere") == []
