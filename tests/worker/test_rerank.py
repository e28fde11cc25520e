"""Issue 19.2: the model picks the best of retrieval's pages before it answers, within the
time budget, with the real llama.cpp worker (the embedded model stands in for a real one:
the mechanics are tested here; whether a model's choice helps is what
benchmarks/retrieval.py --rerank measures)."""
from __future__ import annotations

import pytest

from app.core import settings
from app.core.answer import qa, rerank
from app.core.answer.conversation import Conversation
from app.worker import engine_errors as errors
from tests.support.failing_engine import FailingEngine
from tests.support.refs import refs_for

pytestmark = pytest.mark.slow

QUESTION = "Can either party terminate for convenience?"
TARGET = 120.0


def test_the_model_chooses_a_page_first_and_the_answer_gets_what_the_target_has_left(runtime, lib, corpus):
    # a target generous enough for two candidates on a slow machine too (the budget's
    # arithmetic is the next tests' business)
    settings.save(settings.Settings(rerank="on", first_token_budget_s=TARGET))
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    assert runtime.reranks()
    ranked = qa.ranked_hits(lib, refs, QUESTION)
    said, conv = [], Conversation()
    tps_before = runtime.memory.budget_tps(runtime.speed_key())   # the choice's reading may move it
    answer = runtime.ask(lib, refs, QUESTION, mode="retrieval", on_reading=said.append, conversation=conv)
    choice = answer.context.rerank
    assert not choice.skipped, choice
    assert 2 <= choice.candidates <= rerank.CANDIDATES and 1 <= choice.chosen <= choice.candidates
    assert choice.prompt_tokens > 0 and choice.seconds > 0
    # the chosen page is the first passage of the answer's prompt
    assert conv.passages()[0].page == ranked[choice.chosen - 1][1].page
    # the answer's budget is what the target has left after the choice
    # (sized by the speed held before the choice, or by the one its reading measured when that
    # moved past the steady band, as on a machine whose load changed meanwhile)
    speeds = [tps_before, runtime.memory.budget_tps(runtime.speed_key())]
    expected = [qa.time_budget_tokens(max(TARGET - choice.seconds, 0.1), tps, runtime.plan.max_model_len)
                for tps in speeds]
    slack = max(speeds) * 0.01 + 1                                        # seconds are rounded to 0.01
    assert min(expected) - slack <= answer.context.budget_tokens <= max(expected) + slack, (speeds, expected)
    assert answer.context.budget_tokens <= max(qa.time_budget_tokens(TARGET, tps, runtime.plan.max_model_len)
                                               for tps in speeds)
    # said before each step: the choice (with its expected time), then the answer's reading
    assert isinstance(said[0], rerank.Choosing) and said[0].candidates == choice.candidates
    assert said[0].line().startswith(f"choosing the best of {choice.candidates} passages")
    assert isinstance(said[1], qa.Reading) and said[1].passages >= 1 and said[1].choice.page == choice.page


def test_no_reranking_by_default_and_off_means_off(runtime, lib, corpus):
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    assert settings.load().rerank == "off" and not runtime.reranks()   # measured to hurt: opt-in
    answer = runtime.ask(lib, refs, QUESTION, mode="retrieval")
    assert answer.context.rerank is None and "rerank" not in answer.to_dict()["context"]
    settings.save(settings.Settings(rerank="off"))
    assert not runtime.reranks()


def test_a_slow_machine_shows_fewer_pages_and_a_too_slow_one_none(runtime, lib, corpus):
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    ranked = qa.ranked_hits(lib, refs, QUESTION)
    texts = [h.text for _, h in ranked]
    tps = runtime.memory.prefill_tps(runtime.speed_key())
    full = rerank.fitting(QUESTION, texts, tps, TARGET)
    assert full >= 2
    # a machine ten and a thousand times slower (a 7B model on a laptop): fewer candidates, then none
    assert rerank.fitting(QUESTION, texts, tps / 10, TARGET) <= full
    assert rerank.fitting(QUESTION, texts, tps / 1000, TARGET) == 0
    order, choice = rerank.rerank(runtime.engine, QUESTION, ranked, tps / 1000, TARGET)
    assert order == ranked and choice.skipped == "not within the time budget"
    # the choice really read the candidates it reports, on this engine
    order, choice = rerank.rerank(runtime.engine, QUESTION, ranked, tps, TARGET)
    assert not choice.skipped and choice.prompt_tokens >= 0.5 * sum(
        rerank.estimate_tokens(m["content"]) for m in rerank.messages(QUESTION, rerank._cut(texts[:choice.candidates])))
    assert order[0] == ranked[choice.chosen - 1] and sorted(map(id, order)) == sorted(map(id, ranked))


def test_a_failed_choice_keeps_retrievals_order_and_a_dead_engine_is_reported(lib, corpus):
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    ranked = qa.ranked_hits(lib, refs, QUESTION)
    order, choice = rerank.rerank(FailingEngine(errors.ServerError("boom")), QUESTION, ranked, 500, 10)
    assert order == ranked and choice.skipped.startswith("no usable choice")
    with pytest.raises(errors.WorkerDied):
        rerank.rerank(FailingEngine(errors.WorkerDied("gone")), QUESTION, ranked, 500, 10)
