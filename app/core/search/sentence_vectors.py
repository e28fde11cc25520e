"""Sentence vectors: the search's own embedder (multilingual-e5-small) over every sentence of
every page, as the evidence cards split them, so the cards can rank a page's sentences by
meaning as well as by words — a paraphrase ("end the deal whenever we like" for "terminate for
convenience") or a question in the other language finds its sentence.

Computed after the passage vectors, in the same background job and scheduler turns, and
stored per (document, page, sentence text): a sentence is looked up by the SHA-1 of its text,
so a change in how pages are split only leaves some sentences without a vector (ranked by
words alone), never gives one the wrong vector. A document is marked done when all of its
sentences have vectors, so "is anything left?" does not split every page again.
"""
from __future__ import annotations

import hashlib
import sqlite3
from typing import Callable

from app.core import cpu_work
from app.core.db import transaction
from app.core.search import dense
from app.core.search.page_text import PageText
from app.core.search.sentences import in_context

BATCH = 8       # sentences per scheduler turn (about one passage's worth of tokens)
# Raised whenever the pages are split into sentences differently: a library's documents are then
# looked over again once and only their new sentences embedded (vectors are keyed by text).
SPLIT = 4
# Raised whenever what a sentence's vector is made of changes (sentences.in_context): the vectors
# are stored under a tag of their own, so the old ones are never read and each document is embedded anew.
CONTEXT = 1


def tag() -> str:
    """The stored vectors' tag: the embedder and what its sentences' texts hold."""
    return f"{dense.MODEL} context {CONTEXT}"


def _done_mark() -> str:
    return f"{tag()} split {SPLIT}"


def key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8", "replace")).digest()[:8]


def doc_sentences(con: sqlite3.Connection, lock, doc_id: int) -> list[tuple[int, str, str]]:
    """(page, sentence, the text embedded for it) for every sentence of the document worth a
    vector, in order (the embedded text: the sentence in its context, sentences.in_context)."""
    with lock:
        pages = dict(con.execute("SELECT number, text FROM pages WHERE doc_id = ?", (doc_id,)).fetchall())
    reader = PageText(lambda p: pages.get(p, ""), max(pages, default=0))
    out, seen = [], set()
    for page in sorted(pages):
        sentences = reader.sentences(page)
        for i, s in enumerate(sentences):
            if not s.heading and s.text.strip() and (page, s.text) not in seen:
                seen.add((page, s.text))
                out.append((page, s.text, in_context(sentences, i)))
    return out


def todo_docs(con: sqlite3.Connection, lock, doc_ids: list[int] | None) -> list[int]:
    sql = ("SELECT d.id FROM documents d WHERE NOT EXISTS (SELECT 1 FROM sentence_vector_docs s"
           " WHERE s.doc_id = d.id AND s.model = ?)")
    args: list = [_done_mark()]
    if doc_ids is not None:
        sql += f" AND d.id IN ({','.join('?' * len(doc_ids))})"
        args += list(doc_ids)
    with lock:
        return [r[0] for r in con.execute(sql + " ORDER BY d.id", args)]


def _missing(con: sqlite3.Connection, lock, doc_id: int) -> list[tuple[int, str, str]]:
    with lock:
        have = {(p, bytes(k)) for p, k in con.execute(
            "SELECT page, key FROM sentence_vectors WHERE doc_id = ? AND model = ?", (doc_id, tag()))}
    return [item for item in doc_sentences(con, lock, doc_id) if (item[0], key(item[1])) not in have]


def missing_count(con: sqlite3.Connection, lock, doc_ids: list[int] | None) -> int:
    """Sentences still without a vector (documents not yet marked done)."""
    return sum(len(_missing(con, lock, d)) for d in todo_docs(con, lock, doc_ids))


