"""The library facade: add documents, read their pages and chunks, search, chat history."""
from __future__ import annotations

import functools
import json
import sqlite3
import threading
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from app.core import paths
from app.core.db import transaction
from app.core.documents import ocr
from app.core.documents.read_errors import DocumentError
from app.core.documents.ingest import Ingested, ingest
from app.core.documents.pdf import read_file
from app.core.documents.types import Chunk, DocumentInfo, Hit, Page
from app.core.library import schema as store
from app.core.library import table_pass
from app.core.search import (
    dense,
    doc_names,
    expand,
    fts,
    fusion,
    pages,
    queries,
    sentence_vectors,
    tokens,
)
from app.core.textnorm import language


@dataclass(frozen=True)
class Exchange:
    id: int
    doc_ids: tuple[int, ...]
    question: str
    answer_json: str
    created_at: float
    conversation_id: int | None = None


@dataclass(frozen=True)
class ConversationSummary:
    """One conversation about a document set, as a list shows it."""
    id: int
    doc_ids: tuple[int, ...]
    created_at: float
    exchanges: int
    first_question: str         # "" while nothing was asked in it
    last_at: float              # the last answer's time (created_at while empty)


NAMED_SHARE = 0.5   # a named document has at least this share of the best name match
_DOC_COLS = "id, sha256, path, last_path, title, page_count, lang, warnings"



