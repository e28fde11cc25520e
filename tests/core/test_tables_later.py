"""Issue 31: a table-heavy file is searchable before its tables are found (find_tables costs ten
times the page's text); the background pass (Library.embed, first) then finds the same tables,
searchable by words, a question pre-empting it like any background work."""
from __future__ import annotations

from app.core.documents import tables
from app.core.library import Library, table_pass

FILES = ["contracts-en/bonterms-cloud-terms-v1.0.pdf", "contracts-en/bonterms-dpa-v1.0.pdf",
         "contracts-en/common-paper-mnda.pdf"]


def table_chunks(lib, doc_id):
    return sorted(c.text for c in lib.chunks(doc_id) if c.text.startswith(tables.MARKER))


def test_tables_found_later_are_the_tables_found_at_once(corpus, tmp_path):
    now, later = Library(tmp_path / "now.sqlite"), Library(tmp_path / "later.sqlite")
    for name in FILES:
        a = now.add(corpus / name)
        b = later.add(corpus / name, tables_later=True)
        expected = table_chunks(now, a.id)
        assert expected and not table_chunks(later, b.id)          # searchable, tables not yet
        assert table_pass.pending(later._con, later._lock, [b.id])
        later.embed([b.id])
        assert table_chunks(later, b.id) == expected
        assert not table_pass.pending(later._con, later._lock, [b.id])
    hits = later.search("Schedule 2 Technical and Organizational Measures", k=5)
    assert any(h.text.startswith(tables.MARKER) for h in hits)
    now.close()
    later.close()


def test_a_question_pauses_the_table_pass(corpus, lib):
    import threading
    import time

    from app.core import cpu_work
    info = lib.add(corpus / FILES[1], tables_later=True)
    with cpu_work.scheduler.foreground("answering"):
        worker = threading.Thread(target=table_pass.run, args=(lib._con, lib._lock, [info.id]))
        worker.start()
        time.sleep(2.0)
        assert not table_chunks(lib, info.id) and worker.is_alive()
        assert "table detection" in cpu_work.scheduler.describe()
    worker.join(timeout=120)
    assert table_chunks(lib, info.id)
