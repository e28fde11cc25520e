"""The pages of a document in the other language than the question, found word for word
through the dictionary (search/bridge.py): a Chinese law's sentences read in English for an
English question, a Chinese question read in English for an English contract. They join the
pages the sentence vectors find, and stand alone where there are none yet (a document just
opened, whose vectors are still being computed) or at all (a machine without the embedder):
the search itself has no shared word to go by."""
from __future__ import annotations

from app.core import textnorm
from app.core.answer.evidence import per_document
from app.core.answer.evidence.scoring import TermWeights, question_terms
from app.core.search.evidence import Words
from app.core.search import bridge

_read: per_document.PerDocument[tuple[list[int], list[Words]]] = per_document.PerDocument()


def warm(library, info) -> None:
    """Read the document's sentences (and gloss a Chinese one) now, not at the first question:
    ~0.9 s for a 44-page law, then ~50 ms a question."""
    if bridge.available():
        _doc_words(library, info)


def bridged_pages(library, info, question: str, k: int) -> list[tuple[int, float]]:
    """(page, share) of the k pages of the document `info` holding the sentences that share most
    of the question's words through the dictionary, best first (none without the dictionary or a
    shared word)."""
    if k <= 0 or not bridge.available():
        return []
    pages, words = _doc_words(library, info)
    asked = bridge.english_of(question) if textnorm.language(question) == "zh" else question
    weights = TermWeights(question_terms(asked), words)
    best: dict[int, float] = {}
    for page, w in zip(pages, words):
        best[page] = max(best.get(page, 0.0), weights.share(w))
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return [(page, share) for page, share in ranked[:k] if share > 0]


def _doc_words(library, info) -> tuple[list[int], list[Words]]:
    """Each sentence's page and words, read in English (a Chinese document's through its
    glosses), once per document (per_document)."""
    def read() -> tuple[list[int], list[Words]]:
        sentences = per_document.sentences(library, info)
        glossed = info.lang == "zh"
        return ([p for p, _ in sentences],
                [Words.of(bridge.english_of(t) if glossed else t) for _, t in sentences])
    return _read.get(info, read)
