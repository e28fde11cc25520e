"""Which documents a question names: title words, file-name words, title initials."""
from __future__ import annotations

from app.core.search import doc_names

CSA = doc_names.name_terms("Common Paper Cloud Service Agreement (Standard Terms)", "/x/common-paper-csa.pdf")
DPA = doc_names.name_terms("Common Paper Data Processing Agreement (Standard Terms)", "/x/common-paper-dpa.pdf")
BONTERMS = doc_names.name_terms("Bonterms Cloud Terms (Version 1.0)", "/x/bonterms-cloud-terms-v1.0.pdf")
CIVIL = doc_names.name_terms("中华人民共和国民法典 第三编 合同", "/x/civil-code-book3-contracts.pdf")
APACHE = doc_names.name_terms("Apache License, Version 2.0", "/x/apache-2.0.pdf")
NAMES = {1: CSA, 2: DPA, 3: BONTERMS, 4: CIVIL, 5: APACHE}
BODY_USE = {"cloud": 2, "service": 5, "data": 5, "agreement": 4, "common": 3, "paper": 2}


def using(term: str) -> int:
    """How many of the five documents' texts hold a word (1 for the rest: its own)."""
    return BODY_USE.get(term, 1)


def test_name_words_come_from_title_file_name_and_initials():
    assert {"common", "paper", "cloud", "service", "csa"} <= CSA      # initials of the caps run
    assert "bonterm" in BONTERMS and "term" in BONTERMS               # plurals folded
    assert "民法 法典" in CIVIL and "contract" in CIVIL                  # jieba word, file stem
    assert not any(t.isdigit() for t in APACHE)


def test_a_named_document_comes_first_and_ordinary_words_do_not_name():
    assert max((s, d) for d, s in doc_names.mention_scores(
        "Under the Common Paper CSA, who owns feedback?", NAMES, using).items())[1] == 1
    assert set(doc_names.mention_scores("根据Bonterms云服务条款，逾期付款怎么办？", NAMES, using)) == {3}
    assert set(doc_names.mention_scores("民法典对格式条款有什么规定？", NAMES, using)) == {4}
    # "service", "data", "agreement" are in titles but many texts use them: not names
    assert doc_names.mention_scores("Which service data does the agreement cover?", NAMES, using) == {}
    assert doc_names.mention_scores("Who may terminate?", NAMES, using) == {}


def test_one_document_cannot_be_named_apart():
    assert doc_names.mention_scores("Apache patent grant", {5: APACHE}, using) == {}


def test_words_naming_every_searched_document_leave_the_query():
    docs_using = lambda t: 1      # noqa: E731  every name word used only by its own text
    asked = "How often may the customer audit under the Bonterms Cloud Terms?"
    drop = doc_names.scope_words(asked, NAMES, [3], docs_using)
    assert drop == {"bonterm", "cloud", "term"}
    assert doc_names.scope_words(asked, NAMES, [1, 3], docs_using) == {"cloud", "term"}   # the CSA's too
    assert doc_names.without(("bonterms", "audit", "cloud"), drop) == ("audit",)
    assert doc_names.without(("bonterms",), drop) == ("bonterms",)       # never an empty query
