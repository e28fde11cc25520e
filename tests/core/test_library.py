"""The library facade: hashing, one-transaction adds, persistence, chat history."""
from __future__ import annotations

import os
import shutil
import sqlite3

import pymupdf
import pytest

from app.core import paths
from app.core.library import Library
from tests.support.library_rows import row_counts
from tests.support.strict import require_dense

NDA = "contracts-en/common-paper-mnda.pdf"


def test_default_location_is_under_pagewise_home(pagewise_home):
    lib = Library()
    try:
        assert lib.path == paths.library_path() and str(lib.path).startswith(str(pagewise_home))
    finally:
        lib.close()


def test_add_then_read_back(corpus, lib):
    info = lib.add(corpus / NDA)
    assert info.page_count == 5 and info.lang == "en" and len(info.sha256) == 64
    assert info.path == str((corpus / NDA).resolve()) and info.title.startswith("Common Paper Mutual NDA")
    with pymupdf.open(corpus / NDA) as doc:
        assert [p.text for p in lib.pages(info.id)] == [p.get_text() for p in doc]
    assert lib.page_text(info.id, 3) == lib.pages(info.id)[2].text
    chunks = lib.chunks(info.id)
    assert chunks and [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert lib.documents() == [info] and lib.get(info.id) == info


def test_readding_same_file_is_instant_and_keeps_id(corpus, tmp_path, monkeypatch, lib):
    from app.core.library import library as library_module
    first = lib.add(corpus / NDA)
    copy = tmp_path / "renamed copy.pdf"
    shutil.copy(corpus / NDA, copy)
    ingested = []                    # "instant": found by its SHA-256, never parsed again
    real = library_module.ingest
    monkeypatch.setattr(library_module, "ingest", lambda *a: ingested.append(a) or real(*a))
    again = lib.add(copy)
    assert again.id == first.id and ingested == []
    assert again.path == first.path and again.last_path == str(copy.resolve())
    assert len(lib.documents()) == 1


def test_library_persists_across_reopen(corpus, tmp_path):
    db = tmp_path / "lib.sqlite"
    lib = Library(db)
    doc_id = lib.add(corpus / NDA).id
    lib.close()
    lib = Library(db)
    assert [d.id for d in lib.documents()] == [doc_id]
    assert lib.search("confidential information", doc_ids=[doc_id])
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] >= 1
    con.close()
    lib.close()


def test_crash_mid_ingest_leaves_nothing_half_written(corpus, tmp_path):
    db = tmp_path / "lib.sqlite"
    lib = Library(db)
    lib.add(corpus / "licenses" / "apache-2.0.pdf")
    before = row_counts(db)

    def explode(done, total):
        if done == 3:
            raise RuntimeError("injected crash at page 3")

    with pytest.raises(RuntimeError, match="injected"):
        lib.add(corpus / NDA, progress=explode)
    assert row_counts(db) == before
    assert lib.add(corpus / NDA).page_count == 5       # and the next try works
    lib.close()


def test_crash_while_writing_rolls_back(corpus, tmp_path, monkeypatch):
    from app.core.search import fts
    db = tmp_path / "lib.sqlite"
    lib = Library(db)
    real = fts.add_pieces

    def failing(con, rows, title):               # the chunks are written, then the disk fails
        real(con, rows[:3], title)
        raise sqlite3.OperationalError("disk I/O error (injected)")

    monkeypatch.setattr(fts, "add_pieces", failing)
    from app.core.storage import StorageError
    with pytest.raises(StorageError, match="input/output error"):   # one line for the user, nothing half-written
        lib.add(corpus / NDA)
    assert row_counts(db) == (0, 0, 0, 0)
    lib.close()


