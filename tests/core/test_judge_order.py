"""The order of judged candidates (app/core/answer/evidence/judge.py `order`): the model's odds,
the search's order counting PRIOR × ln(1 + its place), candidates without odds last, and the
first `distinct` from different pages."""
from __future__ import annotations

import math
from types import SimpleNamespace

from app.core.answer.evidence import judge


def cands(*pages):
    return [SimpleNamespace(doc_id=1, page=p) for p in pages]


def test_without_a_prior_the_odds_alone_order_the_candidates_and_those_without_odds_come_last():
    assert judge.order(cands(1, 2, 3, 4), [0.1, None, 2.0, -1.0], prior=0.0) == [2, 0, 3, 1]


def test_the_prior_keeps_the_searchs_order_unless_the_model_is_surer_by_prior_times_the_log_of_the_place():
    margins = [0.0, 0.1]                      # the second is likelier by 0.1 < 0.25 × ln 2
    assert judge.order(cands(1, 2), margins, prior=0.0) == [1, 0]
    assert judge.order(cands(1, 2), margins, prior=0.25) == [0, 1]
    assert judge.order(cands(1, 2), [0.0, 0.25 * math.log(2) + 0.01], prior=0.25) == [1, 0]


def test_distinct_puts_other_pages_first_then_the_rest_in_order():
    assert judge.order(cands(5, 5, 7, 5), [3.0, 2.0, 1.0, 0.5], prior=0.0, distinct=2) == [0, 2, 1, 3]
    assert judge.order(cands(5, 5), [3.0, 2.0], prior=0.0, distinct=2) == [0, 1]     # only one page


def test_the_app_uses_the_chosen_constants():
    assert judge.order(cands(1, 2), [0.0, 0.1]) == judge.order(cands(1, 2), [0.0, 0.1], judge.PRIOR, judge.DISTINCT)
    assert judge.PRIOR == 0.25 and judge.DISTINCT == 0


def test_a_candidate_is_put_with_its_clause_title_when_given_one():
    with_title = judge.messages("How often may the customer audit?", "Audits occur no more than once annually.",
                                "9.3 Audits")[1]["content"]
    assert "Passage (from 9.3 Audits): Audits occur no more than once annually." in with_title
    plain = judge.messages("How often may the customer audit?", "Audits occur no more than once annually.")
    assert "Passage: Audits occur" in plain[1]["content"] and plain[0]["content"] == judge.SYSTEM
