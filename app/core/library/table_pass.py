"""Tables found after a document is searchable: the background pass before its search vectors.

PyMuPDF's find_tables costs ~0.3 s a ruled page on 2 cores (its Python builds one dict per
character), ten times reading the page's text: a table-heavy file became searchable at 0.07×
the speed of bare text extraction. So ingestion only lists the ruled pages (~10 ms a page,
kept here until done), and this pass — run by Library.embed, first, so the table chunks get
their vectors too — finds their tables, one page a turn of the CPU scheduler, and adds the
table chunks in one transaction (BM25 and the vectors see them from then on).

The list lives in its own table, created on first use (not a schema version: an older app
simply never defers). A removed document takes its list with it (foreign key).
"""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable

from app.core import cpu_work
from app.core.cancel import Cancel
from app.core.db import transaction
from app.core.documents import tables
from app.core.search import fts, tokens

JOB = "table detection"
CANCEL_LOOK_S = 0.25   # how often a plain cancel callable is looked at while the child runs
_SOURCE_ROOT = Path(__file__).resolve().parents[3]   # so `-m app…` imports this checkout
_DDL = ("CREATE TABLE IF NOT EXISTS pending_tables ("
        " doc_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,"
        " pages TEXT NOT NULL)")    # JSON [page, …]: ruled pages not yet looked at


def record(con: sqlite3.Connection, doc_id: int, pages: list[int]) -> None:
    """Called in the document's write transaction (all of it or nothing)."""
    if pages:
        con.execute(_DDL)
        con.execute("INSERT OR REPLACE INTO pending_tables VALUES (?, ?)", (doc_id, json.dumps(pages)))


def pending(con: sqlite3.Connection, lock, doc_ids: list[int] | None) -> dict[int, list[int]]:
    with lock:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'pending_tables'").fetchone():
            return {}
        rows = con.execute("SELECT doc_id, pages FROM pending_tables").fetchall()
    return {d: json.loads(p) for d, p in rows if doc_ids is None or d in doc_ids}


def run(con: sqlite3.Connection, lock, doc_ids: list[int] | None,
        cancelled: Callable[[], bool] | None = None) -> int:
    """Find the tables of the documents' pending pages; returns the table chunks added. A
    document whose file is gone or changed is dropped from the list (nothing to read)."""
    added = 0
    for doc_id, pages in pending(con, lock, doc_ids).items():
        if cancelled and cancelled():
            break
        found = _find(con, lock, doc_id, pages, cancelled)
        if found is None:
            continue                       # cancelled mid-way: the list stays for the next run
        added += _store(con, lock, doc_id, found)
    return added


def _find(con, lock, doc_id: int, pages: list[int], cancelled) -> list[tables.Table] | None:
    with lock:
        row = con.execute("SELECT sha256, path, last_path FROM documents WHERE id = ?", (doc_id,)).fetchone()
    if row is None:
        return []
    sha, *places = row
    for place in dict.fromkeys(p for p in reversed(places) if p):
        try:
            if _sha256(place) != sha:
                continue                   # another file by now
        except Exception:  # noqa: BLE001 - moved or unreadable: try the other path
            continue
        return _detect(place, pages, cancelled)
    return []


def _detect(path: str, pages: list[int], cancelled) -> list[tables.Table] | None:
    """The tables of `pages`, found in a child process (table_child says why) during one turn
    of the CPU scheduler; a question (or more urgent work) arriving meanwhile stops the child,
    and the pages are read again at the next turn. None when cancelled."""
    if getattr(sys, "frozen", False):       # a bundle has no `-m`: in this process
        from app.core.documents.table_child import tables_of
        with cpu_work.scheduler.turn(JOB, cancelled):
            found = tables_of(path, pages)
        return [tables.Table(t["page"], tuple(t["lines"])) for t in found]
    argv = [sys.executable, "-m", "app.core.documents.table_child", path, json.dumps(pages)]
    while True:
        with cpu_work.scheduler.turn(JOB, cancelled) as unit:
            if cancelled and cancelled():
                return None
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    cwd=_SOURCE_ROOT, text=True, encoding="utf-8")
            out = _wait(proc, unit.cut, cancelled)
        if out is not None:
            try:
                return [tables.Table(t["page"], tuple(t["lines"])) for t in json.loads(out or "[]")]
            except (ValueError, KeyError, TypeError):   # the child failed: no tables, no retry
                return []


def _wait(proc: subprocess.Popen, cut: Cancel, cancelled) -> str | None:
    """The child's output, or None when it was stopped: at once when the scheduler cuts its
    turn (a question or more urgent work waits), or within CANCEL_LOOK_S of `cancelled()`
    (a plain callable, so only looked at)."""
    wake = threading.Event()
    unlink = cut.link(wake)
    watcher = threading.Thread(target=_stop_when_told, args=(proc, cut, wake, cancelled), daemon=True)
    watcher.start()
    try:
        out = proc.communicate()[0]
    finally:
        unlink()
        wake.set()
        watcher.join()
    return None if proc.returncode and (cut.is_set() or (cancelled and cancelled())) else out


def _stop_when_told(proc: subprocess.Popen, cut: Cancel, wake: threading.Event, cancelled) -> None:
    while proc.poll() is None:
        wake.wait(CANCEL_LOOK_S if cancelled else None)
        if proc.poll() is None and (cut.is_set() or (cancelled and cancelled())):
            proc.kill()
            return


def _sha256(path: str) -> str:
    from app.core.documents.pdf import read_file
    return read_file(path).sha256


def _store(con, lock, doc_id: int, found: list[tables.Table]) -> int:
    with lock:
        with transaction(con):
            row = con.execute("SELECT title, path, coalesce((SELECT max(ordinal) + 1 FROM chunks "
                              "WHERE doc_id = d.id), 0) FROM documents d WHERE id = ?", (doc_id,)).fetchone()
            con.execute("DELETE FROM pending_tables WHERE doc_id = ?", (doc_id,))
            if row is None or not found:
                return 0
            title, path, first = row
            rows = []
            for piece in tables.pieces(found, first_ordinal=first):
                c = piece.chunk
                cid = con.execute("INSERT INTO chunks(doc_id, ordinal, page_start, page_end, section, heading,"
                                  " text, spans) VALUES (?,?,?,?,?,?,?,?)",
                                  (doc_id, c.ordinal, c.page_start, c.page_end, c.section, piece.heading,
                                   c.text, json.dumps(piece.spans))).lastrowid
                rows.append((cid, piece))
            con.execute("UPDATE pages SET searchable = 1 WHERE doc_id = ? AND number IN (%s)"
                        % ",".join("?" * len(found)), (doc_id, *[t.page for t in found]))
            stem = Path(path).stem
            fts.add_pieces(con, rows, tokens.index_text(f"{title} {stem.replace('-', ' ')}"))
            return len(rows)
