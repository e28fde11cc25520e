"""The checks between "a card backs the answer" and "the answer leads", on sentences copied from
the corpus PDFs and answers the 1.5B model wrote to them: every figure the answer states must be
in the passage backing it (or beside it on its page), a "how often / how many" question needs a
figure in its answer, and a bare "是" is a yes."""
from __future__ import annotations

from app.core.answer import qa, verdict
from app.core.answer.support import supports

# Bonterms DPA p. 3 (4.3) and Common Paper DPA p. 2, as printed.
BONTERMS_NOTICE = ("At least 30 days before any new Subprocessor Processes any Customer Personal Data, Provider "
                   "will add such Subprocessor to the Subprocessor List and notify Customer through email or other "
                   "means specified on the DPA Setup Page.")
COMMON_PAPER_NOTICE = ("Provider will inform Customer at least 10 business days in advance and in writing of any "
                       "intended changes to the Approved Subprocessors whether by addition or replacement of a "
                       "Subprocessor, which allows Customer to have enough time to object to the changes before "
                       "the Provider begins using the new Subprocessor(s).")
# Bonterms DPA p. 5, 9.3: the audit clause and the card beside it.
AUDIT = ("(iv) occur no more than once annually (unless required under Data Protection Laws or in connection with "
         "a Security Incident), (v) cover only facilities controlled by Provider")
AUDIT_REPORTS = "(b) Customer may share a copy of Audit Reports with relevant government authorities as required upon their request."
# Civil Code p. 39, 第九百三十三条.
MANDATE = "第九百三十三条委托人或者受托人可以随时解除委托合同。"


class _Card:
    def __init__(self, quote, page=3, doc_id=1):
        self.doc_id, self.doc, self.number, self.page, self.quote, self.clause = doc_id, "doc.pdf", doc_id, page, quote, ""

    def citation(self):
        return qa.Citation(self.doc_id, self.doc, self.page, self.quote, True)


class _Evidence:
    def __init__(self, cards, addressed=True):
        self.cards, self.addressed = cards, addressed


def _cite(quote, answer, question, doc_id=1, page=3):
    return qa.with_support([qa.Citation(doc_id, "doc.pdf", page, quote, True)], answer, question)


def test_a_figure_that_the_backing_passage_does_not_hold_does_not_lead():
    """A follow-up whose cards were all from the Bonterms DPA: its 30 is backed, its 15 is in
    nothing the model read beside that card (the Common Paper DPA says 10 business days)."""
    q = "Compare the advance notice of new subprocessors required by the Bonterms DPA and the Common Paper DPA."
    wrong = "Bonterms requires a 30-day advance notice, while Common Paper requires a 15-day advance notice."
    cites = _cite(BONTERMS_NOTICE, wrong, q)
    assert cites[0].support == "supports"          # the shared 30 and the words back it: the check is what stops it
    judged = verdict.judge(wrong, cites, q, _Evidence([_Card(BONTERMS_NOTICE)]), False, lambda: [])
    assert judged.status == verdict.NOT_BACKED and verdict.UNBACKED_FIGURE in judged.warnings
    right = "Bonterms requires at least 30 days' notice; Common Paper at least 10 business days in advance."
    cites = (_cite(BONTERMS_NOTICE, right, q) + _cite(COMMON_PAPER_NOTICE, right, q, doc_id=2, page=2))
    shown = _Evidence([_Card(BONTERMS_NOTICE), _Card(COMMON_PAPER_NOTICE, 2, doc_id=2)])
    assert verdict.judge(right, cites, q, shown, False, lambda: []).status == verdict.ANSWER


def test_a_figure_from_the_sentence_beside_the_backing_card_on_its_page_is_backed():
    q = "Within how many days after notice may the customer object to a new subprocessor?"
    beside = qa.Citation(1, "doc.pdf", 3, "(a) If, within 30 days after notice of a new Subprocessor, Customer "
                         "notifies Provider in writing of its objection", True)
    answer = "The customer may object within 30 days after the notice, which comes at least 30 days before processing."
    cites = _cite(BONTERMS_NOTICE, answer, q)
    assert verdict.judge(answer, cites, q, _Evidence([_Card(BONTERMS_NOTICE)]), False,
                         lambda: [beside]).status == verdict.ANSWER
    other_page = qa.Citation(1, "doc.pdf", 9, "Either party may terminate on 45 days' notice.", True)
    with_45 = "The customer may object within 30 days; the provider notifies 45 days ahead."
    cites = _cite(BONTERMS_NOTICE, with_45, q)
    judged = verdict.judge(with_45, cites, q, _Evidence([_Card(BONTERMS_NOTICE)]), False, lambda: [other_page])
    assert judged.status == verdict.NOT_BACKED and verdict.UNBACKED_FIGURE in judged.warnings