def path_text(path) -> str:
    """The path as the library stores it (SQLite text is UTF-8). A name that is not UTF-8 (Latin-1
    bytes, lone surrogates in Python) is kept with those bytes written \\xe9: readable, and the
    document is indexed instead of failing with UnicodeEncodeError; finding it again by that
    path is then left to its hash."""
    text = str(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")

class Library:
    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else paths.library_path()
        self._con = store.connect(self.path)
        self._lock = threading.RLock()   # one connection shared by GUI and worker threads
        self._names: dict[tuple[str, str], frozenset[str]] = {}   # (title, path) → doc_names.name_terms
        self._vectors = dense.VectorCache()
        self.embedded_sentences = 0     # sentence vectors added by the last embed()

    # --- documents ---------------------------------------------------------------
    def add(self, path: str | Path, password: str | None = None,
            progress: Callable[[int, int], None] | None = None, tables_later: bool = False) -> DocumentInfo:
        """Index a PDF (or return it at once if a file with the same SHA-256 is indexed).
        `tables_later`: searchable sooner, its tables found by the next embed() (table_pass)."""
        copy_of = ocr.copied_from(path)    # our own OCR copy: the scanned document's row, as it is
        if copy_of is not None and self._find(copy_of) is not None:
            return self.get(self._find(copy_of))
        raw = read_file(path)
        known = self._find(raw.sha256)
        if known is not None:
            return self._reopened(known, path_text(raw.path))
        later = {"tables_now": False} if tables_later else {}
        result = ingest(raw, password, progress, **later)   # slow part: outside the write lock
        with self._lock:
            known = self._find(raw.sha256)         # another thread may have won the race
            if known is None:
                try:
                    return self.get(self._write(result))
                except sqlite3.IntegrityError:     # ... or another process (UNIQUE sha256)
                    known = self._find(raw.sha256)
                    if known is None:
                        raise
            return self._reopened(known, path_text(raw.path))

    def _write(self, r: Ingested) -> int:
        """Everything for one document in one transaction: all of it or nothing."""
        con, now = self._con, time.time()
        with transaction(con):
            doc_id = con.execute(
                "INSERT INTO documents(sha256, path, last_path, title, page_count, lang, warnings,"
                " added_at, opened_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (r.raw.sha256, path_text(r.raw.path), path_text(r.raw.path), r.title, len(r.pages), r.lang,
                 json.dumps(r.warnings), now, now)).lastrowid
            searchable = {page for p in r.pieces for page, _ in p.spans}
            con.executemany("INSERT INTO pages VALUES (?,?,?,?,?,?)",
                            [(doc_id, p.number, p.text, p.width, p.height,
                              int(p.number in searchable)) for p in r.pages])
            # Chunk ids chosen here (inside the write lock) so both tables take one executemany.
            # Past every id ever used (sqlite_sequence), not max(id): a removed document's
            # chunk ids are never given to another one (schema v3).
            first = con.execute("SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0),"
                                " coalesce((SELECT max(id) FROM chunks), 0)) + 1").fetchone()[0]
            rows = list(enumerate(r.pieces, start=first))
            con.executemany(
                "INSERT INTO chunks(id, doc_id, ordinal, page_start, page_end, section, heading,"
                " text, spans) VALUES (?,?,?,?,?,?,?,?,?)",
                [(cid, doc_id, p.chunk.ordinal, p.chunk.page_start, p.chunk.page_end,
                  p.chunk.section, p.heading, p.chunk.text, json.dumps(p.spans)) for cid, p in rows])
            fts.add_pieces(con, rows, tokens.index_text(
                f"{r.title} {path_text(r.raw.path.stem).replace('-', ' ')}"))
            table_pass.record(con, doc_id, r.table_pages)
            return doc_id

    def find_sha(self, sha256: str) -> int | None:
        """The id the document with this content has now (None: not in the library)."""
        return self._find(sha256)

    def _find(self, sha256: str) -> int | None:
        with self._lock:
            row = self._con.execute("SELECT id FROM documents WHERE sha256 = ?", (sha256,)).fetchone()
        return row[0] if row else None

    def _reopened(self, doc_id: int, path: str) -> DocumentInfo:
        with self._lock:
            self._con.execute("UPDATE documents SET last_path = ?, opened_at = ? WHERE id = ?",
                              (path, time.time(), doc_id))
        return self.get(doc_id)

    def get(self, doc_id: int) -> DocumentInfo:
        with self._lock:
            row = self._con.execute(f"SELECT {_DOC_COLS} FROM documents WHERE id = ?",
                                    (doc_id,)).fetchone()
        if row is None:
            raise DocumentError(f"document {doc_id} is not in the library")
        return _info(row)

    def documents(self) -> list[DocumentInfo]:
        with self._lock:
            rows = self._con.execute(f"SELECT {_DOC_COLS} FROM documents ORDER BY id").fetchall()
        return [_info(r) for r in rows]

    def remove(self, doc_id: int) -> None:
        with self._lock:
            con = self._con
            with transaction(con):
                con.execute("DELETE FROM chunk_fts WHERE rowid IN "
                            "(SELECT id FROM chunks WHERE doc_id = ?)", (doc_id,))
                con.execute("DELETE FROM exchanges WHERE id IN (SELECT exchange_id FROM "
                            "exchange_docs WHERE doc_id = ?)", (doc_id,))
                con.execute("DELETE FROM conversations WHERE ',' || doc_key || ',' LIKE ?",
                            (f"%,{int(doc_id)},%",))
                con.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    # --- content -----------------------------------------------------------------
    def pages(self, doc_id: int) -> list[Page]:
        with self._lock:
            rows = self._con.execute("SELECT number, text, width, height FROM pages "
                                     "WHERE doc_id = ? ORDER BY number", (doc_id,)).fetchall()
        return [Page(*r) for r in rows]

    def page_text(self, doc_id: int, page: int) -> str:
        with self._lock:
            row = self._con.execute("SELECT text FROM pages WHERE doc_id = ? AND number = ?",
                                    (doc_id, page)).fetchone()
        if row is None:
            raise DocumentError(f"document {doc_id} has no page {page}")
        return row[0]

    def chunks(self, doc_id: int) -> list[Chunk]:
        with self._lock:
            rows = self._con.execute("SELECT ordinal, page_start, page_end, section, text FROM "
                                     "chunks WHERE doc_id = ? ORDER BY ordinal", (doc_id,)).fetchall()
        return [Chunk(*r) for r in rows]

    # --- search ------------------------------------------------------------------
    def search(self, query: str, doc_ids: list[int] | None = None, k: int = 5) -> list[Hit]:
        """Best pages first, at most one hit per (document, page). Scores are BM25, or a
        BM25 + dense fusion (about 0-5) where dense vectors exist. Documents the question
        names are searched on their own as well (doc_names)."""
        if doc_ids is not None and not doc_ids:
            return []
        q, limit = queries.parse_query(query), max(50, 10 * k)
        with self._lock:
            docs = dict(self._con.execute("SELECT id, last_path FROM documents").fetchall())
            names, using = self._all_names(), functools.partial(fts.docs_using, self._con)   # counts kept by fts
            found = self._ranked_chunks(query, q, doc_ids, limit, names, using)
            named = _named(query, doc_ids if doc_ids is not None else list(docs), names, using)
            if named and found:
                found = _merge_named(found, self._ranked_chunks(query, q, list(named), limit, names, using))
            found = expand.expand(self._con, query, q, found, doc_ids)
        return [Hit(doc_id=h.doc_id, path=docs[h.doc_id], page=h.page, score=h.score, text=h.text,
                    section=h.section, page_end=h.page_end) for h in pages.by_page(found)[:k]]

    def _ranked_chunks(self, question: str, q: queries.Query, doc_ids: list[int] | None, limit: int,
                       names: dict[int, frozenset[str]], using: Callable[[str], int]) -> list[fts.ChunkHit]:
        found, q = [], queries.with_backoff(self._con, q, doc_ids)
        if doc_ids is not None:   # words naming every document searched say nothing within them
            drop = doc_names.scope_words(question, names, doc_ids, using)
            found = fts.search_chunks(self._con, replace(q, terms=doc_names.without(q.terms, drop)),
                                        doc_ids, limit)
        if not found:   # the name was the only word these documents share with the question
            found = fts.search_chunks(self._con, q, doc_ids, limit)
        if dense.available():   # BM25 alone unless the optional model is installed
            vectors = dense.search(self._con, question, doc_ids, limit, self._vectors)
            if vectors:
                langs = dict(self._con.execute("SELECT id, lang FROM documents"))
                found = fusion.fuse(self._con, q, found, vectors, language(question), langs)
        return found

    def _all_names(self) -> dict[int, frozenset[str]]:
        """Doc id → the words that name it (doc_names), for every document of the library."""
        out = {}
        for d, title, path in self._con.execute("SELECT id, title, path FROM documents"):
            if (title, path) not in self._names:
                self._names[(title, path)] = doc_names.name_terms(title, path)
            out[d] = self._names[(title, path)]
        return out

    def embed(self, doc_ids: list[int] | None = None,
              progress: Callable[[int, int], None] | None = None,
              cancelled: Callable[[], bool] | None = None) -> int:
        """Compute missing dense vectors (slow: run it in the background): the passages', then
        the sentences' (the evidence cards rank sentences by meaning with them; about as many
        tokens again). Returns how many chunks were embedded (`embedded_sentences`: how many
        sentences); 0 when this machine has no embedding model. `progress` counts both. Raises
        dense.Cancelled when `cancelled()` turns true (finished batches are kept). Tables left
        for later (add's `tables_later`) are found first, so their chunks get vectors too."""
        table_pass.run(self._con, self._lock, doc_ids, cancelled)
        if not dense.available():
            return 0
        passages = dense.missing_count(self._con, self._lock, doc_ids)
        sentences = sentence_vectors.missing_count(self._con, self._lock, doc_ids)
        shifted = (lambda done, total: progress(done, passages + sentences)) if progress else None
        added = dense.embed_missing(self._con, self._lock, doc_ids, shifted, cancelled=cancelled)
        after = (lambda done, total: progress(passages + done, passages + total)) if progress else None
        self.embedded_sentences = sentence_vectors.embed_missing(self._con, self._lock, doc_ids, after, cancelled)
        return added

    def unembedded(self, doc_ids: list[int] | None = None) -> int:
        """How many chunks and sentences still lack a dense vector (0 when there is no
        embedding model); embed()'s progress counts both."""
        if not dense.available():
            return 0
        return (dense.missing_count(self._con, self._lock, doc_ids)
                + sentence_vectors.missing_count(self._con, self._lock, doc_ids))

    def sentence_vectors(self, doc_id: int, page: int) -> dict:
        """Sentence key (sentence_vectors.key) → vector for one page; empty without them."""
        return sentence_vectors.page_vectors(self._con, self._lock, doc_id, page)

    def sentence_vectors_done(self, doc_id: int) -> bool:
        """Has every sentence of the document its vector (the document is marked done)?"""
        return not sentence_vectors.todo_docs(self._con, self._lock, [doc_id])

    def sentence_pages(self, doc_id: int, question: str, k: int) -> list[tuple[int, float]]:
        """(page, cosine): the k pages of the document whose sentences are closest to the
        question (sentence_vectors.best_pages); empty without sentence vectors."""
        return sentence_vectors.best_pages(self._con, self._lock, doc_id, question, k)

    # --- chat history ------------------------------------------------------------
    def add_exchange(self, doc_ids: list[int], question: str, answer_json: str,
                     conversation: int | None = None) -> int | None:
        """Save a finished answer in the history of its documents: in `conversation`, or
        (None) in the set's latest one. A document removed while the answer was being computed
        (`library remove` from another process) drops out of the set, and the answer goes to a
        conversation of what is left; with none left there is no history to keep it in: None,
        nothing raised, so the answer still reaches the user."""
        with self._lock:
            con = self._con
            with transaction(con):
                present = {row[0] for row in con.execute(
                    f"SELECT id FROM documents WHERE id IN ({','.join('?' * len(set(doc_ids)))})",
                    sorted(set(doc_ids)))}
                ids = sorted(present)
                if not ids:
                    return None
                conv_id = self._conversation_for(_doc_key(ids), conversation)
                ex_id = con.execute("INSERT INTO exchanges(doc_key, question, answer_json, created_at,"
                                    " conversation_id) VALUES (?,?,?,?,?)",
                                    (_doc_key(ids), question, answer_json, time.time(), conv_id)).lastrowid
                con.executemany("INSERT INTO exchange_docs VALUES (?,?)", [(ex_id, d) for d in ids])
        return ex_id

    def _conversation_for(self, key: str, wanted: int | None) -> int:
        """`wanted` if it is a conversation about this set, else the set's latest (new if none)."""
        con = self._con
        if wanted is not None and con.execute("SELECT 1 FROM conversations WHERE id = ? AND doc_key = ?",
                                              (wanted, key)).fetchone():
            return wanted
        row = None if wanted is not None else con.execute(
            "SELECT id FROM conversations WHERE doc_key = ? ORDER BY id DESC LIMIT 1", (key,)).fetchone()
        if row:
            return row[0]
        return con.execute("INSERT INTO conversations(doc_key, created_at) VALUES (?,?)",
                           (key, time.time())).lastrowid

    def new_conversation(self, doc_ids: list[int]) -> int:
        """An empty conversation about this set; it becomes the set's latest."""
        with self._lock:
            return self._con.execute("INSERT INTO conversations(doc_key, created_at) VALUES (?,?)",
                                     (_doc_key(doc_ids), time.time())).lastrowid

    def conversations(self, doc_ids: list[int]) -> list[ConversationSummary]:
        """The conversations about exactly this set of documents, the most recently used first."""
        ids = tuple(sorted(set(doc_ids)))
        with self._lock:
            rows = self._con.execute(
                "SELECT c.id, c.created_at, count(e.id), coalesce(max(e.created_at), c.created_at),"
                " (SELECT question FROM exchanges WHERE conversation_id = c.id ORDER BY id LIMIT 1)"
                " FROM conversations c LEFT JOIN exchanges e ON e.conversation_id = c.id"
                " WHERE c.doc_key = ? GROUP BY c.id", (_doc_key(ids),)).fetchall()
        found = [ConversationSummary(r[0], ids, r[1], r[2], r[4] or "", r[3]) for r in rows]
        return sorted(found, key=lambda c: (c.last_at, c.id), reverse=True)

    def exchanges(self, doc_ids: list[int], conversation: int | None = None) -> list[Exchange]:
        """Chat history for exactly this set of documents, oldest first: all of it, or one
        conversation's."""
        ids = tuple(sorted(set(doc_ids)))
        where, args = "doc_key = ?", [_doc_key(ids)]
        if conversation is not None:
            where, args = where + " AND conversation_id = ?", args + [conversation]
        with self._lock:
            rows = self._con.execute("SELECT id, question, answer_json, created_at, conversation_id"
                                     f" FROM exchanges WHERE {where} ORDER BY id", args).fetchall()
        return [Exchange(r[0], ids, r[1], r[2], r[3], r[4]) for r in rows]

    def close(self) -> None:
        with self._lock:
            fts.forget_counts(self._con)
            self._con.close()


