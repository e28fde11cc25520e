"""Clause numbering (EN + ZH), running lines, chunk shapes, text normalisation."""
from __future__ import annotations

import pytest

from app.core.documents import chunking
from app.core.documents.chunking import make_chunks
from app.core.documents.ingest import ingest
from app.core.documents.pdf import read_file
from app.core.documents.structure import (
    cn_to_int,
    detect_language,
    heading_of,
    roman_to_int,
    running_keys,
    strip_running,
)
from app.core.textnorm import normalize


@pytest.mark.parametrize("line, label, level, key", [
    ("Section 5.2 Payment Terms", "5.2", 2, "5.2"),
    ("5.2 Automatic Payment. For a Payment Process", "5.2", 2, "5.2"),
    ("12.1.3 Notices", "12.1.3", 2, "12.1.3"),
    ("22.5. ", "22.5", 2, "22.5"),
    ("1. Definitions", "1", 1, "1"),
    ("Article VII. Miscellaneous", "Article VII", 1, "7"),
    ("ARTICLE 3", "Article 3", 1, "3"),
    ("(a) the work must carry notices", "(a)", 3, "a"),
    ("第五条　处理个人信息应当遵循合法", "第五条", 2, "5"),
    ("第五百八十六条　当事人可以约定", "第五百八十六条", 2, "586"),
    ("第5.2条 付款", "第5.2条", 2, "5.2"),
    ("第一章 总 则", "第一章", 1, "章1"),
    ("第一节 一般规定", "第一节", 1, "节1"),
    ("（一）法律上或者事实上不能履行；", "（一）", 3, "1"),
    ("一、一般规定", "一、", 1, "、1"),
])
def test_headings(line, label, level, key):
    h = heading_of(line)
    assert h is not None and (h.label, h.level, h.key) == (label, level, key)


@pytest.mark.parametrize("line", [
    "30 days of an automatic payment", "1.5% per month or the maximum", "2007 Copyright (C)",
    "第五百一十条、第五百一十一条等规定予以确定。", "Customer will pay Provider Fees", "",
])
def test_not_headings(line):
    assert heading_of(line) is None


def test_titles_come_from_the_heading_line_only_for_titled_clauses():
    assert heading_of("4.6 Payment Dispute. If Customer has").title == "Payment Dispute"
    assert heading_of("第五百八十六条　当事人可以约定一方向对方给付定金").title == ""


@pytest.mark.parametrize("text, value", [("五", 5), ("十二", 12), ("二十", 20), ("五百八十六", 586),
                                         ("一千零一", 1001), ("二〇二三", 2023), ("586", 586)])
def test_chinese_numerals(text, value):
    assert cn_to_int(text) == value


def test_roman_numerals():
    assert [roman_to_int(r) for r in ("VII", "iv", "XLII")] == [7, 4, 42]
    assert roman_to_int("abc") is None


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()


def _pages(n: int) -> list[list[str]]:
    return [["ACME Master Agreement", f"Clause about {WORDS[i]}", f"and {WORDS[-i]} too",
             f"Page {i} of {n}"] for i in range(1, n + 1)]


def test_running_lines_recurring_modulo_digits():
    pages = _pages(6)
    keys = running_keys(pages)
    assert strip_running(pages[2], keys) == ["Clause about delta", "and hotel too"]


def test_page_number_footer_found_even_in_short_documents():
    pages = [["Body one", "Page 1 of 2"], ["Body two", "第 2 页，共 2 页"]]
    keys = running_keys(pages)
    assert [strip_running(p, keys) for p in pages] == [["Body one"], ["Body two"]]