def test_how_often_answered_without_a_frequency_does_not_lead():
    """The 1.5B model answered "how frequently may a customer audit" with the card beside the
    audit clause; the card it cited carries its words, but no frequency is an answer to it."""
    q = "How frequently may a customer send its own auditors in under the Bonterms DPA?"
    wrong = "Customer may share a copy of Audit Reports with relevant government authorities as required upon their request."
    cites = _cite(AUDIT_REPORTS, wrong, q, page=5)
    judged = verdict.judge(wrong, cites, q, _Evidence([_Card(AUDIT_REPORTS, 5), _Card(AUDIT, 5)]), False, lambda: [])
    assert judged.status != verdict.ANSWER and verdict.NO_FIGURE in judged.warnings
    # a frequency in words is an answer to it (the citation taken as backing: this check alone)
    right = "No more than once annually, unless Data Protection Laws require more or after a Security Incident."
    backed = [qa.Citation(1, "doc.pdf", 5, AUDIT, True, support="supports")]
    judged = verdict.judge(right, backed, q, _Evidence([_Card(AUDIT, 5)]), False, lambda: [])
    assert judged.status == verdict.ANSWER and judged.warnings == []


def test_a_bare_shi_is_a_yes_the_card_backs():
    """"是" alone (no full stop) to "可以…随时解除合同吗": the 1.5B model's whole answer. A bare yes
    is backed only by a quote holding enough of the question that a bare no would be contradicted:
    below that the check backs "是" and "不" alike (benchmarks/support.py), and the 1.5B's bare
    answers it backed so were wrong 4 times of 5."""
    q = "委托合同的当事人可以不附理由地随时解除合同吗？"
    whole = "委托合同的当事人可以随时解除委托合同。"
    assert supports(whole, "是", q) == "supports" and supports(whole, "是。", q) == "supports"
    assert supports(whole, "不", q) == "contradicts"
    assert supports(MANDATE, "是", q) == supports(MANDATE, "不", q) == "unclear"      # 3 of its 7 words
    assert supports("第九百三十三条委托人或者受托人可以随时解除委托合同。", "是非", q) != "supports"   # not a yes


def test_a_lists_numbering_is_no_figure():
    """"(1) … (2) … (3)": the numbers of a ranking, not figures the passage must hold."""
    q = "If the Common Paper DPA, the main agreement and the EU SCCs say different things, what is the ranking?"
    ranking = ("In the event of any conflict or inconsistency, the following order of precedence applies: "
               "(1) the EEA SCCs or UK Addendum; (2) this DPA; and (3) the Agreement.")
    answer = "(1) the EEA SCCs or UK Addendum, (2) the DPA, then (3) the Agreement."
    backed = [qa.Citation(1, "doc.pdf", 6, ranking.replace("(1)", "first").replace("(2)", "then")
                          .replace("(3)", "last"), True, support="supports")]
    judged = verdict.judge(answer, backed, q, _Evidence([_Card(ranking, 6)]), False, lambda: [])
    assert judged.status == verdict.ANSWER and verdict.UNBACKED_FIGURE not in judged.warnings
    judged = verdict.judge(answer + " within 7 days", backed, q, _Evidence([_Card(ranking, 6)]), False, lambda: [])
    assert verdict.UNBACKED_FIGURE in judged.warnings


def test_a_count_in_words_is_not_an_invented_figure():
    """"There are two main routes …" over cards that list them: a count, not a figure the
    documents must hold, so not "not addressed"; a figure in digits found nowhere still is."""
    q = "Under China's Personal Information Protection Law, what routes are available for sending personal information abroad?"
    shown = _Evidence([_Card("第三十八条个人信息处理者因业务等需要，确需向中华人民共和国境外提供个人信息的，应当具备下列条件之一：")])
    two = "There are two main routes: a security assessment and a certification by a professional institution."
    assert verdict.judge(two, [], q, shown, False, lambda: []).status == verdict.NOT_BACKED
    fee = "A filing fee of 5000 yuan is paid for each transfer."
    assert verdict.judge(fee, [], q, shown, False, lambda: []).status == verdict.NOT_ADDRESSED


def test_what_speedup_answered_without_a_figure_does_not_lead():
    """The window walk: "What speedup does tracing give over the interpreter?" answered with a
    card's own sentence, "The speedup vs. the baseline interpreter is shown in parentheses next
    to each test." — backed by the card it copies, and no answer to the question."""
    q = "What speedup does tracing give over the interpreter?"
    card = ("The speedup vs. interpreter is shown in parentheses next to each test. Most programs where the VM "
            "spends the majority of its time running native code have a good speedup.")
    copied = "The speedup vs. the baseline interpreter is shown in parentheses next to each test."
    backed = [qa.Citation(1, "doc.pdf", 13, card, True, support="supports")]
    judged = verdict.judge(copied, backed, q, _Evidence([_Card(card, 13)]), False, lambda: [])
    assert judged.status != verdict.ANSWER and verdict.NO_FIGURE in judged.warnings
    figures = "Tracing achieves 2x-20x speedups over the SpiderMonkey interpreter on many programs."
    card2 = "We validate our tracing techniques in SpiderMonkey, achieving 2x-20x speedups on many programs."
    backed = [qa.Citation(1, "doc.pdf", 2, card2, True, support="supports")]
    judged = verdict.judge(figures, backed, q, _Evidence([_Card(card2, 2)]), False, lambda: [])
    assert judged.status == verdict.ANSWER
