"""The search vectors scoped to some documents: a search over a few documents scores their rows
only, one over most of the library scores every row and keeps theirs (copying most of the
matrix cost more than the product); either way exactly their passages, ranked by cosine."""
from __future__ import annotations

import numpy as np
import pytest

from app.core.search import dense

pytestmark = pytest.mark.skipif(not dense.available(), reason="no embedding model on this machine")


def test_a_search_over_some_or_most_documents_scores_exactly_their_passages(corpus, lib):
    files = ["common-paper-mnda.pdf", "common-paper-baa.pdf", "bonterms-dpa-v1.0.pdf", "common-paper-dpa.pdf"]
    docs = [lib.add(corpus / "contracts-en" / f).id for f in files]
    rows = lib._con.execute("SELECT id, doc_id FROM chunks ORDER BY id").fetchall()
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(len(rows), 384)).astype(np.float16)
    dense.store_vectors(lib._con, lib._lock, [(cid, v) for (cid, _), v in zip(rows, vecs)])
    question = "Who may terminate the agreement?"
    q = dense._query_vector(question)
    cache = dense.VectorCache()
    for scope in ([docs[0]], docs[:3], docs, None):          # a few documents' rows, most of the library, all
        want = sorted(((float(v.astype(np.float32) @ q), cid) for (cid, d), v in zip(rows, vecs)
                       if scope is None or d in scope), reverse=True)[:10]
        got = dense.search(lib._con, question, scope, 10, cache)
        assert [cid for cid, _ in got] == [cid for _, cid in want]
        assert np.allclose([s for _, s in got], [s for s, _ in want], atol=1e-4)
    assert dense.search(lib._con, question, [max(docs) + 1], 10, cache) == []


def test_a_document_whose_vectors_are_not_all_there_is_searched_by_its_words_alone(corpus, lib):
    """While a long document's vectors are computed, its embedded pages would outrank the others
    by their vectors alone (seen: a question on force majeure in the Civil Code got three cards
    from the first pages, the ones embedded so far): its passages take no part in the dense
    search until every one has its vector; the complete documents' still do."""
    docs = [lib.add(corpus / "contracts-en" / f).id for f in ("common-paper-mnda.pdf", "common-paper-dpa.pdf")]
    rows = lib._con.execute("SELECT id, doc_id FROM chunks ORDER BY id").fetchall()
    vecs = np.random.default_rng(3).normal(size=(len(rows), 384)).astype(np.float16)
    half = [cid for cid, d in rows if d == docs[1]][::2]
    dense.store_vectors(lib._con, lib._lock, [(cid, v) for (cid, _), v in zip(rows, vecs) if cid not in half])
    question = "Who may terminate the agreement?"
    cache = dense.VectorCache()
    assert dense.search(lib._con, question, [docs[1]], 10, cache) == []
    for scope in (None, docs):
        got = dense.search(lib._con, question, scope, 50, cache)
        assert got and {d for cid, _ in got for c, d in rows if c == cid} == {docs[0]}
    dense.store_vectors(lib._con, lib._lock, [(cid, v) for (cid, _), v in zip(rows, vecs) if cid in half])
    assert {d for cid, _ in dense.search(lib._con, question, None, 500, cache) for c, d in rows if c == cid} == set(docs)
