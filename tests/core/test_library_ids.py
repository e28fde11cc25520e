"""Ids are never reused, and a document removed while an answer about it was being computed does
not cost the user that answer (issue 32, points 2 and 3's cause)."""
from __future__ import annotations

import sqlite3

from app.core.library import Library
from app.core.library import schema
from tests.support.library_rows import row_counts

NDA = "contracts-en/common-paper-mnda.pdf"
APACHE = "licenses/apache-2.0.pdf"
MPL = "licenses/mpl-2.0.pdf"


def _chunk_ids(db, doc_id: int) -> list[int]:
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT id FROM chunks WHERE doc_id = ? ORDER BY id", (doc_id,))]
    finally:
        con.close()


def test_a_removed_documents_ids_go_to_no_later_document(corpus, tmp_path):
    db = tmp_path / "lib.sqlite"
    lib = Library(db)
    keep = lib.add(corpus / APACHE).id
    gone = lib.add(corpus / NDA).id                  # the newest: max(id)+1 gave its ids away
    gone_chunks = _chunk_ids(db, gone)
    lib.remove(gone)
    new = lib.add(corpus / MPL).id
    assert new > gone > keep
    assert min(_chunk_ids(db, new)) > max(gone_chunks)
    lib.close()


def _v2_copy(source, db) -> None:
    """A file as the last release wrote it: schema v1+v2, the rows of `source`."""
    con = sqlite3.connect(db, isolation_level=None)
    for script in schema.MIGRATIONS[:2]:
        for statement in schema._statements(script):
            con.execute(statement)
    con.execute("PRAGMA user_version=2")
    con.execute("ATTACH ? AS src", (str(source),))
    for table in ("documents", "pages", "chunks", "exchange_docs"):
        con.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")
    con.execute("INSERT INTO exchanges SELECT id, doc_key, question, answer_json, created_at FROM src.exchanges")
    con.execute("INSERT INTO chunk_fts(rowid, body, section, heading, title) "
                "SELECT rowid, body, section, heading, title FROM src.chunk_fts")
    con.execute("INSERT INTO chunk_vectors SELECT id, 'm', x'00' FROM chunks")
    con.execute("DETACH src")
    con.close()


def test_a_v2_library_migrates_keeping_everything(corpus, tmp_path):
    source = Library(tmp_path / "source.sqlite")
    a = source.add(corpus / APACHE).id
    b = source.add(corpus / NDA).id
    source.add_exchange([a, b], "q", "{}")
    source.close()
    db = tmp_path / "lib.sqlite"
    _v2_copy(tmp_path / "source.sqlite", db)
    before = row_counts(db)

    lib = Library(db)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == len(schema.MIGRATIONS) == 5
    assert con.execute("SELECT count(*) FROM sentence_vectors").fetchone()[0] == 0     # v5: computed by the next embed()
    assert "AUTOINCREMENT" in con.execute("SELECT sql FROM sqlite_master WHERE name = 'documents'").fetchone()[0]
    assert con.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == before[2]
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert row_counts(db) == before and len(lib.exchanges([a, b])) == 1
    assert lib.search("Derivative Works", doc_ids=[a])
    lib.remove(b)
    assert lib.add(corpus / MPL).id > b
    lib.close()


def test_an_answer_about_a_document_removed_meanwhile_is_kept(corpus, tmp_path):
    db = tmp_path / "lib.sqlite"
    asking, other = Library(db), Library(db)          # two connections, as `ask` and `library remove`
    a = asking.add(corpus / APACHE).id
    b = asking.add(corpus / NDA).id
    other.remove(a)                                   # while the answer was being computed
    saved = asking.add_exchange([a, b], "what is licensed?", '{"answer": "x"}')
    assert saved is not None and [e.question for e in asking.exchanges([b])] == ["what is licensed?"]
    assert asking.add_exchange([a], "and this?", "{}") is None      # nothing left to file it under
    other.remove(b)
    assert asking.exchanges([b]) == []
    asking.close()
    other.close()