def test_progress_callback(corpus, lib):
    seen = []
    lib.add(corpus / NDA, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (5, 5) and len(seen) == 5


def test_exchanges_per_document_set_oldest_first(corpus, lib):
    a = lib.add(corpus / NDA).id
    b = lib.add(corpus / "contracts-en/common-paper-csa.pdf").id
    e1 = lib.add_exchange([a], "Who are the parties?", '{"answer": "A and B"}')
    e2 = lib.add_exchange([a], "How long?", '{"answer": "1 year"}')
    e3 = lib.add_exchange([b, a], "Compare", '{"answer": "…"}')
    assert [e.id for e in lib.exchanges([a])] == [e1, e2]
    assert [e.question for e in lib.exchanges([a])] == ["Who are the parties?", "How long?"]
    assert [e.id for e in lib.exchanges([a, b])] == [e3] == [e.id for e in lib.exchanges([b, a])]
    assert lib.exchanges([b]) == []


def test_unknown_ids_raise_document_errors(lib):
    from app.core.documents.read_errors import DocumentError
    with pytest.raises(DocumentError):
        lib.get(42)
    with pytest.raises(DocumentError):
        lib.page_text(42, 1)


def test_search_is_bm25_alone_without_the_optional_model(corpus, monkeypatch, lib):
    from app.core.search import dense
    monkeypatch.setattr(dense, "available", lambda: False)
    doc = lib.add(corpus / "licenses" / "apache-2.0.pdf").id
    assert lib.embed() == 0
    assert lib.search("Grant of Patent License", doc_ids=[doc])[0].page == 2


@pytest.mark.slow          # embeds whole documents: 15-100 s on 2 cores
def test_dense_layer_answers_a_chinese_question_about_an_english_licence(corpus, lib):
    require_dense()
    doc = lib.add(corpus / "licenses" / "apache-2.0.pdf").id
    q = "专利诉讼会导致许可终止吗？"          # "does patent litigation end the licence?"
    assert lib.search(q, doc_ids=[doc]) == []                        # BM25 has no shared words
    seen = []
    assert lib.embed(progress=lambda d, t: seen.append((d, t))) == len(lib.chunks(doc))
    assert seen[-1][0] == seen[-1][1] and lib.embed() == 0          # nothing left to do
    assert lib.search(q, doc_ids=[doc], k=1)[0].page == 2            # Section 3, patent licence


@pytest.mark.slow          # embeds whole documents: 15-100 s on 2 cores
def test_library_wide_search_finds_a_chinese_clause_for_an_english_question(corpus, lib):
    """English and Chinese documents together: the dense weight is chosen per document,
    so vectors can still reach the Chinese law (one weight for the mixed library let the
    English documents' BM25 words win: the MNDA and the MPL came first)."""
    require_dense()
    for name in ("licenses/apache-2.0.pdf", "contracts-zh/pipl.pdf", NDA, "licenses/mpl-2.0.pdf"):
        lib.add(corpus / name)
    lib.embed()
    q = "Whose consent is needed before processing the personal information of a child under fourteen?"
    top = lib.search(q, k=1)[0]
    assert (os.path.basename(top.path), top.page) == ("pipl.pdf", 4)     # Article 31


def test_remove_deletes_document_chunks_index_and_history(corpus, tmp_path):
    db = tmp_path / "lib.sqlite"
    lib = Library(db)
    keep = lib.add(corpus / "licenses" / "apache-2.0.pdf").id
    gone = lib.add(corpus / NDA).id
    lib.add_exchange([gone], "q", "{}")
    lib.add_exchange([keep], "q", "{}")
    lib.remove(gone)
    assert [d.id for d in lib.documents()] == [keep]
    assert lib.exchanges([gone]) == [] and len(lib.exchanges([keep])) == 1
    assert row_counts(db) == (1, 4, len(lib.chunks(keep)), len(lib.chunks(keep)))
    assert all(h.doc_id == keep for h in lib.search("confidential information license"))
    lib.close()


def test_two_processes_adding_the_same_file_end_with_one_document(corpus, tmp_path, monkeypatch):
    from app.core.library import library as library_module
    db = tmp_path / "lib.sqlite"
    first, second = Library(db), Library(db)        # two connections, as two processes have
    real = library_module.ingest

    def racing(raw, password, progress):             # the other process finishes first
        monkeypatch.setattr(library_module, "ingest", real)
        first.add(raw.path)
        return real(raw, password, progress)

    monkeypatch.setattr(library_module, "ingest", racing)
    info = second.add(corpus / NDA)
    assert [d.id for d in first.documents()] == [info.id] and row_counts(db)[0] == 1
    first.close()
    second.close()


@pytest.mark.slow          # embeds whole documents: 15-100 s on 2 cores
def test_a_question_naming_a_document_searches_it_first(corpus, lib):
    """A Chinese question about a named English licence, in a library of Chinese laws:
    their BM25 words crowded the licence's patent clause (p. 2) out of the top 5 until
    the named document was also searched on its own."""
    require_dense()
    for name in ("licenses/apache-2.0.pdf", "licenses/mpl-2.0.pdf", "contracts-zh/labor-contract-law.pdf",
                 "contracts-zh/electronic-signature-law.pdf"):
        lib.add(corpus / name)
    lib.embed()
    hits = lib.search("根据Apache许可证，如果我起诉贡献者侵犯专利，我的专利许可会怎样？", k=5)
    assert [os.path.basename(h.path) for h in hits[:4]] == ["apache-2.0.pdf"] * 4
    assert 2 in [h.page for h in hits if h.path.endswith("apache-2.0.pdf")]     # Section 3


def test_in_a_named_document_its_name_no_longer_matches_every_page(corpus, monkeypatch, lib):
    """Inside the Bonterms DPA, "Bonterms DPA" is on every page's preamble and title:
    searching it ranked the title page near the answer. The name words leave the query."""
    from app.core.search import dense
    monkeypatch.setattr(dense, "available", lambda: False)        # BM25 alone: its words are the point
    dpa = lib.add(corpus / "contracts-en/bonterms-dpa-v1.0.pdf").id
    for name in ("contracts-en/bonterms-cloud-terms-v1.0.pdf", "contracts-en/common-paper-dpa.pdf", NDA,
                 "licenses/apache-2.0.pdf"):
        lib.add(corpus / name)
    assert [h.page for h in lib.search("Bonterms DPA deletion", [dpa])] == [4]   # was [4, 1, 2, 3]
