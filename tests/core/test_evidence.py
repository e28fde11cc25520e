"""Evidence cards (issue 29): the search's best sentences, quoted as printed and checked on
their page, with the clause they sit under — found without any model, on real PDFs."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core import textnorm
from app.core.answer import qa
from app.core.answer.citations import Citation, verify
from app.core.answer.evidence import find_evidence
from app.core.answer.values import Answer
from app.core.library import Library

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "common-paper-mnda.pdf"


@pytest.fixture
def sample(tmp_path):
    lib = Library(tmp_path / "library.sqlite")
    info = lib.add(SAMPLE)
    yield lib, [qa.DocRef(1, info.id, "mnda.pdf")]
    lib.close()


def _pages(lib, doc_id) -> dict[int, str]:
    return {p.number: p.text for p in lib.pages(doc_id)}


def test_cards_quote_the_page_as_printed_and_name_the_clause(sample):
    lib, refs = sample
    ev = find_evidence(lib, refs, "Which state's law governs this agreement?")
    assert ev.addressed and 3 <= len(ev.cards) <= 5
    pages = _pages(lib, refs[0].doc_id)
    for card in ev.cards:
        checked = verify(card.doc_id, card.doc, card.page, card.quote, pages)
        assert checked.verified and checked.page == card.page and not checked.note, card
    best = ev.cards[0]
    assert "governed by" in best.quote and "laws of the State" in best.quote   # the sentence, as printed
    assert best.clause == "Section 9 Governing Law and Jurisdiction"
    assert ev.to_dict()["cards"][0].keys() == {"doc", "page", "quote", "clause", "score", "ms"}


def test_running_footers_never_join_a_quote(corpus, tmp_path):
    lib = Library(tmp_path / "library.sqlite")
    info = lib.add(corpus / "contracts-en/common-paper-dpa.pdf")
    ev = find_evidence(lib, [qa.DocRef(1, info.id, "dpa.pdf")],
                       "For how long after the Common Paper DPA ends must the vendor keep records of compliance?")
    assert ev.cards
    for card in ev.cards:      # "Common Paper Data Processing Agreement - Standard Terms Page 4 of 7"
        assert "Standard Terms Page" not in card.quote, card.quote
    assert any("3 years" in c.quote for c in ev.cards)


def test_chinese_cards_name_the_article(corpus, tmp_path):
    lib = Library(tmp_path / "library.sqlite")
    info = lib.add(corpus / "contracts-zh/labor-contract-law.pdf")
    ev = find_evidence(lib, [qa.DocRef(1, info.id, "labor.pdf")], "用人单位招用劳动者时可以扣押劳动者的居民身份证吗？")
    assert ev.addressed
    card = next(c for c in ev.cards if "扣押" in c.quote)
    assert textnorm.is_chinese(card.quote) and card.clause.startswith("第") and card.clause.endswith("条")


def test_a_question_the_document_does_not_address_still_shows_the_nearest_passages(sample):
    lib, refs = sample
    ev = find_evidence(lib, refs, "What is the monthly subscription fee payable under this agreement?")
    assert not ev.addressed
    assert ev.cards        # the nearest passages, shown anyway


def test_passages_on_topic_that_set_no_figure_say_so_in_the_exports(sample):
    """The NDA's return clause says "promptly", no number of days: the cards say the passages set
    no figure (not that the document is off topic), and so do the exports (the command line's
    words: tests/e2e/test_not_found_by_model.py)."""
    from app.core.answer import export_formats
    from app.core.answer.evidence import wording
    lib, refs = sample
    ev = find_evidence(lib, refs, "How many days do we have to destroy the other side's confidential information "
                                  "after they ask us to?")
    assert not ev.addressed and ev.no_figure and ev.cards
    assert export_formats._evidence({"evidence": ev.to_dict()})[0] == wording.NO_FIGURE
    off_topic = find_evidence(lib, refs, "What is the purchase price of the shares?")
    assert not off_topic.addressed and not off_topic.no_figure
    assert export_formats._evidence({"evidence": off_topic.to_dict()})[0] == wording.NOT_ADDRESSED


def test_the_retrieval_prompt_starts_with_the_cards_pages(sample):
    lib, refs = sample
    question = "Which state's law governs this agreement?"
    ev = find_evidence(lib, refs, question)
    conv = qa.Conversation()
    options = qa.AskOptions(mode="retrieval")
    plan = qa.choose_context(lib, refs, question, None, 8192, conv, options, evidence=ev)
    prompt = qa.build_prompt(lib, refs, question, None, conv, plan, options)
    assert prompt.passages[0].page == ev.cards[0].page and prompt.passages[0].best


def _answer(support: str, evidence) -> Answer:
    cite = Citation(1, "mnda.pdf", 4, "This MNDA and all matters relating hereto are governed by", True, support=support)
    return Answer(text="Delaware law.", citations=[cite], mode="retrieval", not_stated=False, evidence=evidence)


def test_an_answer_leads_only_when_its_citations_back_it(sample):
    lib, refs = sample
    ev = find_evidence(lib, refs, "Which state's law governs this agreement?")
    assert _answer("supports", ev).headline == "answer"
    for support in ("unclear", "contradicts"):
        unbacked = _answer(support, ev)
        assert unbacked.headline == "evidence" and not unbacked.supported
        data = unbacked.to_dict()
        assert list(data)[0] == "evidence" and data["headline"] == "evidence"
    assert _answer("unclear", None).headline == "answer"      # no cards (a review's part): as before


def test_a_sentence_that_only_names_the_document_is_never_a_card(corpus, tmp_path):
    from app.core.answer.evidence import cards
    from app.core.search.evidence import Words
    lib = Library(tmp_path / "library.sqlite")
    info = lib.add(corpus / "contracts-en" / "bonterms-cloud-terms-v1.0.pdf")
    refs = [qa.DocRef(1, info.id, "bonterms-cloud-terms-v1.0.pdf")]
    doc = cards._DocPages(lib, refs[0])
    title = next(s.text for s in doc.sentences(1) if "Bonterms Cloud Terms" in s.text and len(s.text.split()) <= 6)
    assert doc.only_names(Words.of(title))
    assert not doc.only_names(Words.of("Late payments are subject to a charge of 1.5% per month"))
    ev = find_evidence(lib, refs, "What do the Bonterms Cloud Terms say about the version of the agreement?")
    assert ev.cards and all(c.quote != title for c in ev.cards)
    lib.close()


def test_over_many_documents_one_search_ranks_their_pages_against_each_other(corpus, tmp_path):
    lib = Library(tmp_path / "library.sqlite")
    files = sorted((corpus / "contracts-en").glob("*.pdf"))
    refs = [qa.DocRef(i, lib.add(f).id, f.name) for i, f in enumerate(files, 1)]
    assert len(refs) > qa.RETRIEVAL_PAGES
    question = "How many days does the customer have to dispute an invoice?"
    calls = []
    search = lib.search
    lib.search = lambda *a, **k: calls.append(k.get("doc_ids")) or search(*a, **k)
    ranked = qa.ranked_hits(lib, refs, question)
    assert calls == [[r.doc_id for r in refs]]          # one search, not one per document
    scores = [h.score for _, h in ranked]
    assert ranked and scores == sorted(scores, reverse=True)
    assert all(ref.doc_id == h.doc_id for ref, h in ranked)
    assert [(h.doc_id, h.page) for _, h in ranked] == \
        [(h.doc_id, h.page) for h in search(question, doc_ids=[r.doc_id for r in refs], k=2 * qa.RETRIEVAL_PAGES)]
    calls.clear()                                      # a comparison of two still gives each its share
    both = qa.ranked_hits(lib, refs[:2], question)
    assert len(calls) == 2 and {ref.doc_id for ref, _ in both} == {r.doc_id for r in refs[:2]}
    lib.close()
