"""Issue 33.2: a restart reopens the scanned file the user opened (shown from its OCR copy),
with its OCR notice, its conversation and its one library row; the OCR copy never becomes a
document of its own, whichever way it is reached (session restore, recent files, the library)."""
from __future__ import annotations

import json
import shutil

from app.qt import workers
from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

SCAN = "bad/scanned-image-only-en.pdf"


def _scan_with_history(qtbot, window, library, tmp_path):
    from app.core.documents import ocr
    if not ocr.available():
        import pytest
        pytest.skip("Tesseract is not installed")
    scan = tmp_path / "signed-nda-scan.pdf"
    shutil.copy(corpus_path(SCAN), scan)
    info = open_and_wait(qtbot, window, scan, timeout=300000)    # OCR: seconds a page
    assert info is not None and "OCR" in window.pane_a.notice.text()
    answer = {"answer": "Two years.", "mode": "retrieval", "citations": [],
              "engine": {"name": "llamacpp", "model": "qwen2.5-3b-instruct-q4_k_m.gguf"},
              "timing": {"ttft_s": 1.5, "total_s": 4.25}}
    library.add_exchange([info.id], "How long does it last?", json.dumps(answer))
    return scan, info


def _new_window(qtbot, library):
    from app.qt.main_window import MainWindow
    again = MainWindow(library=library, start_engine=False)
    again.resize(1280, 860)
    qtbot.addWidget(again)
    again.show()
    return again


def _assert_scan_reopened(win, library, scan, info):
    from app.core import paths
    assert win.pane_a.title.text() == f"{scan.name} (OCR)"
    assert "OCR" in win.pane_a.notice.text()                      # its ingestion notice
    assert [i.id for i in win.doc_infos()] == [info.id]
    assert [e.question for e in win.chat.entries] == ["How long does it last?"]
    docs = library.documents()
    assert [d.id for d in docs] == [info.id]                       # no second row for the copy
    assert not any(str(paths.ocr_dir()) in (d.path + d.last_path) for d in docs)


def test_restart_reopens_the_scanned_original_with_its_conversation(qtbot, window, library, tmp_path):
    scan, info = _scan_with_history(qtbot, window, library, tmp_path)
    window.close()
    again = _new_window(qtbot, library)
    try:
        with qtbot.waitSignal(again.sig_documents_ready, timeout=60000):
            assert again.restore_session() == [str(scan.resolve())]
        _assert_scan_reopened(again, library, scan, info)
    finally:
        again.close()
        assert workers.wait_all(10000)


def test_the_ocr_copy_opened_directly_is_the_scanned_document(qtbot, window, library, tmp_path):
    """A session or recent list written by an older Pagewise holds the copy's path: opening it
    opens the original's row and conversation (no indexing of the copy)."""
    from app.core.documents import ocr
    scan, info = _scan_with_history(qtbot, window, library, tmp_path)
    open_and_wait(qtbot, window, ocr.copy_path(info.sha256))
    _assert_scan_reopened(window, library, scan, info)
