"""The reader words the question as the document would, and the search looks for that too
(app/core/answer/evidence/rewrite.py), with the real llama.cpp worker in its own process. The
embedded 135M proves the mechanics (its sentences are no help: `auto` leaves it out); whether a
model's wording helps is measured by benchmarks/evidence.py --rewrite with a real one."""
from __future__ import annotations

import pytest

from app.core import settings
from app.core.answer.conversation import Conversation
from app.core.answer.evidence import find_evidence, rewrite
from app.worker import engine_errors as errors
from tests.support.failing_engine import FailingEngine
from tests.support.refs import refs_for

QUESTION = "If we pull the plug halfway through a project, do we keep the half-finished work?"


@pytest.mark.slow
def test_the_model_words_the_question_and_the_cards_come_from_the_pages_found_with_it(runtime, lib, corpus):
    settings.save(settings.Settings(rewrite_question="on", judge_cards="off"))
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    said, conv = [], Conversation()
    answer = runtime.ask(lib, refs, QUESTION, mode="retrieval", evidence=shown, on_reading=said.append,
                         conversation=conv)
    done = answer.context.rewritten
    assert done.text and not done.skipped and done.seconds > 0, done
    assert isinstance(said[0], rewrite.Rewriting) and said[0].line().startswith("the model words the question")
    assert isinstance(said[1], rewrite.CardsFound) and said[1].evidence.cards == answer.evidence.cards
    assert answer.evidence.rewritten == done.text
    assert answer.to_dict()["context"]["rewritten"]["text"] == done.text
    # the cards are the question's own sentences of the pages found with the model's sentence,
    # and whether the document addresses the question is the question's own search's verdict
    again = rewrite.found_with(lib, refs, shown, done.text)
    assert [c.quote for c in again.cards] == [c.quote for c in answer.evidence.cards]
    assert answer.evidence.addressed == shown.addressed and answer.evidence.support == shown.support
    # a follow-up is not reworded: its meaning leans on the conversation, which the model is not shown
    later = runtime.ask(lib, refs, "And who pays for it?", mode="retrieval",
                        evidence=find_evidence(lib, refs, "And who pays for it?"), conversation=conv)
    assert later.context.turn > 1 and later.context.rewritten is None


@pytest.mark.slow
def test_auto_leaves_out_a_model_too_small_to_word_a_clause(runtime, lib, corpus):
    assert settings.load().rewrite_question == "auto"
    assert runtime.rewrites() == "off"             # the embedded 135M
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    answer = runtime.ask(lib, refs, QUESTION, mode="retrieval", evidence=shown)
    assert answer.context.rewritten is None and answer.evidence.cards == shown.cards


def test_auto_rewords_only_within_the_time_budget(lib, corpus):
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    never = FailingEngine(AssertionError("never asked"))
    # 2 CPU cores, the 1.5B: ~60 prompt tokens/s; writing at 5 tokens/s the sentence alone takes ~10 s
    kept, done = rewrite.rewrite_found(never, lib, refs, shown, 60, 5, 10)
    assert kept is shown and done.skipped == "not within the time budget"
    kept, done = rewrite.rewrite_found(never, lib, refs, shown, None, None, 10)
    assert kept is shown and done.skipped == "no measured speed"
    title = rewrite.title_of(lib, refs[0].doc_id)
    assert rewrite.expected_s(QUESTION, title, 10_000, 200) < 0.5      # a GPU
    assert rewrite.expected_s(QUESTION, title, 60, None) == pytest.approx(
        rewrite.expected_s(QUESTION, title, 60, 60 / rewrite.DECODE_RATIO))


def test_a_failed_rewording_keeps_the_cards_and_a_dead_engine_is_reported(lib, corpus):
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    kept, done = rewrite.rewrite_found(FailingEngine(errors.ServerError("boom")), lib, refs, shown, 500, 50, 10,
                                       always=True)
    assert kept is shown and done.skipped.startswith("no usable sentence")
    with pytest.raises(errors.WorkerDied):
        rewrite.rewrite_found(FailingEngine(errors.WorkerDied("gone")), lib, refs, shown, 500, 50, 10, always=True)


def test_several_documents_are_not_reworded(lib, corpus):
    from app.core.answer.refs import DocRef
    paths = [corpus / "contracts-en" / "common-paper-csa.pdf", corpus / "contracts-en" / "bonterms-psa-v1.2.pdf"]
    refs = [DocRef(n, lib.add(p).id, str(p)) for n, p in enumerate(paths, 1)]
    shown = find_evidence(lib, refs, "Which agreement lets the customer terminate for convenience?")
    kept, done = rewrite.rewrite_found(FailingEngine(AssertionError("never asked")), lib, refs, shown, 500, 50, 10,
                                       always=True)
    assert kept is shown and done.skipped == "not a single document's cards"


def test_the_model_s_sentence_brings_the_page_it_names_and_keeps_the_question_s_verdict(lib, corpus):
    """The search on the question with a sentence worded as the contract words it finds the page
    the paraphrase alone does not (Bonterms PSA page 8: on termination "Provider will cease to
    provide the Services and promptly deliver to Customer all Deliverables (in whatever state of
    completion)")."""
    refs = refs_for(lib, corpus / "contracts-en" / "bonterms-psa-v1.2.pdf")
    shown = find_evidence(lib, refs, QUESTION)
    worded = ("Upon termination, Provider will cease to provide the Services and promptly deliver to Customer "
              "all Deliverables, in whatever state of completion.")
    found = rewrite.found_with(lib, refs, shown, worded)
    assert 8 not in [c.page for c in shown.cards[:3]]
    assert 8 in [c.page for c in found.cards[:3]], [(c.page, c.quote[:60]) for c in found.cards]
    assert found.addressed == shown.addressed and found.rewritten == worded
