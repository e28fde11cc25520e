"""The pages of a document in the other language than the question, found word for word
through the dictionary (search/bridge.py): a Chinese law's sentences read in English for an
English question, a Chinese question read in English for an English contract. They join the
pages the sentence vectors find, and stand alone where there are none yet (a document just
opened, whose vectors are still being computed) or at all (a machine without the embedder):
the search itself has no shared word to go by."""
from __future__ import annotations

from app.core import textnorm
from app.core.answer.evidence.scoring import TermWeights, Words, question_terms
from app.core.search import bridge
from app.core.search.page_text import PageText


def bridged_pages(library, doc_id: int, page_count: int, question: str, k: int) -> list[tuple[int, float]]:
    """(page, share) of the k pages holding the sentences that share most of the question's
    words through the dictionary, best first (none without the dictionary or a shared word)."""
    if k <= 0 or not bridge.available():
        return []
    reader = PageText(lambda p: library.page_text(doc_id, p), page_count)
    sentences = [(p, s.text) for p in range(1, page_count + 1) for s in reader.sentences(p) if not s.heading]
    if textnorm.language(question) == "zh":        # an English document: the question in English
        terms, words = question_terms(bridge.english_of(question)), [Words.of(t) for _, t in sentences]
    else:                                          # a Chinese document: its sentences in English
        terms, words = question_terms(question), [Words.of(bridge.english_of(t)) for _, t in sentences]
    weights = TermWeights(terms, words)
    best: dict[int, float] = {}
    for (page, _), w in zip(sentences, words):
        best[page] = max(best.get(page, 0.0), weights.share(w))
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return [(page, share) for page, share in ranked[:k] if share > 0]
