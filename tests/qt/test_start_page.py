"""The start page (what the window shows with no document) and the session coming back:
recent documents and the library open on a click, the sample contract opens, the engine and
model are said in plain words, the 135M test model is flagged, the last documents reopen."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt

from app.core.plan.types import Plan
from app.qt import start_page
from tests.support.corpus import corpus_path

SAMPLE = start_page.SAMPLE


def cpu_plan(model_id: str) -> Plan:
    return Plan(engine="llamacpp", model_id=model_id, weights_format="gguf", max_model_len=8192,
                hardware="no NVIDIA GPU")


def texts(widget) -> list[str]:
    return [widget.item(i).text() for i in range(widget.count())]


def test_no_document_shows_the_start_page_and_a_document_replaces_it(qtbot, window):
    assert window.doc_stack.currentWidget() is window.start_page
    assert window.start_page.isVisible() and not window.pane_a.isVisible()
    assert texts(window.start_page.recent) == ["Documents you open appear here."]
    assert SAMPLE.is_file() and window.start_page.sample_button.isEnabled()
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30000):
        qtbot.mouseClick(window.start_page.sample_button, Qt.MouseButton.LeftButton)
    assert window.pane_a.isVisible() and not window.start_page.isVisible()
    assert window.doc_infos()[0].page_count == 5
    window.set_compare(False)                    # a document is still open: no start page
    assert window.doc_stack.currentWidget() is not window.start_page


def test_recent_documents_and_the_library_are_listed_and_open_on_a_click(qtbot, window, library, tmp_path):
    nda = corpus_path("contracts-en/bonterms-psa-v1.2.pdf")
    library.add(SAMPLE)
    gone = tmp_path / "moved.pdf"
    gone.write_bytes(SAMPLE.read_bytes())
    from app.qt import window_state as gui_settings
    gui_settings.add_recent(window.settings, str(gone))
    gui_settings.add_recent(window.settings, str(nda))
    gone.unlink()
    window.set_compare(False)                   # refreshes the idle start page
    page = window.start_page
    assert texts(page.recent) == [nda.name, "moved.pdf  (moved or deleted)"]
    assert not page.recent.item(1).flags() & Qt.ItemFlag.ItemIsEnabled
    [entry] = texts(page.library)
    assert entry.endswith(" — 5 pages") and page.library.item(0).data(start_page.PATH_ROLE) == str(SAMPLE)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30000):
        page.recent.itemClicked.emit(page.recent.item(0))
    assert window.pane_a.path == str(nda)


def test_engine_and_model_in_plain_words_and_the_test_model_notice(qtbot, window):
    page = window.start_page
    embedded = start_page.embedded_chat_model()
    assert embedded is not None and embedded.params_b < 0.2
    assert page.engine_label.text() == "Starting the answer engine…"
    assert page.showing_test_model_notice()        # the default model until the plan says otherwise
    window._on_engine_ready(cpu_plan(embedded.id))
    words = page.engine_label.text()
    assert words.startswith(f"Answers come from {embedded.name}, run by llama.cpp")
    assert "processor (CPU)" in words and "8K tokens" in words
    notice = page.test_model_notice.findChild(type(page.engine_label)).text()
    assert "small test model (135M)" in notice and "real work needs a real model" in notice
    window._on_engine_state("calibrated", "reads 900 prompt tokens/s")    # later states keep the words
    assert page.engine_label.text() == words
    window._on_engine_ready(cpu_plan("qwen2.5-3b-instruct-q4_k_m"))
    assert not page.showing_test_model_notice()
    assert "Qwen2.5 3B Instruct" in page.engine_label.text()
    window._on_engine_state("failed", "model file missing: /x.gguf")
    assert page.engine_label.text() == "The answer engine did not start: model file missing: /x.gguf"


def test_get_a_model_is_disabled_without_a_model_manager(qtbot, monkeypatch):
    monkeypatch.setattr(start_page, "MODEL_MANAGER", "app.qt.no_such_model_manager")
    page = start_page.StartPage()
    qtbot.addWidget(page)
    assert not page.get_model_button.isEnabled()
    assert "pagewise models pull" in page.get_model_button.toolTip()


def test_get_a_model_opens_the_model_manager_module(qtbot, monkeypatch, tmp_path):
    (tmp_path / "pw_model_manager_probe.py").write_text(
        "opened = []\ndef open_model_manager(parent):\n    opened.append(parent)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(start_page, "MODEL_MANAGER", "pw_model_manager_probe")
    page = start_page.StartPage()
    qtbot.addWidget(page)
    assert page.get_model_button.isEnabled()
    qtbot.mouseClick(page.get_model_button, Qt.MouseButton.LeftButton)
    assert sys.modules["pw_model_manager_probe"].opened == [page.window()]


@pytest.mark.parametrize("compare", [False, True])
def test_reopening_restores_the_documents_open_at_the_last_close(qtbot, library, compare):
    from app.qt import error_dialog as errors, workers
    from app.qt.main_window import MainWindow
    psa = corpus_path("contracts-en/bonterms-psa-v1.2.pdf")
    first = MainWindow(library=library, start_engine=False)
    qtbot.addWidget(first)
    first.show()
    with qtbot.waitSignal(first.sig_documents_ready, timeout=30000):
        first.open_files([str(SAMPLE), str(psa)] if compare else [str(SAMPLE)])
    first.close()
    assert workers.wait_all(60000)
    second = MainWindow(library=library, start_engine=False)
    qtbot.addWidget(second)
    second.show()
    try:
        with qtbot.waitSignal(second.sig_documents_ready, timeout=30000):
            restored = second.restore_session()
        assert restored == ([str(SAMPLE), str(psa)] if compare else [str(SAMPLE)])
        assert second.compare_mode() is compare
        assert [i.page_count for i in second.doc_infos()] == ([5, 11] if compare else [5])
        assert second.doc_stack.currentWidget() is not second.start_page
    finally:
        second.close()
        errors.uninstall_hooks()
        assert workers.wait_all(60000)   # background indexing (search vectors) on a busy machine


def test_nothing_to_restore_keeps_the_start_page(qtbot, window, tmp_path):
    from app.qt import window_state as gui_settings
    gui_settings.set_open_documents(window.settings, [str(tmp_path / "deleted.pdf")])
    assert window.restore_session() == []
    assert window.doc_stack.currentWidget() is window.start_page


def test_the_plan_shows_as_soon_as_the_engine_says_ready(qtbot, window):
    """sig_ready waits for the runtime's start() to return (after calibration): the words come
    from the runtime's plan when its "ready" state arrives."""
    from tests.support.planned import planned_service
    embedded = start_page.embedded_chat_model()
    held, window.engine.service = window.engine.service, planned_service(cpu_plan(embedded.id))
    try:
        window._on_engine_state("ready", "no NVIDIA GPU → llama.cpp on the CPU")
        assert window.start_page.engine_label.text().startswith(f"Answers come from {embedded.name}")
    finally:
        window.engine.service = held
