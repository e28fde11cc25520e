"""Window behaviour around the documents: the too-long notice (real plan for this machine),
engine start failure with its log tail, uncaught exceptions, drag and drop, shortcuts."""
from __future__ import annotations

import subprocess
import sys

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QMessageBox

from app.qt import context_notice
from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path


def visible_boxes(win) -> list[QMessageBox]:
    return [b for b in win.findChildren(QMessageBox) if b.isVisible()]


def test_too_long_line_wording():
    assert context_notice.too_long_line(212, 70_000, 32768) == (
        "212 pages ≈ 70K tokens > 32K context: answers use the most relevant passages")
    assert context_notice.too_long_line(5, 3_000, 32768) == ""


def test_long_document_is_flagged_with_this_machines_plan(qtbot, window, tmp_path):
    from app.core.models import catalogue as models
    from app.core.plan import hardware, planner
    big = tmp_path / "large-300.pdf"
    subprocess.run([sys.executable, str(corpus_path("make_large_pdf.py")), "--pages", "300", "--out", str(big)],
                   check=True, capture_output=True)
    info = open_and_wait(qtbot, window, big, timeout=180_000)
    assert info.page_count == 300
    from tests.support.planned import planned_service
    window.engine.service = planned_service(
        planner.make_plan(hardware.probe(), models.load_catalogue(), available=models.is_available))
    window._update_notices()
    context = window.engine.context_tokens()
    qtbot.waitUntil(lambda: "most relevant passages" in window.pane_a.notice.text(), timeout=30_000)
    assert window.pane_a.notice.text().startswith("ℹ 300 pages ≈ ")
    assert f"> {context // 1024}K context" in window.pane_a.notice.text()
    small = open_and_wait(qtbot, window, corpus_path("contracts-en/common-paper-baa.pdf"))
    assert small.page_count == 4
    # the small document's token count is the last thing that sets the notice: once its result
    # is in (the callback runs on this thread and stores it first), the notice is final
    qtbot.waitUntil(lambda: small.sha256 in context_notice._TOKENS, timeout=30_000)
    assert "relevant passages" not in window.pane_a.notice.text()


def test_engine_start_failure_shows_one_line_and_the_log_tail(qtbot, window):
    from app.qt.engine_controller import EngineController
    from app.worker.engine_errors import OutOfMemory

    class FailingStart:          # fault injection: the engine process dies while loading
        plan = None
        running = False

        def __init__(self, on_status):
            self.on_status = on_status

        def start(self, *planned):
            self.on_status("loading", "loading weights")
            raise OutOfMemory("out of memory while loading the model (needs 9.1 GB, 7.8 GB free)",
                              tail=["llama_model_load: loading tensors", "ggml_backend: failed to allocate 9.1 GB"])

        def stop(self):
            pass

        def metrics(self):
            return {}

    engine = EngineController(runtime_factory=FailingStart, parent=window)
    window.engine = engine
    window._connect_engine()
    with qtbot.waitSignal(engine.sig_failed, timeout=10_000):
        engine.start()
    box = visible_boxes(window)[-1]
    assert box.text() == "out of memory while loading the model (needs 9.1 GB, 7.8 GB free)"
    assert "failed to allocate 9.1 GB" in box.detailedText()
    assert "failed" in window.status.state_label.text()
    assert "engine failed" in window.chat.hint.text()


def test_uncaught_exception_reaches_show_error(qtbot, window):
    from app.qt import error_dialog as errors
    errors.install_hooks(window)
    try:
        raise KeyError("page 99")
    except KeyError:
        sys.excepthook(*sys.exc_info())
    qtbot.waitUntil(lambda: bool(visible_boxes(window)), timeout=5000)
    text = visible_boxes(window)[-1].text()
    assert "KeyError" in text and "page 99" in text and "\n" not in text


def test_drop_a_pdf_opens_it(qtbot, window):
    path = corpus_path("licenses/apache-2.0.pdf")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(200, 200), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.sig_documents_ready, timeout=30_000):
        window.dropEvent(event)
    assert window.docs[window.pane_a].page_count == 4


def test_shortcuts_are_bound(window):
    keys = {name: a.shortcut().toString() for name, a in window.actions_by_name.items()}
    assert keys["open"] == "Ctrl+O" and keys["next_citation"] == "F8" and keys["prev_citation"] == "Shift+F8"
    assert keys["zoom_in"] == "Ctrl++" and keys["zoom_out"] == "Ctrl+-" and keys["stop"] == "Esc"
    assert keys["focus_ask"] == "Ctrl+L" and keys["find"] == "Ctrl+F"
