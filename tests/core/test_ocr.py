"""OCR of scanned pages (Tesseract): text in the library, a searchable copy for the viewer,
highlights on the scanned words, reopening without OCR again."""
from __future__ import annotations

import time

import pymupdf
import pytest

from app.core.answer.citations import highlight_rects, verify
from app.core.documents import ocr
from benchmarks.ocr import char_accuracy, scanned_copy
from tests.support.strict import unavailable

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def tesseract():
    """scripts/setup.sh installs Tesseract: without it these fail under ./run-tests and CI."""
    if not ocr.available():
        unavailable("Tesseract is not installed (scripts/setup.sh)")


def test_scanned_english_contract_is_read_and_highlighted(corpus, lib, monkeypatch):
    path = corpus / "bad" / "scanned-image-only-en.pdf"
    seen = []
    info = lib.add(path, progress=lambda d, t: seen.append((d, t)))
    assert any("read by OCR" in w for w in info.warnings)
    assert seen[-2:] == [(1, 2), (2, 2)]          # the OCR pass reports per page too
    pages = {p.number: p.text for p in lib.pages(info.id)}
    with pymupdf.open(corpus / "contracts-en" / "common-paper-mnda.pdf") as original:
        truth = [original[2].get_text(), original[3].get_text()]   # the scan is pp. 3-4
    assert char_accuracy(truth[0], pages[1]) > 0.9
    assert char_accuracy(truth[1], pages[2]) > 0.9
    quote = "use Confidential Information solely for the Purpose"
    assert verify(info.id, path.name, 1, quote, pages).verified
    copy = ocr.searchable_copy(info.sha256)
    assert copy is not None
    rects = highlight_rects(str(copy), 1, quote)
    assert rects and all(0 < r[1] < 792 for r in rects)
    assert highlight_rects(str(path), 1, quote) == []      # the original has no text to find

    # Reopening: the library has the text; Tesseract is not run again.
    monkeypatch.setattr(ocr, "recognise", lambda *a, **k: pytest.fail("OCR ran again"))
    start = time.perf_counter()
    again = lib.add(path)
    assert again.id == info.id and time.perf_counter() - start < 1.0


def test_scanned_chinese_law_is_read(corpus, lib):
    info = lib.add(corpus / "bad" / "scanned-image-only-zh.pdf")
    assert info.lang == "zh"
    text = lib.pages(info.id)[0].text
    with pymupdf.open(corpus / "contracts-zh" / "pipl.pdf") as original:
        truth = original[0].get_text()
    assert char_accuracy(truth, text) > 0.85
    assert "个人信息" in text
    assert lib.search("个人信息权益", doc_ids=[info.id])


def test_only_pages_without_text_are_ocred(corpus, tmp_path, lib):
    """A text PDF with one scanned page in the middle: only that page goes to Tesseract."""
    scan = tmp_path / "scan.pdf"
    scanned_copy(corpus / "licenses" / "apache-2.0.pdf", 2, scan)
    mixed = pymupdf.open(corpus / "licenses" / "apache-2.0.pdf")
    with pymupdf.open(scan) as one:
        mixed.delete_page(1)
        mixed.insert_pdf(one, start_at=1)
    mixed.save(tmp_path / "mixed.pdf")
    page_count = mixed.page_count
    mixed.close()
    info = lib.add(tmp_path / "mixed.pdf")
    assert [w for w in info.warnings if "read by OCR" in w] == \
        [f"1 of {page_count} pages read by OCR (pp. 2); their text may have recognition errors"]
    assert "Derivative Works" in lib.page_text(info.id, 2)


def test_a_missing_engine_is_a_warning_not_silence(corpus, lib, monkeypatch):
    monkeypatch.setattr(ocr, "available", lambda: False)
    from app.core.documents.read_errors import NoTextLayer
    with pytest.raises(NoTextLayer, match="OCR is not installed"):
        lib.add(corpus / "bad" / "scanned-image-only-zh.pdf")
