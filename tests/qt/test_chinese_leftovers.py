"""The 中文 interface leaves no English in what an answer says of its reading ("Read 1 of 2
passages: the machine was slower…") nor in Qt's own file dialog ("Look in"); an export says
where it went, in the interface's language."""
from __future__ import annotations

from app.core.answer import passage_cut
from tests.qt.conftest import open_and_wait
from tests.qt.test_interface_language import chinese  # noqa: F401 - the fixture
from tests.support.corpus import corpus_path
from tests.support.interface_walk import english_left, report


def test_the_passages_warning_is_chinese(chinese, qtbot, window):  # noqa: F811
    for planned in (40.0, None):
        warning = passage_cut.warning({"read": 1, "of": 2, "measured_tps": 12.3}, planned)
        assert warning.startswith("Read 1 of 2 passages")
        window.chat.begin("问题")
        window.chat.finish("", [], f"retrieval · 3.0 s\n{warning}")
        shown = window.chat.transcript.toPlainText()
        assert "只读了 2 段中的 1 段" in shown and not english_left(shown.split("只读了")[-1]), shown


def test_the_model_found_nothing_warning_is_chinese(chinese, qtbot, window):  # noqa: F811
    """The model's "not stated" over cards on topic is said as the model's view, in Chinese too."""
    warning = ("The model found no answer in the closest passages (p. 3, p. 4), which the search found on "
               "this question's topic: read them.")
    window.chat.begin("问题")
    window.chat.finish("", [], f"retrieval · 3.0 s\n{warning}")
    shown = window.chat.transcript.toPlainText()
    assert "模型在最接近的段落（第 3 页，第 4 页）中没有找到答案" in shown, shown


def test_the_file_dialog_is_chinese(chinese, qtbot, window):  # noqa: F811
    from PySide6.QtWidgets import QFileDialog
    dialog = QFileDialog(window, "Open PDF", str(corpus_path("contracts-en")), "PDF documents (*.pdf)")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)     # Qt's own widgets, as on Linux
    dialog.show()
    try:
        qtbot.waitUntil(lambda: not report(dialog), timeout=3_000)
    finally:
        dialog.close()


def test_an_export_says_where_it_went(chinese, qtbot, window, tmp_path):  # noqa: F811
    from app.core.answer.qa import Answer
    info = open_and_wait(qtbot, window, corpus_path("contracts-en/common-paper-mnda.pdf"))
    window.chat.begin("多久？")
    window._asked_ids = [info.id]
    window.engine.sig_answer.emit("多久？", Answer("一年。", [], "whole-document", False))
    saved = window.answer_export.save_markdown(str(tmp_path / "x.md"))
    assert saved.is_file()
    said = window.statusBar().currentMessage()
    assert said == f"已保存 x.md（位于 {tmp_path}）", said