def test_a_footer_that_extends_the_running_title_goes_with_it():
    """The scanned MNDA (corpus/bad/scanned-image-only-en.pdf, two pages): the title runs at the top of
    both, its footer "<title> Version 1.0 free to use under CC BY" survived OCR on one page only; it was
    glued to the last sentence of that page's card. A sentence that merely mentions the title stays."""
    title = "Common Paper Mutual Non-Disclosure Agreement"
    pages = [[title, "1. Introduction. This agreement allows each party", "written notice.", "Page 3 of 5"],
             [f", {title}", f"{title} terms are these: the Receiving Party will cease", "form the same agreement.",
              f"{title} Version 1.0 free to use under CC BY", "Page 4 of 5"]]
    keys = running_keys(pages)
    assert [strip_running(p, keys) for p in pages] == [
        ["1. Introduction. This agreement allows each party", "written notice."],
        [f"{title} terms are these: the Receiving Party will cease", "form the same agreement."]]


def test_clause_number_lines_are_not_mistaken_for_running_lines():
    pages = [[f"{i}.1.", f"Clause {i} text that differs {i * 7}", "filler"] for i in range(1, 8)]
    keys = running_keys(pages)
    assert all(p[0] in strip_running(p, keys) for p in pages)


def test_language_detection():
    assert detect_language(["当事人可以约定一方向对方给付定金作为债权的担保。"] * 3) == "zh"
    assert detect_language(["The parties agree as follows."] * 3) == "en"
    assert detect_language(["木兰宽松许可证，第2版，条款结束"] * 2 + ["Mulan license terms"] * 2) == "mixed"


def test_bonterms_clauses_are_chunks(corpus):
    r = ingest(read_file(corpus / "contracts-en" / "bonterms-cloud-terms-v1.0.pdf"))
    by_key = {k: p for p in r.pieces for k in p.keys}
    assert {"22.5", "12.1", "18.4"} <= set(by_key)
    p = by_key["22.5"]
    assert p.chunk.page_start == 5 and "Order of Precedence" in p.heading
    assert "First any Additional Terms and then Attachments will control" in p.chunk.text


def test_civil_code_articles_are_chunks(corpus):
    r = ingest(read_file(corpus / "contracts-zh" / "civil-code-book3-contracts.pdf"))
    sections = {p.chunk.section: p for p in r.pieces}
    p = sections["第五百八十六条"]
    assert p.chunk.page_start == 12 and "不得超过主合同标的额的百分之二十" in p.chunk.text
    assert "违约责任" in p.heading                      # enclosing chapter title
    assert "586" in p.keys
    keys = {k for p in r.pieces for k in p.keys}
    assert {"463", "988"} <= keys                        # first and last article of Book III


def test_long_clauses_split_with_overlap_and_tiny_ones_merged():
    long_body = [f"sentence number {i} of a long clause that keeps going and going" for i in range(80)]
    pages = [["1. Definitions", *long_body[:40]], [*long_body[40:], "2. Tiny", "short", "3. Next clause",
                                                   *long_body[:10]]]
    pieces = make_chunks(pages)
    firsts = [p for p in pieces if "1" in p.keys]
    assert len(firsts) >= 3 and all(chunking.size(p.chunk.text) <= chunking.MAX_SIZE for p in firsts)
    a, b = firsts[0].chunk.text.splitlines(), firsts[1].chunk.text.splitlines()
    assert a[-1] in b[:4]                                # overlap carried into the next piece
    assert firsts[0].chunk.page_start == 1 and any(p.chunk.page_end == 2 for p in firsts)
    merged = [p for p in pieces if "2" in p.keys]
    assert merged and "3" in merged[0].keys              # "2. Tiny" merged with its neighbour


@pytest.mark.parametrize("raw, norm", [
    ("Deﬁnitions and ﬂows", "definitions and flows"),
    ("the “Enhanced Cap” isn’t", 'the "enhanced cap" isn\'t'),
    ("liabil-\nity and NON-\nINFRINGEMENT", "liability and non- infringement"),
    ("2020–2024 — ok", "2020-2024 - ok"),
    ("  many\n\tspaces  ", "many spaces"),
    ("定金合同自实际交\n付定金时成立。", "定金合同自实际交付定金时成立。"),
    ("第 12 页，共 44 页", "第12页,共44页"),
    ("Mulan PSL v2 (木兰宽松许可证， 第2版)", "mulan psl v2 (木兰宽松许可证,第2版)"),
])
def test_normalize(raw, norm):
    assert normalize(raw) == norm
