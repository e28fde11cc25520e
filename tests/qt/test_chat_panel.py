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
    with qtbot.waitSignal(chat.sig_compare) as asked:      # evidence first: the topics, never the prompt
        chat.ask_template(compare)
    assert asked.args[0] == "limitation of liability"


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


def test_evidence_leads_the_entry_and_stays_in_view_under_the_answer(qtbot, chat):
    """The cards of the question just asked are scrolled into view (below earlier answers) and
    stay there when the model's text arrives; an unbacked text is greyed under them."""
    from app.core.answer.evidence import Evidence, EvidenceCard
    from app.qt.chat_panel import Entry
    from app.qt.evidence_view import NOT_BACKED

    def evidence(question):
        cards = [EvidenceCard(1, "a.pdf", 1, p, "the quoted words of the clause " * 6, "Section 9", 1.0, 0.5)
                 for p in range(1, 6)]
        return Evidence(question, cards, True, 80.0)

    chat.resize(500, 400)
    chat.set_history([Entry("earlier question", "earlier answer", state="done", evidence=evidence("earlier question"))])
    chat.begin("Which law governs?")
    chat.show_evidence(evidence("Which law governs?"))
    bar = chat.transcript.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() > 0, timeout=2000)
    shown = bar.value()
    chat.finish("the model's long text " * 40, [], "retrieval", headline="evidence")
    assert bar.value() == shown
    text = chat.transcript.toPlainText()
    assert text.index("Which law governs?") < text.rindex("[E5]") < text.index(NOT_BACKED)
