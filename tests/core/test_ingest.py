"""Ingestion of every corpus document: page counts, language, running lines, gold quotes."""
from __future__ import annotations

import re

import pymupdf
import pytest

from app.core.documents.ingest import ingest
from app.core.documents.pdf import read_file
from app.core.textnorm import normalize
from tests.support.corpus import CORPUS, corpus_files, corpus_path, dev_questions

CJK = r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"


def manifest_pages() -> dict[str, int]:
    """{'contracts-en/x.pdf': pages} from the tables in MANIFEST.md."""
    counts, folder = {}, ""
    for line in corpus_path("MANIFEST.md").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^## (\S+)/", line):
            folder = m.group(1)
        elif m := re.match(r"^\| (\S+\.pdf) \| (\d+) \|", line):
            counts[f"{folder}/{m.group(1)}"] = int(m.group(2))
    return counts


def eval_norm(text: str) -> str:
    """The gold-quote normalisation of shared/eval/README.md."""
    text = re.sub(r"\s+", " ", text)
    text = re.sub(rf" (?={CJK})", "", text)
    return re.sub(rf"(?<={CJK}) ", "", text).strip()


def test_manifest_lists_every_corpus_file(corpus):
    assert sorted(manifest_pages()) == sorted(str(p.relative_to(corpus)) for p in corpus_files())
    assert sum(manifest_pages().values()) == 212


# Read at collection, before any fixture: without the corpus, one case that the corpus fixture fails
# (./run-tests, CI) or skips.
@pytest.mark.parametrize("rel", sorted(manifest_pages()) if (CORPUS / "MANIFEST.md").is_file() else ["?"])
def test_every_document_ingests(corpus, rel):
    result = ingest(read_file(corpus / rel))
    assert len(result.pages) == manifest_pages()[rel]
    assert [p.number for p in result.pages] == list(range(1, len(result.pages) + 1))
    assert result.pieces, "no chunks"
    expected = "zh" if rel.startswith("contracts-zh") else "mixed" if "mulan" in rel else "en"
    assert result.lang == expected
    assert result.title and not result.warnings
    for piece in result.pieces:
        c = piece.chunk
        assert 1 <= c.page_start <= c.page_end <= len(result.pages)
        assert piece.spans[0] == (c.page_start, 0) and piece.spans[-1][0] == c.page_end


def test_page_text_is_pymupdf_text_unmodified(corpus):
    path = corpus / "contracts-en" / "bonterms-cloud-terms-v1.0.pdf"
    result = ingest(read_file(path))
    with pymupdf.open(path) as doc:
        assert [p.text for p in result.pages] == [page.get_text() for page in doc]
        assert result.pages[0].width == pytest.approx(doc[0].rect.width)


def test_every_gold_quote_is_in_its_stored_page():
    cache, missing = {}, []
    for q in dev_questions():
        for g in q["gold"]:
            if g["doc"] not in cache:
                cache[g["doc"]] = ingest(read_file(corpus_path(g["doc"]))).pages
            page = cache[g["doc"]][g["page"] - 1].text
            if eval_norm(g["quote"]) not in eval_norm(page) or \
                    normalize(g["quote"]) not in normalize(page):
                missing.append((q["id"], g["page"], g["quote"][:50]))
    assert not missing, missing


@pytest.mark.parametrize("rel, footer", [
    ("contracts-en/common-paper-csa.pdf", r"Page \d+ of 12"),
    ("contracts-zh/pipl.pdf", r"第 \d+ 页，共 9 页"),
    ("contracts-en/bonterms-cloud-terms-v1.0.pdf", r"Page \| \d+"),
    ("contracts-en/bonterms-cloud-terms-v1.0.pdf", r"© 2022 Bonterms, Inc\. Free to use"),
    ("licenses/mulan-psl-v2.pdf", r"Page \d of 4 / 第 \d 页"),
])
def test_running_headers_and_footers_stay_out_of_chunks(corpus, rel, footer):
    result = ingest(read_file(corpus / rel))
    assert all(re.search(footer, p.text) for p in result.pages[1:]), "footer is in the page text"
    assert not any(re.search(footer, p.chunk.text) for p in result.pieces)


def test_running_title_line_removed_but_pages_cited_by_physical_index(corpus):
    result = ingest(read_file(corpus / "contracts-zh" / "pipl.pdf"))
    title = "中华人民共和国个人信息保护法"
    assert sum(p.chunk.text.count(title + "\n") for p in result.pieces) <= 1  # only the real title
    eighth = [p for p in result.pieces if p.chunk.page_start <= 8 <= p.chunk.page_end]
    assert eighth and any("五千万元" in p.chunk.text for p in eighth)


def test_two_column_layout_reads_left_column_first(corpus):
    result = ingest(read_file(corpus / "bad" / "two-column-layout.pdf"))
    text = result.pages[0].text
    left = text.index("The licenses for most software")
    right = text.index("Finally, every program is threatened")
    assert left < right


def test_ligatures_and_hyphenation_in_paper_are_searchable_text(corpus):
    result = ingest(read_file(corpus / "papers" / "tracemonkey-pldi-09.pdf"))
    joined = normalize("\n".join(p.chunk.text for p in result.pieces))
    assert "\ufb01" not in joined and "specialization" in joined


def test_progress_reports_every_page(corpus):
    seen = []
    ingest(read_file(corpus / "licenses" / "apache-2.0.pdf"), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(i, 4) for i in range(1, 5)]