def _doc_key(ids) -> str:
    return ",".join(str(i) for i in sorted(set(ids)))


def _info(row) -> DocumentInfo:
    doc_id, sha, path, last_path, title, pages, lang, warnings = row
    return DocumentInfo(id=doc_id, sha256=sha, path=path, title=title, page_count=pages,
                        lang=lang, warnings=tuple(json.loads(warnings)), last_path=last_path)


def _named(question: str, scope: list[int], names: dict[int, frozenset[str]],
           using: Callable[[str], int]) -> dict[int, float]:
    """Documents of the scope that the question names, with their share of the best name
    match; empty when it names none, or all of them alike."""
    if len(scope) < 2:
        return {}
    mentioned = doc_names.mention_scores(question, {d: names[d] for d in scope if d in names}, using)
    named = {d: s for d, s in mentioned.items() if s >= NAMED_SHARE}
    return named if len(named) < len(scope) else {}


def _merge_named(found: list[fts.ChunkHit], within_named: list[fts.ChunkHit]) -> list[fts.ChunkHit]:
    """One ranking from a search of the whole scope and one of the named documents alone,
    each chunk with its better score. The second search finds the named documents' chunks
    where other documents' words crowd them out of the first (a Chinese question about an
    English contract: Chinese clauses win on BM25 library-wide), and its scores, scaled to
    its own best hit, rank them fairly. Also tried: multiplying the named documents' scores
    by 1.25-2: library-wide comparison both@5 0.83 → 0.67, nothing gained."""
    best = {h.chunk_id: h for h in found}
    for h in within_named:
        if h.chunk_id not in best or h.score > best[h.chunk_id].score:
            best[h.chunk_id] = h
    return sorted(best.values(), key=lambda h: -h.score)
