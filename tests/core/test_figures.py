"""What a question asks for when it asks for a value, and whether the card about it holds one
(app/core/answer/evidence/figures.py): the near misses of the sets written apart, in small."""
from app.core.answer.evidence import addressed, figures
from app.core.answer.evidence.cards import EvidenceCard


def test_references_versions_years_and_the_questions_own_figures_are_not_an_answer():
    # the service-level figure the question names is not the credit it asks for
    assert figures.value_missing("What percentage of the fee is credited when the 99.9% target is missed?",
                                 ["Provider will make the Cloud Service available 99.9% of the time in each month."])
    assert not figures.value_missing("What percentage of the fee is credited when the 99.9% target is missed?",
                                     ["Customer receives a credit of 10% of the monthly fee."])
    for quote in ("2.35. “SOW” means an order or other statement of work for Services.",
                  "Provider will report within the Breach Notification Period as required by §164.410 of HIPAA.",
                  "Apache License Version 2.0, January 2004",
                  "You can obtain one at http://mozilla.org/MPL/2.0/.",
                  "Unless the parties agree otherwise under Section 14.2, the Agreement renews."):
        assert figures.value_missing("How many days' notice is needed before the renewal?", [quote]), quote
    assert not figures.value_missing("How many days' notice is needed?", ["Either party gives 30 days' notice."])
    # a clause's number opens a quote; a figure may too
    assert not figures.value_missing("How many days do we have to pay?", ["30 days after the invoice date, fees are due."])
    assert figures.value_missing("How many days do we have to pay?", ["11.33 “Payment Period” means the period set in the Order."])
    # in Chinese numerals too: the twenty years the question names are not the extension it asks for
    asked = "债权已经超过二十年了，法院最多可以把期限延长几年？"
    assert figures.value_missing(asked, ["自权利受到损害之日起超过二十年的，人民法院不予保护，人民法院可以决定延长。"])
    assert not figures.value_missing(asked, ["超过二十年的，人民法院可以决定延长五年。"])


def test_one_party_is_not_a_figure_but_one_month_is():
    renews = "The Agreement renews unless one party gives notice of non-renewal before the Non-Renewal Notice Date."
    assert figures.value_missing("How many days before the end must we send a non-renewal notice?", [renews])
    assert not figures.value_missing("How many days do we have to pay?", ["Payment is due within one month of invoice."])
    assert not figures.value_missing("How many days do we have to pay?", ["Payment is due within thirty (30) days."])


def test_a_counted_period_needs_a_number_of_days_months_or_years():
    # a figure of another kind (a share, a sum) does not tell how many years
    assert figures.value_missing("How many years does the agreement run?", ["Fees rise by 5% at each renewal."])
    assert not figures.value_missing("How many years does the agreement run?", ["The term is two years."])
    assert figures.value_missing("证书的有效期最长可以是几年？", ["认证证书应当载明有效期。"])
    assert not figures.value_missing("证书的有效期最长可以是几年？", ["信息保存期限至少为证书失效后五年。"])
    # a loose "how long" is answered by any figure, as before
    assert not figures.value_missing("How long does the licence last?", ["The licence lasts for the Term of 3 years."])


def test_a_place_asked_needs_a_place_or_a_rule_naming_one():
    asked = "Which state's law governs the contract?"
    assert figures.value_missing(asked, ["The Governing Law governs this Agreement, without reference to conflict of law rules."])
    assert not figures.value_missing(asked, ["This Agreement is governed by the laws of the State of Delaware."])
    assert not figures.value_missing("In which courts must a claim be brought?",
                                     ["Any litigation may be brought only in the courts of a jurisdiction where the "
                                      "defendant maintains its principal place of business."])
    assert figures.value_missing("这份协议适用哪个州的法律？", ["The Governing Law governs this Agreement."])
    assert not figures.value_missing("个人信息应当存储在哪个国家？", ["应当将在中华人民共和国境内收集的个人信息存储在境内。"])


def test_a_list_item_that_carries_on_the_card_about_the_question_is_read_with_it():
    def card(quote, score):
        return EvidenceCard(1, "apache.pdf", 1, 6, quote, "", score, 0.5)
    head = card('"control" means (i) the power to cause the direction of such entity, whether by contract or', 2.5)
    item = card("(ii) ownership of fifty percent (50%) or more of the outstanding shares.", 2.0)
    other = card("Each Contributor grants a patent license.", 1.0)
    about = addressed._about([head, item, other])
    assert about == [head.quote, item.quote]
    assert not figures.value_missing("What share of the stock makes a company part of the same entity?", about)
    ended = card("A Legal Entity means the union of the acting entity and all other entities.", 2.5)
    assert addressed._about([ended, item]) == [ended.quote]


def test_across_languages_without_vectors_every_card_is_read_for_the_figure():
    def card(quote, score):
        return EvidenceCard(1, "law.pdf", 1, 6, quote, "", score, 0.5)
    asked = "How many days does the employer have to sign a written contract with a new hire?"
    off_topic = card("用人单位应当向劳动者支付劳动报酬。", 2.5)            # first by the dictionary's glosses
    answers = card("应当自用工之日起一个月内订立书面劳动合同。", 2.0)
    assert addressed.features([], asked, [off_topic, answers], None)["value_missing"] is False
    # with vectors the order is the meaning's too: the card about the question alone is read
    assert addressed.features([], asked, [off_topic, answers], 0.8)["value_missing"] is True


def test_advance_notice_asked_needs_a_period_said_as_notice_or_as_coming_before():
    asked = "How many days' warning must the provider give before suspending our account?"
    # the trap: a period of the same clause family that is no notice ("overdue for more than 30 days")
    assert figures.value_missing(asked, ["If Customer's account is 30 days or more overdue, Provider may suspend it."])
    assert figures.value_missing(asked, ["Customer has 30 days after notice of a change to object."])
    for quote in ("Provider may suspend the account on ten (10) days' prior written notice.",
                  "Provider will inform Customer at least 10 business days in advance of any suspension.",
                  "The minimum time period for prior notice of Subprocessor changes is 10 business days."):
        assert not figures.value_missing(asked, [quote]), quote
    assert figures.value_missing("房东最晚要提前几天告诉我？", ["出租人应当在合理期限内通知承租人。"])
    assert not figures.value_missing("房东最晚要提前几天告诉我？", ["出租人应当在拍卖五日前通知承租人。"])
