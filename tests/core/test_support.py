"""The second citation check (issue 19.3): does a quote support the answer's claim?"""
from __future__ import annotations

from app.core.answer.support import numbers, supports
from tests.support.corpus import dev_questions


def test_figures_are_read_and_section_numbers_are_not():
    assert numbers("US$1,850.00 within 30 days (Section 5.2(b))") == {"1850", "30"}
    assert numbers("三十日内，罚款五千万元以下（第六十六条）") == {"30", "50000000"}
    assert numbers("three times (3x) the General Cap") == {"3"}


def test_the_convenience_case_of_issue_19():
    """The quote found next to the real clause ("headings are for convenience only") is on
    the page but does not support a termination answer; the real clause does."""
    q = "Can either party terminate for convenience?"
    answer = "Yes. Either party may terminate the Agreement for convenience on 30 days' notice."
    assert supports("Section headings are for convenience only and do not affect interpretation.",
                    answer, q) == "unclear"
    assert supports("Either party may terminate this Agreement for convenience upon 30 days' prior written "
                    "notice to the other party.", answer, q) == "supports"
    assert supports("Either party may terminate this Agreement for convenience upon 30 days' prior written "
                    "notice to the other party.", "No.", q) == "contradicts"
    assert supports("Either party may terminate this Agreement for convenience upon 60 days' prior written "
                    "notice.", answer, q) == "contradicts"


def test_gold_quotes_support_gold_answers_and_not_other_answers(corpus):
    """dev.jsonl: each gold quote against its own gold answer should support; against the
    answer of another question on the same documents it should not. Measured 0.90 / 0.05
    (tuning half) and 0.91 / 0.06 (checking half)."""
    qs = [q for q in dev_questions() if q["type"] != "unanswerable"]
    own = [supports(g["quote"], q["answer"], q["question"]) for q in qs for g in q["gold"]]
    other = [supports(g["quote"], o["answer"], o["question"]) for q in qs for g in q["gold"]
             for o in qs if o is not q and o["docs"] == q["docs"]]
    share_own = own.count("supports") / len(own)
    share_other = other.count("supports") / len(other)
    print(f"\ngold quote supports its answer {share_own:.2f} (n={len(own)}), "
          f"another answer {share_other:.2f} (n={len(other)}); contradicts own {own.count('contradicts')}")
    assert share_own >= 0.85 and share_other <= 0.10 and own.count("contradicts") == 0
