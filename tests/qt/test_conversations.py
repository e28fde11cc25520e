"""Issue 33, conversations: a list per document set above the transcript, each restored with its
timings and model after a restart, "New conversation" starting empty (the engine's next prompt
carries nothing of the old one), and the whole conversation exported with its model, support
flags, warnings, evidence and pages."""
from __future__ import annotations

import json

import pymupdf

from app.core.answer import conversation as contexts
from app.qt import workers
from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

NDA = "contracts-en/common-paper-mnda.pdf"
MODEL = "/models/Qwen2.5-3B-Instruct-Q4_K_M.gguf"
WARNING = "Text that reads like instructions to the model was found on p. 2; it was not obeyed."


def _answer(text: str, ttft: float, total: float, doc: str, support: str = "supports") -> str:
    return json.dumps({
        "answer": text, "mode": "retrieval", "headline": "answer", "warnings": [WARNING],
        "engine": {"name": "llama.cpp", "model": MODEL, "context": 8192, "summary": ""},
        "timing": {"ttft_s": ttft, "total_s": total, "estimated_ttft_s": None},
        "citations": [{"doc": doc, "page": 3, "quote": "expires at the end of the MNDA Term",
                       "verified": True, "support": support}],
        "evidence": {"addressed": True, "ms": 12.0, "cards": [
            {"doc": doc, "page": 3, "quote": "the MNDA Term", "clause": "5", "score": 1.0}]}})


def _two_conversations(library, info):
    doc = info.path
    library.add_exchange([info.id], "How long does it last?", _answer("One year.", 1.5, 4.25, doc, "unclear"))
    library.add_exchange([info.id], "Can it be renewed?", _answer("Yes.", 0.5, 2.0, doc))
    first = library.exchanges([info.id])[0].conversation_id
    second = library.new_conversation([info.id])
    library.add_exchange([info.id], "Who are the parties?", _answer("Two.", 2.5, 6.0, doc), conversation=second)
    return first, second


def _restarted(qtbot, window, library):
    from app.qt.main_window import MainWindow
    window.close()
    again = MainWindow(library=library, start_engine=False)
    again.resize(1280, 860)
    qtbot.addWidget(again)
    again.show()
    with qtbot.waitSignal(again.sig_documents_ready, timeout=30000):
        again.restore_session()
    return again


def test_conversations_are_listed_and_restored_with_their_timings(qtbot, window, library):
    info = open_and_wait(qtbot, window, corpus_path(NDA))
    first, second = _two_conversations(library, info)
    again = _restarted(qtbot, window, library)
    try:
        bar = again.chat.conversations
        assert bar.ids() == [second, first] and bar.current() == second     # the last used on screen
        assert [bar.list.item(i).text().split(" · ")[:2] for i in range(2)] == [
            ["Who are the parties?", "1 question"], ["How long does it last?", "2 questions"]]
        assert [e.question for e in again.chat.entries] == ["Who are the parties?"]
        meta = again.chat.entries[0].meta
        assert "first words in 2.5 s · 6.0 s in all · Qwen2.5-3B-Instruct-Q4_K_M.gguf" in meta

        bar.sig_chosen.emit(first)                                            # switch
        assert [e.question for e in again.chat.entries] == ["How long does it last?", "Can it be renewed?"]
        assert [e.meta.split("\n")[0] for e in again.chat.entries] == [
            "retrieval · first words in 1.5 s · 4.2 s in all · Qwen2.5-3B-Instruct-Q4_K_M.gguf",
            "retrieval · first words in 0.5 s · 2.0 s in all · Qwen2.5-3B-Instruct-Q4_K_M.gguf"]
        assert WARNING in again.chat.transcript.toPlainText()
        assert "first words in 1.5 s" in again.chat.transcript.toPlainText()
        bar.sig_chosen.emit(second)
        assert [e.question for e in again.chat.entries] == ["Who are the parties?"]
    finally:
        again.close()
        assert workers.wait_all(10000)


