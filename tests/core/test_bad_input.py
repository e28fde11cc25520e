"""Every file in corpus/bad: a typed one-line error or a clean open with warnings;
never a hang, never a traceback, nothing half-written in the library."""
from __future__ import annotations

import os

import pytest

from app.core.documents import read_errors as errors, ocr
from tests.support.library_rows import row_counts

# file → (expected error, or None when it opens; text that must be in the message/warnings)
BAD = {
    "zero-bytes.pdf": (errors.EmptyFile, "empty"),
    "not-a-pdf-docx.pdf": (errors.NotAPdf, "not a PDF"),
    "not-a-pdf-png.pdf": (errors.NotAPdf, "PNG"),
    "truncated.pdf": (errors.Damaged, "damaged"),
    "encrypted-user-password.pdf": (errors.PasswordRequired, "--password"),
    "pdfjs-encrypted-attachment.pdf": (errors.PasswordRequired, "encrypted"),
    # With Tesseract installed (scripts/setup.sh) scans are read by OCR (tests/core/test_ocr.py).
    "scanned-image-only-en.pdf": (None, "read by OCR") if ocr.available() else (errors.NoTextLayer, "no text layer"),
    "scanned-image-only-zh.pdf": (None, "read by OCR") if ocr.available() else (errors.NoTextLayer, "OCR"),
    "pdfjs-empty-protected.pdf": (errors.NoTextLayer, "pages are blank"),
    "corrupt-xref-and-bytes.pdf": (None, "repaired: content may be incomplete"),
    "pdfjs-xref-command-missing.pdf": (None, "repaired"),
    "encrypted-owner-password-only.pdf": (None, "restricted"),
    "pdfjs-tamreview-garbled-text.pdf": (None, "unreadable text layer"),
    "rotated-pages.pdf": (None, ""),
    "pdfjs-hello-world-rotated.pdf": (None, ""),
    "two-column-layout.pdf": (None, ""),
    "pdfjs-vertical-japanese.pdf": (None, ""),
    "pdfjs-arabic-cid-truetype.pdf": (None, ""),
}


def test_table_covers_the_bad_folder(corpus):
    assert sorted(BAD) == sorted(p.name for p in (corpus / "bad").iterdir())


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_file(corpus, lib, name):
    expected, text = BAD[name]
    if expected is None:
        info = lib.add(corpus / "bad" / name)
        assert info.page_count >= 1
        assert text in " ".join(info.warnings)
        return
    with pytest.raises(expected) as caught:
        lib.add(corpus / "bad" / name)
    message = str(caught.value)
    assert "\n" not in message and name in message and text.lower() in message.lower()
    assert sum(row_counts(lib.path)) == 0


def test_missing_file(lib, tmp_path):
    with pytest.raises(errors.FileMissing, match="not found"):
        lib.add(tmp_path / "nope.pdf")


def test_extension_is_not_trusted(corpus, lib, tmp_path):
    real = tmp_path / "contract.bin"
    real.write_bytes((corpus / "licenses" / "apache-2.0.pdf").read_bytes())
    assert lib.add(real).page_count == 4


def test_password_flow(corpus, lib):
    path = corpus / "bad" / "encrypted-user-password.pdf"
    with pytest.raises(errors.WrongPassword, match="wrong password"):
        lib.add(path, password="not-it")
    info = lib.add(path, password="corpus-user-2024")
    assert info.page_count == 5
    assert lib.search("confidential information", doc_ids=[info.id])
    assert lib.add(path).id == info.id          # known by hash: no password needed again


def test_garbled_pages_are_kept_but_not_indexed(corpus, lib):
    info = lib.add(corpus / "bad" / "pdfjs-tamreview-garbled-text.pdf")
    assert "pp. 2-22" in info.warnings[0]
    pages = {c.page_start for c in lib.chunks(info.id)} | {c.page_end for c in lib.chunks(info.id)}
    assert pages <= {1, 23}
    assert len(lib.pages(info.id)) == 23
    assert "Technology Acceptance" in lib.page_text(info.id, 1)


def test_rotated_pages_keep_their_numbers(corpus, lib):
    info = lib.add(corpus / "bad" / "rotated-pages.pdf")
    hits = lib.search("Grant of Patent License", doc_ids=[info.id], k=1)
    plain = lib.add(corpus / "licenses" / "apache-2.0.pdf")
    ref = lib.search("Grant of Patent License", doc_ids=[plain.id], k=1)
    assert hits[0].page == ref[0].page


def test_folder_and_unreadable_file_give_one_line_errors(lib, tmp_path):
    with pytest.raises(errors.NotAPdf, match="folder"):
        lib.add(tmp_path)
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(b"%PDF-1.7\n")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):         # root reads anything: nothing to test
            pytest.skip("running as root")
        with pytest.raises(errors.FileMissing, match="cannot be read"):
            lib.add(locked)
    finally:
        locked.chmod(0o600)


def test_a_fifo_and_a_device_are_not_a_pdf_and_do_not_hang(lib, tmp_path):
    """Issue 32, point 17: both were "file not found"."""
    fifo = tmp_path / "pipe.pdf"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        with pytest.raises(errors.NotAPdf) as info:
            lib.add(path)
        assert "not a regular file" in str(info.value) and "\n" not in str(info.value)


def test_blank_pages_say_blank_not_that_ocr_found_nothing(lib, tmp_path):
    """Issue 32, point 17: 20,000 blank pages said "OCR found no text" though no OCR ran."""
    import pymupdf
    blank = tmp_path / "blank.pdf"
    with pymupdf.open() as doc:
        for _ in range(2000):
            doc.new_page()
        doc.save(blank)
    with pytest.raises(errors.NoTextLayer) as info:
        lib.add(blank)
    assert str(info.value) == "blank.pdf: all 2000 pages are blank (no text and no images)"
