"""Chat panel: streamed JSON shown as words, Stop, markers, templates; Chinese text."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from app.core.answer.citations import Citation
from app.core.answer.streaming import partial_answer
from app.qt import templates


@pytest.mark.parametrize("raw, shown", [
    ('{"answer": "The term is one ye', "The term is one ye"),
    ('{"answer": "Line\\nnext \\"quoted\\" \\u4e2d', 'Line\nnext "quoted" 中'),
    ('{"answer": "half an escape \\', "half an escape "),
    ('{"answer": "done", "citations": [{"doc": 1', "done"),
    ('{"citations": []', ""),
    ("plain text answer", "plain text answer"),
])
def test_partial_answer(raw, shown):
    assert partial_answer(raw) == shown


def test_partial_answer_matches_json_once_complete():
    full = json.dumps({"answer": "甲方应在30日内付款 — “net 30” \\ done", "citations": []})
    for cut in range(len(full)):
        assert json.loads(full)["answer"].startswith(partial_answer(full[:cut]))
    assert partial_answer(full) == json.loads(full)["answer"]


@pytest.fixture
def chat(qtbot):
    from app.qt.chat_panel import ChatPanel
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.resize(500, 700)
    panel.show()
    return panel


def test_streaming_stop_and_markers(qtbot, chat):
    chat.set_ready(True)
    chat.ask_box.setPlainText("What is the term?")
    with qtbot.waitSignal(chat.sig_ask) as asked:
        qtbot.keyClick(chat.ask_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert asked.args == ["What is the term?"] and chat.ask_box.toPlainText() == ""
    chat.begin("What is the term?")
    assert chat.stop_button.isEnabled() and not chat.ask_button.isEnabled()
    for piece in ['{"answer": "One', ' year from the', ' Effective Date."']:
        chat.stream(piece)
    chat.render()
    assert "One year from the Effective Date." in chat.transcript.toPlainText()
    assert "{" not in chat.transcript.toPlainText()
    with qtbot.waitSignal(chat.sig_stop):
        chat.stop_button.click()
    chat.fail("Stopped.", stopped=True)
    assert chat.ask_button.isEnabled() and not chat.stop_button.isEnabled()
    cite = Citation(1, "a.pdf", 2, "one year", True)
    chat.begin("again")
    chat.finish("**Yes.**", [cite, cite], "retrieval · 1.0 s")
    text = chat.transcript.toPlainText()
    assert "[1] [2]" in text and "retrieval · 1.0 s" in text and "**" not in text
    with qtbot.waitSignal(chat.sig_marker_clicked) as marker:
        chat._on_anchor(type(chat.transcript.source())("cite:1:1"))
    assert marker.args == [1, 1]


def test_templates_load_in_both_languages_and_ask_in_one_click(qtbot, chat):
    found = templates.load()
    keys = {(t.key, t.lang) for t in found}
    for key in ("review_contract", "review_risks", "review_dates", "compare_clauses"):
        assert (key, "en") in keys and (key, "zh") in keys
    zh = templates.for_language(found, "zh", compare=False)
    assert zh and all(t.lang == "zh" and not t.key.startswith("compare") for t in zh)
    both = templates.for_language(found, "mixed", compare=True)
    assert {t.key for t in both} == {"review_contract", "review_risks", "review_dates", "review_summary", "compare_clauses"}
    contract = next(t for t in found if t.key == "review_contract" and t.lang == "en")
    assert "[to confirm]" in contract.prompt and "→" in contract.prompt
    chat.set_ready(True)
    chat.set_templates(templates.for_language(found, "en", compare=True))
    compare = next(t for t in found if t.key == "compare_clauses" and t.lang == "en")
    chat.ask_box.setPlainText("limitation of liability")
    with qtbot.waitSignal(chat.sig_ask) as asked:
        chat.ask_template(compare)
    assert "limitation of liability" in asked.args[0] and "document 1 | document 2 | difference" in asked.args[0]


def test_chinese_text_is_laid_out(qtbot, chat):
    """A CJK font must be installed (set-up: fonts-noto-cjk), or Chinese shows as empty boxes."""
    from PySide6.QtGui import QFontDatabase
    text = "出卖人应当按照约定的期限交付标的物。"
    chat.begin("合同的履行期限？")
    chat.finish(text, [], "whole-document")
    assert text in chat.transcript.toPlainText()
    families = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    assert families, "no font for Simplified Chinese: install fonts-noto-cjk"


def test_unfinished_json_answer_is_shown_as_words(qtbot, chat):
    chat.begin("How long?")
    chat.finish('{ "answer": "The NDA lasts for 12 months from the', [], "whole-document · 12.0 s")
    text = chat.transcript.toPlainText()
    assert "The NDA lasts for 12 months from the …" in text and "answer cut off" in text
    assert '"answer"' not in text


def test_compare_table_answer_renders_as_a_table(qtbot, chat):
    from app.qt.chat_panel import markdown_html
    table = ("| topic | document 1 | document 2 | difference |\n|---|---|---|---|\n"
             "| liability cap | 12 months of fees (p. 4) | 2× fees (p. 6) | B is higher |")
    assert "<table" in markdown_html(table)
    chat.begin("Compare clauses")
    chat.finish(table, [], "retrieval")
    assert "liability cap" in chat.transcript.toPlainText() and "|" not in chat.transcript.toPlainText()
