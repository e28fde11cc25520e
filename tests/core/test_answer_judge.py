"""benchmarks/judge.py: the facts it reads out of a gold answer and a model's answer (numbers
with their units in English and Chinese, yes/no, refusals), its verdicts on answers of the
kinds real models give, and its agreement with a person's reading of recorded answers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.judge import Fact, judge, numbers, zh_number

AGREEMENT = Path(__file__).resolve().parents[2] / "benchmarks" / "eval" / "judge-agreement.jsonl"


@pytest.mark.parametrize("text, value", [("三十", 30), ("二十四", 24), ("十九", 19), ("五千万", 50_000_000),
                                         ("一百零五", 105), ("两", 2), ("九十", 90), ("四十五", 45)])
def test_chinese_numerals(text, value):
    assert zh_number(text) == value


@pytest.mark.parametrize("text, fact", [
    ("三十日内", Fact("day", 30)), ("最长6个月", Fact("month", 6)), ("六个月", Fact("month", 6)),
    ("six months", Fact("month", 6)), ("百分之二十", Fact("pct", 20)), ("五千万元以下", Fact("money", 50_000_000)),
    ("US$1,000 (Section 21)", Fact("money", 1000)), ("an initial 12-month period", Fact("month", 12)),
    ("fifty percent (50%) or more", Fact("pct", 50)), ("three times the General Cap", Fact("times", 3)),
    ("二倍的工资", Fact("times", 2)), ("RMB 2 million", Fact("money", 2_000_000)), ("70万元", Fact("money", 700_000)),
    ("within 48 hours", Fact("hour", 48)), ("10 business days", Fact("day", 10)), ("25.47x", Fact("times", 25.47)),
])
def test_first_number_and_its_unit(text, fact):
    assert numbers(text)[0] == fact


def test_clause_numbers_are_citations_not_facts():
    assert numbers("Section 7.2 and Article 585 say so (第五百八十六条, 第十九条)") == []


def test_same_duration_in_another_script_or_unit_is_right():
    q = "签订三年期劳动合同，试用期最长可以约定多久？"
    assert judge(q, "试用期最长不得超过六个月。", "根据第十九条，试用期最长可以约定6个月。").right
    assert judge("How long is the protection period?", "1 year from the Effective Date.",
                 "The period is 12 months from the Effective Date.").right


def test_a_different_number_is_wrong():
    v = judge("How long does the customer have to review a deliverable?",
              "15 days from receipt (the Test Period).", "The customer has 30 days to review it.")
    assert not v.right and "15 day" in v.why


def test_a_number_the_question_gave_is_no_evidence():
    q = "我们公司想和新员工签三年的劳动合同，试用期定八个月，可以吗？"
    gold = "不可以。三年以上固定期限劳动合同的试用期最长不得超过六个月。"
    assert not judge(q, gold, "不可以，三年合同的试用期不能是八个月。").right      # no 6 months
    assert judge(q, gold, "不可以。试用期最长不得超过六个月。").right
    assert not judge(q, gold, "可以，试用期六个月以上也可以。").right               # says yes


def test_yes_or_no():
    q = "Am I allowed to sublicense a program I received under GPLv3?"
    gold = "No. Sublicensing is not allowed; section 10 makes it unnecessary."
    assert judge(q, gold, "No, sublicensing is not allowed.").right
    assert judge(q, gold, "Sublicensing is not permitted under the licence.").right
    assert not judge(q, gold, "Yes, you may sublicense it.").right
    assert not judge(q, gold, "You may sublicense the program to anyone.").right


def test_a_chinese_yes_or_no_with_a_hedge_or_a_still():
    """"一般不能" is a no and "仍然有效" a yes: the sixth set's gold answers open so, and a model's
    "不能" to the first was judged wrong."""
    q = "对方货款收了，却一直拖着不给我们开发票。我们能因为这个把合同解除吗？"
    gold = "一般不能。开具发票属于非主要债务，请求解除合同的，法院不予支持。"
    assert judge(q, gold, "不能").right and not judge(q, gold, "可以").right
    q = "公司合并以后，原来签的劳动合同还有效吗？"
    gold = "仍然有效，由承继其权利和义务的用人单位继续履行。"
    assert judge(q, gold, "有效。").right and not judge(q, gold, "无效。").right


def test_no_more_than_is_a_limit_not_a_no():
    q = "If a patient asks to see their records, how quickly must the vendor help?"
    assert judge(q, "No more than ten business days (Section 1.10).", "Within 10 business days.").right


def test_refusals():
    q = "What hourly rate does the Bonterms PSA set for the provider's consultants?"
    refused = judge("How long is the warranty period?", "30 days.", "The document does not say.")
    assert refused.refused and not refused.right
    assert judge(q, "not stated", "The document does not say.", unanswerable=True).right
    assert not judge(q, "not stated", "The provider's rate is $200 per hour.", unanswerable=True).right
    assert judge("年休假几天？", "文件中没有规定。", "文件中没有规定年休假天数。", unanswerable=True).right


def test_a_comparison_needs_both_documents():
    q = "How long must a force majeure outage last before an affected order can be terminated under each?"
    gold = "Bonterms: 15 or more consecutive days; Common Paper CSA: 30 or more consecutive days."
    assert judge(q, gold, "Bonterms requires 15 consecutive days and Common Paper 30 days.", "comparison").right
    assert not judge(q, gold, "Both require 30 consecutive days.", "comparison").right


def test_words_when_there_is_no_number_or_yes_no():
    q = "Which module of the EU standard contractual clauses is used when the customer is a processor?"
    gold = "Module Three (Processor to Sub-Processor)."
    assert judge(q, gold, "Module Three, processor to sub-processor, applies.").right
    assert not judge(q, gold, "Module One (controller to controller).").right


def test_agreement_with_a_person_on_recorded_answers():
    """30 answers real models gave, each read by a person against the gold (right, wrong or
    refused): the judge must agree on most of them."""
    items = [json.loads(line) for line in AGREEMENT.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(items) >= 30
    agree = 0
    for it in items:
        v = judge(it["question"], it["gold"], it["answer"], it["type"], it["unanswerable"])
        agree += ("refused" if v.refused else "right" if v.right else "wrong") == it["verdict"]
    assert agree / len(items) >= 0.8, f"judge agrees with the person on {agree} of {len(items)}"


def test_a_negation_repeated_from_the_question_is_no_no():
    """The 1.5B model's follow-up answer restates the question's "不附理由" (a yes); its own
    "不可以" / "不得" is a no."""
    q = "委托合同的当事人可以不附理由地随时解除合同吗？"
    gold = "可以，委托人或者受托人可以随时解除委托合同，但解除方应按规定赔偿对方损失（第九百三十三条）。"
    assert judge(q, gold, "委托合同的当事人可以不附理由地随时解除合同。").right
    assert not judge(q, gold, "委托合同的当事人不可以随时解除合同。").right
    assert not judge(q, gold, "当事人不得随时解除。").right
    q_en = "Can the customer terminate without cause?"
    assert judge(q_en, "Yes, on 30 days' notice.", "The customer can terminate without cause on 30 days' notice.").right
    assert not judge(q_en, "Yes, on 30 days' notice.", "The customer cannot terminate, even on 30 days' notice.").right


def test_an_option_the_question_offers_is_judged_by_which_one_is_named():
    """"以中文版为准" adds no word the question lacks ("中文本和英文本…以哪个版本为准"): the answer
    must name the gold's option, not the other one."""
    q = "木兰宽松许可证第2版的中文本和英文本如果表述不一致，应当以哪个版本为准？"
    gold = "以中文版为准；两种语言版本具有同等法律效力。"
    for right in ("中文本为准", "中文版", "以中文版为准"):
        assert judge(q, gold, right).right, right
    for wrong in ("英文本为准", "以英文版为准", "中文版和英文版都可以"):
        assert not judge(q, gold, wrong).right, wrong


def test_section_abbreviations_are_citations_not_facts():
    # The fifth and sixth sets' gold answers cite "s. 14.2" and "第5.3条": a right yes/no answer
    # need not repeat the clause number.
    q = "Can we end the Bonterms contract once every subscription has run out?"
    assert judge(q, "Yes. Either party may terminate by notice (Bonterms Cloud Terms s. 14.2).", "Yes").right
    assert numbers("依第5.1或5.2条终止时（第5.3条）") == []
    assert numbers("30 days (s. 21)")[0].value == 30
    assert numbers("(Civil Code Art. 829), (Common Paper BAA 3.3), (Bonterms DPA 3.1(d))") == []
    assert numbers("available 99.9% of the time (Common Paper CSA 4.2)")[0].value == 99.9
