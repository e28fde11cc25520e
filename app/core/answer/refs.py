"""The documents a question is about, and the pages retrieval ranks for it: what the
evidence cards and the answer's prompt both start from."""
from __future__ import annotations

from dataclasses import dataclass

RETRIEVAL_PAGES = 6          # candidate pages in retrieval mode (the time budget takes the best that fit)


@dataclass(frozen=True)
class DocRef:
    """A document as the question sees it: number in the prompt, id in the library, label shown."""
    number: int
    doc_id: int
    label: str                    # the path as the user gave it


def ranked_hits(library, refs: list[DocRef], question: str, per_doc: int | None = None) -> list[tuple[DocRef, object]]:
    """The best pages for the question, each document getting its share (comparisons need
    both), interleaved by rank: what retrieval takes from, best first. Over more documents
    than there are candidate pages no document can have its share: one search over all of
    them ranks their pages against each other (one search per document cost ~8 ms each, 1.7 s
    over 200 documents, and ranked each document's best page first whatever its score)."""
    if len(refs) > RETRIEVAL_PAGES and per_doc is None:
        by_id = {ref.doc_id: ref for ref in refs}
        hits = library.search(question, doc_ids=list(by_id), k=2 * RETRIEVAL_PAGES)
        return [(by_id[h.doc_id], h) for h in hits if h.doc_id in by_id]
    per_doc = per_doc or max(2, RETRIEVAL_PAGES // len(refs))
    ranked = []
    for ref in refs:
        hits = library.search(question, doc_ids=[ref.doc_id], k=per_doc)
        ranked += [(i, ref, h) for i, h in enumerate(hits)]
    ranked.sort(key=lambda t: (t[0], -t[2].score))
    return [(ref, hit) for _, ref, hit in ranked]
