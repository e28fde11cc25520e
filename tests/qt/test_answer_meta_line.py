"""The line under an answer says what the model did with the search's pages (issue 19.2)."""
from __future__ import annotations

from app.core.answer.qa import Answer
from app.core.answer.rerank import Choice
from app.core.answer.values import ContextInfo, EngineInfo, Timing
from app.qt.transcript_entries import meta_line


def _answer(choice: Choice | None) -> Answer:
    return Answer(text="Yes.", citations=[], mode="retrieval", not_stated=False,
                  timing=Timing(total_s=4.2), engine=EngineInfo("llamacpp", "qwen2.5-7b", 8192, ""),
                  context=ContextInfo(tokens=900, passages=6, budget_tokens=1200, turn=1, rerank=choice))


def test_the_models_choice_is_said_under_the_answer():
    moved = meta_line(_answer(Choice(candidates=6, chosen=3, page=7, seconds=2.1)))
    assert moved.startswith("retrieval · 4.2 s · qwen2.5-7b · the model read 6 passages and moved p. 7 first")
    kept = meta_line(_answer(Choice(candidates=4, chosen=1, page=2, seconds=1.0)))
    assert kept.endswith("the model read 4 passages and kept the search's first")
    assert "the model" not in meta_line(_answer(Choice(skipped="not within the time budget")))
    assert "the model" not in meta_line(_answer(None))
