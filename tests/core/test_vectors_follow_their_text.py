"""Issue 32 defect 3: search vectors computed for document A must never land on document B's
chunks. The to-do list is read once; A removed and B indexed meanwhile got A's chunk ids (ids
were reused), and A's vectors were stored under them, for good."""
from __future__ import annotations

import numpy as np
import pytest

from app.core.search import dense

pytestmark = pytest.mark.skipif(not dense.available(), reason="no embedding model on this machine")


def test_vectors_computed_for_a_removed_document_do_not_land_on_the_next_one(corpus, lib):
    a = lib.add(corpus / "contracts-en" / "common-paper-mnda.pdf")
    swapped = []

    def progress(done: int, total: int) -> None:
        if not swapped:                                 # after A's first batch: A goes, B comes
            lib.remove(a.id)
            swapped.append(lib.add(corpus / "contracts-en" / "common-paper-baa.pdf"))
    lib.embed([a.id], progress=progress)
    b = swapped[0]
    con = lib._con
    rows = con.execute("SELECT c.text, v.vec FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id "
                       "WHERE c.doc_id = ?", (b.id,)).fetchall()
    model = dense._embedder()
    for text, vec in rows:
        stored = np.frombuffer(vec, dtype=np.float16).astype(np.float32)
        own = np.asarray(model.passage([text, text])[0], dtype=np.float32)
        assert float(stored @ own) > 0.99, "a chunk of B carries a vector computed from another text"
