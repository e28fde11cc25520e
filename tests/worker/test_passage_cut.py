"""Issue 31.2: the passage plan a retrieval request carries. Cutting the message after any
passage boundary (the question kept) gives exactly the message the conversation builds for
those passages, so a turn recorded with only what the engine read stays the prefix it read."""
from __future__ import annotations

from app.core.answer import passage_cut
from app.core.answer.conversation import Conversation, Passage
from app.worker.llama.chat import PassagePlan

PASSAGES = [Passage(1, 3, "The agreement is governed by the laws of Delaware.", best=True),
            Passage(1, 1, "Bonterms and the Customer are the parties."),
            Passage(1, 7, "Either party may terminate for convenience on 30 days' notice.")]


def _plan(conv: Conversation, question: str) -> tuple[list[dict], dict]:
    msgs = conv.messages(question, PASSAGES)
    return msgs, passage_cut.request_plan(conv, question, PASSAGES, msgs, seconds_left=10.0)


def test_every_cut_is_the_conversations_own_message_with_the_question_kept():
    for turns in (0, 1):                       # a first question, then a follow-up's added passages
        conv = Conversation()
        conv.begin([1], "retrieval", 2000)
        if turns:
            conv.add([Passage(1, 2, "Fees are due in 30 days.")], "Fees?", '{"answer": "30 days"}', 300, 8)
        question = "Which law governs?"
        msgs, plan = _plan(conv, question)
        assert plan["deadline_s"] == 10.0 * passage_cut.READ_SHARE
        worker = PassagePlan.from_request({"pagewise_passages": plan})
        for k in range(1, len(PASSAGES) + 1):
            cut = worker.cut(msgs, k)
            assert cut == conv.messages(question, PASSAGES[:k])
            assert f"Question: {question}" in cut[-1]["content"].split("DOCUMENT TEXT>>>")[-1]


def test_what_the_answer_keeps_and_says():
    outcome = {"read": 1, "of": 3, "measured_tps": 41.2}
    assert passage_cut.kept(PASSAGES, outcome) == PASSAGES[:1]
    assert passage_cut.kept(PASSAGES, None) == PASSAGES              # an engine without the plan
    assert passage_cut.warning(outcome, 150.0) == (
        "Read 1 of 3 passages: the machine was slower than planned (41 tok/s measured vs 150 planned); "
        "the lower-ranked passages were left out so the answer starts on time.")
    assert passage_cut.warning({"read": 3, "of": 3, "measured_tps": 200}, 150.0) == ""


def test_one_passage_needs_no_plan():
    conv = Conversation()
    conv.begin([1], "retrieval", 2000)
    msgs = conv.messages("Which law?", PASSAGES[:1])
    assert passage_cut.request_plan(conv, "Which law?", PASSAGES[:1], msgs, 10.0) is None


def test_a_malformed_plan_is_refused():
    import pytest

    from app.worker.llama.chat import RequestError
    assert PassagePlan.from_request({}) is None                       # other clients: as before
    for bad in ({"ends": [50, 20], "tail": 60, "deadline_s": 3}, {"ends": [20], "tail": 10, "deadline_s": 3},
                {"ends": [20], "tail": 30, "deadline_s": 0}, {"ends": "x", "tail": 30}):
        with pytest.raises(RequestError):
            PassagePlan.from_request({"pagewise_passages": bad})
