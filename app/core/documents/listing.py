"""The library as a list of documents (CLI `library list`, the window's library panel),
and forgetting one with everything kept for it."""
from __future__ import annotations

import sqlite3
import time

from app.core.documents import ocr
from app.core.documents.read_errors import DocumentError


def document_rows(lib) -> list[dict]:
    """One row per document, oldest first: id, title, pages, language, added, path, warnings."""
    added = _query(lib, "SELECT id, added_at FROM documents")
    added = dict(added)
    return [{"id": d.id, "title": d.title, "pages": d.page_count, "lang": d.lang,
             "added": time.strftime("%Y-%m-%d %H:%M", time.localtime(added.get(d.id, 0))),
             "added_at": added.get(d.id, 0.0), "path": d.last_path or d.path,
             "sha256": d.sha256, "warnings": list(d.warnings)} for d in lib.documents()]


def remove_document(lib, doc_id: int, on_wait=None) -> dict:
    """Delete the document with its chat history and cached state (search vectors go with
    its chunks; the OCR copy is deleted here); returns what went. DocumentError if unknown.
    Answers under way on it (this process or another) finish first: `on_wait` is told."""
    from app.core.documents import doc_locks
    info = lib.get(doc_id)
    with doc_locks.removing(info.sha256, on_wait):
        exchanges = _query(lib, "SELECT count(*) FROM exchange_docs WHERE doc_id = ?", doc_id)[0][0]
        lib.remove(doc_id)
    copy = ocr.searchable_copy(info.sha256)
    if copy is not None:
        copy.unlink(missing_ok=True)
    return {"id": doc_id, "title": info.title, "exchanges_removed": exchanges,
            "ocr_copy_removed": copy is not None}


def _query(lib, sql: str, *params) -> list[tuple]:
    """A read on its own read-only connection (the Library's is private to it)."""
    con = sqlite3.connect(f"{read_only_uri(lib.path)}", uri=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def read_only_uri(path) -> str:
    """A `file:` URI for SQLite with the path quoted: a folder named with '#', '?' or '%' was cut
    there (SQLite then opened, and created, a file outside the app's folder)."""
    from pathlib import Path
    from urllib.parse import quote
    return f"file:{quote(Path(path).resolve().as_posix(), safe='/')}?mode=ro"


__all__ = ["DocumentError", "document_rows", "remove_document"]
