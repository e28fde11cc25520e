"""Issue 33 defect 4: exports keep what the window said. The Markdown and the PDF memo keep
the support flags ("does not obviously support the answer") and the answer's warnings, name
the model, the PDF has a title, and the save dialog starts named after the document in the
last folder an answer was exported to (not "answer.md" in the app's own folder)."""
from __future__ import annotations

import pymupdf

from tests.qt.conftest import open_and_wait
from tests.support.corpus import corpus_path

WARNING = "Text that reads like instructions to the model was found on p. 2 of mnda.pdf; it was not obeyed."


def test_exports_keep_flags_warnings_and_the_model(qtbot, window, tmp_path):
    from app.core.answer.citations import Citation
    from app.core.answer.qa import Answer
    from app.core.answer.values import EngineInfo
    info = open_and_wait(qtbot, window, corpus_path("contracts-en/common-paper-mnda.pdf"))
    answer = Answer(text="The MNDA Term is one year.", mode="whole-document", not_stated=False,
                    citations=[Citation(info.id, info.path, 3, "expires at the end of the MNDA Term", True,
                                        support="unclear")],
                    engine=EngineInfo("llama.cpp", "/models/Qwen2.5-3B-Instruct-Q4_K_M.gguf", 8192, ""),
                    warnings=[WARNING])
    window.chat.begin("How long does it last?")
    window._asked_ids = [info.id]
    window.engine.sig_answer.emit("How long does it last?", answer)
    export = window.answer_export

    # The dialog's default: named after the document, in its folder until an export was made.
    first = export.default_path(".md")
    assert first.name == "common-paper-mnda answer.md" and first.parent == corpus_path(
        "contracts-en/common-paper-mnda.pdf").parent

    (tmp_path / "kept").mkdir()
    md = export.save_markdown(str(tmp_path / "kept" / "x.md"))
    text = md.read_text(encoding="utf-8")
    assert "[verified; does not obviously support the answer]" in text
    assert f"> ⚠ {WARNING}" in text
    assert "Qwen2.5-3B-Instruct-Q4_K_M.gguf (llama.cpp)" in text
    assert export.default_path(".pdf") == tmp_path / "kept" / "common-paper-mnda answer.pdf"   # the last folder

    memo = export.save_pdf(str(export.default_path(".pdf")))
    with pymupdf.open(memo) as doc:
        words = " ".join(" ".join(page.get_text().split()) for page in doc)
        assert doc.metadata["title"] == "How long does it last?"
    assert "does not obviously support the answer" in words and "it was not obeyed" in words
    assert "Qwen2.5-3B-Instruct-Q4_K_M.gguf" in words
