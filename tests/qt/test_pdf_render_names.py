"""The window opens a PDF whose name is not UTF-8, by its real name or by the library's \\xe9 form
of it; a password with non-UTF-8 bytes is a wrong password, never a TypeError; failures are one line."""
from __future__ import annotations

import os
import shutil

import pytest

from app.qt.pdf_render import PasswordNeeded, RenderError, open_document
from tests.support.corpus import corpus_path

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file names as bytes")


def test_a_latin1_name_opens_by_its_name_and_by_its_stored_form(tmp_path):
    real = os.path.join(os.fsencode(tmp_path), b"contrat-r\xe9sum\xe9.pdf")
    shutil.copy(corpus_path("contracts-en/bonterms-dpa-v1.0.pdf"), real)
    stored = os.fsencode(real).decode("utf-8", "backslashreplace")      # as the library keeps it
    for path in (os.fsdecode(real), stored):
        doc = open_document(path, None)
        try:
            assert doc.page_count == 5
        finally:
            doc.close()


def test_a_non_utf8_password_is_wrong_not_a_type_error(tmp_path):
    path = tmp_path / "locked.pdf"
    shutil.copy(corpus_path("bad/encrypted-user-password.pdf"), path)
    with pytest.raises(PasswordNeeded) as err:
        open_document(str(path), os.fsdecode(b"corpus-\xff\xfe"))
    assert err.value.wrong


def test_a_missing_latin1_name_is_one_printable_line(tmp_path):
    gone = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"parti-\xe9.pdf"))
    with pytest.raises(RenderError) as err:
        open_document(gone, None)
    text = str(err.value)
    assert "\n" not in text and "parti-\\xe9.pdf" in text
    text.encode("utf-8")              # printable: no lone surrogates


def test_the_start_page_lists_a_latin1_library_document_as_there(qtbot, tmp_path):
    from types import SimpleNamespace

    from PySide6.QtCore import Qt

    from app.qt.start_page import StartPage
    real = os.path.join(os.fsencode(tmp_path), b"contrat-r\xe9sum\xe9.pdf")
    shutil.copy(corpus_path("contracts-en/bonterms-dpa-v1.0.pdf"), real)
    stored = os.fsencode(real).decode("utf-8", "backslashreplace")
    page = StartPage()
    qtbot.addWidget(page)
    page.set_library([SimpleNamespace(path=stored, last_path=stored, title="DPA", page_count=5)])
    item = page.library.item(0)
    assert item.flags() & Qt.ItemFlag.ItemIsEnabled and "moved or deleted" not in item.text()
    with qtbot.waitSignal(page.sig_open_path) as opened:
        page._on_item(item)
    assert opened.args == [stored]


def test_the_window_opens_cites_and_highlights_a_latin1_named_pdf(qtbot, window, library, tmp_path):
    from PySide6.QtCore import Qt

    from app.core.answer.citations import verify
    from tests.qt.conftest import open_and_wait
    real = os.path.join(os.fsencode(tmp_path), b"contrat-r\xe9sum\xe9.pdf")
    shutil.copy(corpus_path("contracts-en/bonterms-psa-v1.2.pdf"), real)
    info = open_and_wait(qtbot, window, os.fsdecode(real), timeout=120000)   # as `pagewise gui FILE` gives it
    assert info is not None and info.page_count == 11 and "\\xe9" in info.path
    lines = [ln.strip() for ln in library.page_text(info.id, 7).splitlines()]
    cite = verify(info.id, info.path, 7, max(lines, key=len), {p.number: p.text for p in library.pages(info.id)})
    assert cite.verified
    window.citations.set_citations([cite])
    with qtbot.waitSignal(window.pane_a.sig_highlighted, timeout=10000) as lit:
        qtbot.mouseClick(window.citations.cards[0], Qt.MouseButton.LeftButton)
    page, rects = lit.args
    assert page == 7 and rects, "the quote was not highlighted"
