"""A PDF whose name is not UTF-8 (Latin-1 bytes) opens, cites and highlights after it is indexed.

The library stores such a name with its odd bytes written \\xe9 (SQLite text is UTF-8). Before,
the highlight opened the name as it reads (`no such file`), or MuPDF took the real name as UTF-8
(`Failed to open file`), and a password typed on a Latin-1 terminal reached MuPDF raw
(`TypeError: in method 'fz_authenticate_password'`).
"""
from __future__ import annotations

import os
import shutil

import pymupdf
import pytest

from app.core.answer.citations import highlight_rects
from app.core.documents.pdf import on_disk, read_file
from app.core.library.library import Library
from tests.support.corpus import corpus_path

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file names as bytes")

QUOTE = "Data Protection Addendum"


def latin1_copy(tmp_path, rel: str = "contracts-en/bonterms-dpa-v1.0.pdf") -> str:
    target = os.path.join(os.fsencode(tmp_path), b"contrat-r\xe9sum\xe9.pdf")
    shutil.copy(corpus_path(rel), target)
    return os.fsdecode(target)           # as Python hands it over: lone surrogates


def test_the_stored_path_of_a_latin1_name_opens_and_highlights(tmp_path):
    real = latin1_copy(tmp_path)
    lib = Library(tmp_path / "library.sqlite")
    try:
        info = lib.add(real)
        stored = info.path
    finally:
        lib.close()
    assert "\\xe9" in stored and not os.path.exists(stored)          # text, not the file's name
    assert on_disk(stored) == on_disk(real)
    assert read_file(stored).sha256 == read_file(real).sha256
    for path in (stored, real):
        rects = highlight_rects(path, 1, QUOTE)
        assert rects, f"no highlight for {path!r}"


def test_a_latin1_password_is_tried_as_latin1_text_not_raised(tmp_path):
    plain = pymupdf.open(corpus_path("contracts-en/bonterms-dpa-v1.0.pdf"))
    target = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"verrouill\xe9.pdf"))
    with open(target, "wb") as out:
        out.write(plain.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="cl\xe9", owner_pw="owner"))
    typed = os.fsdecode(b"cl\xe9")          # a Latin-1 terminal: b"cl\xe9" reaches Python as "cl\udce9"
    assert highlight_rects(target, 1, QUOTE, password=typed)
    assert highlight_rects(target, 1, QUOTE, password=os.fsdecode(b"\xff\xfe")) == []


def test_a_stored_name_that_names_no_file_stays_as_it_is(tmp_path):
    missing = str(tmp_path / "gone-r\\xe9sum\\xe9.pdf")
    assert str(on_disk(missing)) == missing
    with pytest.raises(Exception, match="no such file"):
        highlight_rects(missing, 1, QUOTE)


def test_escapes_that_the_library_never_writes_name_no_other_file(tmp_path):
    (tmp_path / "aA.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "caf\u00e9.pdf").write_bytes(b"%PDF-1.4")          # a UTF-8 name
    for typed in ("a\\x41.pdf", "caf\\xc3\\xa9.pdf"):          # ASCII, and UTF-8 written as escapes
        assert on_disk(tmp_path / typed) == tmp_path / typed
