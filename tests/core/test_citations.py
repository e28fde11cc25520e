"""Citation verification against real page text, and highlight rectangles from PyMuPDF."""
from __future__ import annotations

import pymupdf

from app.core.answer.citations import highlight_rects, locate, verify
from tests.support.corpus import corpus_path, dev_questions


def pages_of(rel: str) -> dict[int, str]:
    with pymupdf.open(corpus_path(rel)) as doc:
        return {i + 1: p.get_text() for i, p in enumerate(doc)}


def gold_entries():
    for q in dev_questions():
        for g in q["gold"]:
            yield q["id"], g


def test_every_gold_quote_verifies_on_its_page():
    cache, failures, total = {}, [], 0
    for qid, g in gold_entries():
        pages = cache.setdefault(g["doc"], pages_of(g["doc"]))
        cit = verify(1, g["doc"], g["page"], g["quote"], pages)
        total += 1
        if not (cit.verified and cit.page == g["page"]):
            failures.append((qid, g["page"], cit.page, g["quote"][:60]))
    assert total > 60
    assert not failures, failures


def test_wrong_page_is_corrected():
    pages = pages_of("contracts-en/bonterms-cloud-terms-v1.0.pdf")
    quote = "Late payments are subject to a charge of 1.5% per month"
    cit = verify(1, "x.pdf", 5, quote, pages)
    assert cit.verified and cit.page == 2 and "corrected" in cit.note


def test_tolerates_case_spacing_quotes_and_small_slips():
    pages = pages_of("contracts-en/bonterms-cloud-terms-v1.0.pdf")
    sloppy = "LATE   payments are subject to a charge of 1.5% per month or the maximum amount allowed by law"
    assert verify(1, "x", 2, sloppy, pages).verified
    slip = "Late payments are subject to a charge of 1.5% each month or the maximum amount allowed by Law"
    cit = verify(1, "x", 2, slip, pages)
    assert cit.verified and "near-verbatim" in cit.note and "per month" in cit.quote


def test_invented_quote_is_unverified():
    pages = pages_of("contracts-en/bonterms-cloud-terms-v1.0.pdf")
    cit = verify(1, "x", 2, "The supplier may terminate for convenience on ten days notice", pages)
    assert not cit.verified and cit.page == 2


def test_chinese_quote_across_line_wraps():
    pages = pages_of("contracts-zh/civil-code-book3-contracts.pdf")
    page = 12
    text = " ".join(pages[page].split())
    # take a run of 20 characters from the middle of the page, without its line breaks
    start = len(text) // 2
    quote = "".join(text[start:start + 40].split())[:20]
    assert verify(1, "x", page, quote, pages).verified
    assert not verify(1, "x", page, "本合同自双方签字之日起永久有效且不得解除", pages).verified


def test_hyphenated_and_ligature_text():
    pages = pages_of("papers/tracemonkey-pldi-09.pdf")
    # the text layer has ﬁ/ﬂ ligatures and hyphenated line ends; a plain-ASCII quote must match
    assert locate("languages such as JavaScript are more difficult to compile than statically typed ones", 1, pages)
    assert locate("an elegant and efficient way of incrementally compiling lazily discovered alternative paths", 1, pages)


def test_highlight_rects_cover_the_quote():
    path = str(corpus_path("contracts-en/bonterms-cloud-terms-v1.0.pdf"))
    rects = highlight_rects(path, 2, "Late payments are subject to a charge of 1.5% per month")
    assert rects
    for x0, y0, x1, y1 in rects:
        assert x1 > x0 and y1 > y0


def test_highlight_rects_on_rotated_page():
    path = str(corpus_path("bad/rotated-pages.pdf"))
    with pymupdf.open(path) as doc:
        words = doc[1].get_text().split()[20:26]
    assert highlight_rects(path, 2, " ".join(words))


def test_quotable_sentences_are_the_pages_own_words_without_markers():
    from app.core.answer import citations
    context = ("=== doc 1: Mutual NDA ===\n[doc 1, p. 1]\nThe Receiving Party will hold the informa-\ntion "
               "in confidence. It may share it with\nemployees who need to know.\n1.\n\n[doc 1, p. 2]\n"
               "第五条 当事人可以约定\n违约金。违约金不得超过损失。\n" + "word " * 90 + "end.")
    quotes = citations.quotable(context)
    assert list(quotes[:2]) == ["The Receiving Party will hold the information in confidence.",
                          "It may share it with employees who need to know."]
    assert "第五条当事人可以约定违约金。" in quotes and "违约金不得超过损失。" in quotes
    assert not any("[doc" in q or "===" in q or q == "1." for q in quotes)
    assert max(len(q.split()) for q in quotes) == citations.QUOTE_WORDS     # long sentences cut
    pages = {1: context.split("[doc 1, p. 2]")[0], 2: context.split("[doc 1, p. 2]")[1]}
    for q in quotes:                                  # every offered quote verifies on its page
        assert verify(1, "nda.pdf", 1, q, pages).verified


def test_quotable_gives_up_on_a_context_too_long_to_list():
    from app.core.answer import citations
    many = " ".join(f"Sentence number {i} is here." for i in range(citations.MAX_QUOTABLE + 5))
    assert citations.quotable(many) == ()


def test_a_quote_cut_inside_a_word_is_shown_as_the_pages_whole_words():
    # seen in CI: a review part quoted "is agreement is the only …" of "This Agreement is the only …"
    page = ("12. General Terms\n12.1 Entire Agreement. This Agreement is the only agreement between\n"
            "the parties about its subject and supersedes any prior agreements.")
    cut = verify(1, "a.pdf", 1, "is agreement is the only agreement between the parties about", {1: page})
    assert cut.verified and cut.quote == "This Agreement is the only agreement between the parties about"
    slip = verify(1, "a.pdf", 1, "This agreement is the only agreemnt between the parties about its subject", {1: page})
    assert slip.verified and "near-verbatim" in slip.note
    assert slip.quote == "This Agreement is the only agreement between the parties about its subject"
    whole = verify(1, "a.pdf", 1, "the only agreement between the parties", {1: page})
    assert whole.quote == "the only agreement between the parties"      # already whole words: as quoted