def test_new_conversation_starts_empty_and_carries_no_old_context(qtbot, window, library):
    from app.core.answer.qa import Answer
    from app.core.answer.values import EngineInfo, Timing
    info = open_and_wait(qtbot, window, corpus_path(NDA))
    first, _ = _two_conversations(library, info)
    old = contexts.Conversation(thread=first)
    old.begin([info.id], "retrieval", 1000)
    old.add([contexts.Passage(1, 3, "The MNDA Term is one year.")], "How long does it last?", '{"answer": "One year."}', 900, 20)
    contexts.save(old, "")                        # the engine's context of the first conversation, kept on disk
    window.chat.conversations.sig_chosen.emit(first)
    window.conversations.for_question()
    assert [t.question for t in window.engine.conversations[(info.id,)].turns] == ["How long does it last?"]

    window.chat.conversations.new_button.click()
    assert window.chat.entries == [] and "How long" not in window.chat.transcript.toPlainText()
    bar = window.chat.conversations
    assert len(bar.ids()) == 3 and bar.list.currentItem().text().startswith("New conversation")
    window.chat.conversations.new_button.click()              # still empty: no second empty one
    assert len(bar.ids()) == 3
    new = window.conversations.for_question()
    context = window.engine.conversations[(info.id,)]
    assert new == bar.current() and context.turns == []
    sent = json.dumps(context.messages("Who signs it?", []))
    assert "How long does it last?" not in sent and "MNDA Term is one year" not in sent

    # the answer goes into the new conversation, which the list then names by its question
    window.chat.begin("Who signs it?")
    window._asked_ids, window._asked_conversation = [info.id], new
    window.engine.sig_answer.emit("Who signs it?", Answer(
        text="Both parties.", citations=[], mode="retrieval", not_stated=False,
        timing=Timing(total_s=3.0, ttft_s=1.0), engine=EngineInfo("llama.cpp", MODEL, 8192, "")))
    qtbot.waitUntil(lambda: [e.question for e in library.exchanges([info.id], conversation=new)] == ["Who signs it?"],
                    timeout=10000)
    qtbot.waitUntil(lambda: bar.list.item(0).text().startswith("Who signs it? · 1 question"), timeout=10000)
    window.chat.conversations.sig_chosen.emit(first)
    assert [e.question for e in window.chat.entries] == ["How long does it last?", "Can it be renewed?"]


def test_the_whole_conversation_is_exported(qtbot, window, library, tmp_path):
    info = open_and_wait(qtbot, window, corpus_path(NDA))
    first, _ = _two_conversations(library, info)
    window.chat.conversations.sig_chosen.emit(first)
    export = window.answer_export
    export.sync_actions()
    assert window.actions_by_name["export_conversation_markdown"].isEnabled()
    default = export.default_path(".md", "conversation")
    assert default.name == "common-paper-mnda conversation.md"

    md = export.save_conversation_markdown(str(tmp_path / "conv.md")).read_text(encoding="utf-8")
    assert md.startswith("# Conversation about common-paper-mnda.pdf")
    for question in ("How long does it last?", "Can it be renewed?"):
        assert f"## {question}" in md
    assert md.count("Qwen2.5-3B-Instruct-Q4_K_M.gguf (llama.cpp)") == 2
    assert "first words in 1.5 s · 4.2 s in all" in md and "first words in 0.5 s" in md
    assert "[verified; does not obviously support the answer]" in md          # the first answer's flag
    assert md.count(f"> ⚠ {WARNING}") == 2
    assert md.count("E1. **common-paper-mnda.pdf, p. 3 · 5** [verified]") == 2   # evidence cards with pages
    assert "Who are the parties?" not in md                                   # another conversation
    assert export.default_path(".pdf", "conversation") == tmp_path / "common-paper-mnda conversation.pdf"

    memo = export.save_conversation_pdf(str(export.default_path(".pdf", "conversation")))
    with pymupdf.open(memo) as doc:
        words = " ".join(" ".join(page.get_text().split()) for page in doc)
        assert doc.metadata["title"] == "Conversation about common-paper-mnda.pdf"
    assert "How long does it last?" in words and "Can it be renewed?" in words
    assert "does not obviously support the answer" in words and words.count("Qwen2.5-3B-Instruct-Q4_K_M.gguf") == 2
    assert "it was not obeyed" in words and "p. 3" in words