def embed_missing(con: sqlite3.Connection, lock, doc_ids: list[int] | None,
                  progress: Callable[[int, int], None] | None = None,
                  cancelled: Callable[[], bool] | None = None) -> int:
    """Vectors for the sentences that have none; returns how many were added. Each batch is
    one scheduler turn and one short transaction (a cancelled run keeps what it did)."""
    docs = [(d, _missing(con, lock, d)) for d in todo_docs(con, lock, doc_ids)]
    total, done = sum(len(todo) for _, todo in docs), 0
    model = dense._embedder()
    for doc_id, todo in docs:
        for start in range(0, len(todo), BATCH):
            with cpu_work.scheduler.turn(dense.JOB, cancelled):
                if cancelled and cancelled():
                    raise dense.Cancelled(f"stopped after {done} of {total} sentences")
                part = todo[start:start + BATCH]
                with dense._run:
                    vectors = model.passage([embedded for _, _, embedded in part])
                _store(con, lock, doc_id, [(p, t, v) for (p, t, _), v in zip(part, vectors)])
            done += len(part)
            if progress:
                progress(done, total)
        _mark_done(con, lock, doc_id)
    return done


def _store(con: sqlite3.Connection, lock, doc_id: int, items: list[tuple[int, str, object]]) -> None:
    """Saved only while the document is still in the library (removed meanwhile: dropped)."""
    import numpy as np
    rows = [(doc_id, p, key(t), tag(), np.asarray(v, dtype=np.float16).tobytes(), doc_id)
            for p, t, v in items]
    with lock:
        with transaction(con):
            con.executemany("INSERT OR REPLACE INTO sentence_vectors SELECT ?,?,?,?,? WHERE EXISTS "
                            "(SELECT 1 FROM documents WHERE id = ?)", rows)


def _mark_done(con: sqlite3.Connection, lock, doc_id: int) -> None:
    with lock:
        con.execute("DELETE FROM sentence_vector_docs WHERE doc_id = ?", (doc_id,))
        con.execute("DELETE FROM sentence_vectors WHERE doc_id = ? AND model != ?", (doc_id, tag()))
        con.execute("INSERT OR REPLACE INTO sentence_vector_docs SELECT ?, ? WHERE EXISTS "
                    "(SELECT 1 FROM documents WHERE id = ?)", (doc_id, _done_mark(), doc_id))


def page_vectors(con: sqlite3.Connection, lock, doc_id: int, page: int) -> dict[bytes, object]:
    """Sentence key → float32 vector, for one page (empty without vectors)."""
    import numpy as np
    with lock:
        rows = con.execute("SELECT key, vec FROM sentence_vectors WHERE doc_id = ? AND page = ? AND model = ?",
                           (doc_id, page, tag())).fetchall()
    return {bytes(k): np.frombuffer(v, dtype=np.float16).astype(np.float32) for k, v in rows}


def best_pages(con: sqlite3.Connection, lock, doc_id: int, question: str, k: int) -> list[tuple[int, float]]:
    """(page, cosine) of the document's k pages holding the sentences closest to the question
    of all its sentences, best first: the pages a question in the other language is about,
    where the search's passages share no word with it (empty without sentence vectors)."""
    import numpy as np
    with lock:
        rows = con.execute("SELECT page, vec FROM sentence_vectors WHERE doc_id = ? AND model = ?",
                           (doc_id, tag())).fetchall()
    if not rows or k <= 0:
        return []
    matrix = np.frombuffer(b"".join(v for _, v in rows), dtype=np.float16).reshape(len(rows), -1)
    scores = matrix.astype(np.float32) @ dense._query_vector(question)
    best: dict[int, float] = {}
    for i in np.argsort(-scores, kind="stable"):
        page = rows[i][0]
        if page not in best:
            best[page] = float(scores[i])
            if len(best) == k:
                break
    return list(best.items())


def similarity(question: str, vectors: list) -> list[float | None]:
    """Cosine of each vector (None: none stored) with the question's query vector."""
    import numpy as np
    present = [v for v in vectors if v is not None]
    if not present:
        return [None] * len(vectors)
    q = dense._query_vector(question)
    scores = iter((np.stack(present) @ q).tolist())
    return [next(scores) if v is not None else None for v in vectors]
