"""Pages from chunks (issue 19): a multi-page Chinese article is attributed to the page that
holds the question's words, and `convincing` turns away questions the passages do not hold."""
from __future__ import annotations

from app.core.search import evidence, fts, pages
from app.core.search.fts import ChunkHit
from app.core.search.queries import parse_query


def test_chinese_phrase_terms_pick_the_page_of_a_multi_page_article():
    """Article 47 of the Labour Contract Law starts on one page and ends on the next; the
    question's 3+-character words are bigram phrases, which used to count for no page, so
    the chunk fell back to its first page."""
    first = "第四十七条 经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准向劳动者支付。"
    second = "劳动者月工资高于上年度职工月平均工资三倍的，向其支付经济补偿的年限最高不超过十二年。"
    text = first + "\n" + second
    assert "平均 均工 工资" in parse_query("职工月平均工资").terms   # a jieba word as a phrase
    weights = {"经济": 1.0, "补偿": 1.0, "平均 均工 工资": 3.0}          # only the phrase tells them apart
    assert fts._best_page(text, [[6, 0], [7, len(first) + 1]], weights) == 7


def hit(cid, page, score, start=0, end=0):
    return ChunkHit(cid, 1, page, end or page, "", f"chunk {cid}", score, start or page)


def test_by_page_keeps_one_hit_per_page_best_first():
    found = [hit(1, 3, 5.0), hit(2, 4, 4.0), hit(3, 3, 3.5), hit(4, 4, 3.0)]
    assert [(h.page, h.score) for h in pages.by_page(found, "max")] == [(3, 5.0), (4, 4.0)]
    summed = pages.by_page(found, "sum")
    assert [h.page for h in summed] == [3, 4] and summed[0].score == 5.0 + pages.SUM_SHARE * 3.5


def test_convincing_refuses_passages_without_the_question_words():
    class H:
        def __init__(self, text):
            self.text = text
    about_rent = [H("The monthly rent is 1,850 euros, payable in advance on the first day of each month.")]
    assert evidence.convincing(about_rent, "en", "When is the monthly rent payable?")
    assert not evidence.convincing(about_rent, "en", "Which encryption algorithm protects data at rest?")
    assert not evidence.convincing([], "en", "When is the monthly rent payable?")
    # asked across languages: no shared words to count, so not refused on words
    assert evidence.convincing(about_rent, "zh", "每月租金是多少？")


def test_equal_evidence_goes_to_the_part_that_repeats_the_terms():
    first = "第四十七条 经济补偿按劳动者在本单位工作的年限，每满一年支付一个月工资的标准向劳动者支付。"
    second = ("劳动者月工资高于上年度职工月平均工资三倍的，向其支付经济补偿的标准按职工月平均工资三倍的数额支付，"
              "年限最高不超过十二年。本条所称月工资是指劳动者在劳动合同解除或者终止前十二个月的平均工资。")
    weights = {"工资": 1.0, "经济": 1.0, "补偿": 1.0}     # all three in both parts
    assert fts._best_page(first + "\n" + second, [[6, 0], [7, len(first) + 1]], weights) == 7


def test_index_counts_are_kept_until_the_library_changes(lib):
    """Term counts (IDF, documents using a term) are cached per connection between searches
    and recounted once the library changes: by this connection or by another process."""
    import sqlite3

    from app.core.search.queries import quote
    from tests.support.corpus import corpus_path

    lib.add(corpus_path("contracts-en/common-paper-mnda.pdf"))
    con = lib._con
    term = "confidential"

    def real_docs():
        return con.execute("SELECT count(DISTINCT c.doc_id) FROM chunk_fts JOIN chunks c ON c.id = "
                           "chunk_fts.rowid WHERE chunk_fts MATCH ?", ("body : " + quote(term),)).fetchone()[0]
    assert fts.docs_using(con, term) == real_docs() == 1
    idf_one = fts._idf(con, (term,))[term]
    lib.add(corpus_path("contracts-en/common-paper-baa.pdf"))        # this connection writes
    assert fts.docs_using(con, term) == real_docs() == 2
    assert fts._idf(con, (term,))[term] != idf_one
    other = sqlite3.connect(lib.path)                                  # another process's write
    other.execute("DELETE FROM chunk_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id = 2)")
    other.commit()
    other.close()
    assert fts.docs_using(con, term) == real_docs() == 1
